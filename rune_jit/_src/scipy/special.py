"""The implementation of rune_jit.scipy.special (its docstring is the public module's)."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable

import numpy as np

from .. import numpy as rnp
from ..ops import elementwise as ew
from ..control_flow import custom_jvp
from ..control_flow.custom import rules_when_needed
from ..ops.elementwise import GILES_64
from . import lgamma
from .digamma import digamma as digamma_float64
from .double_double import fma_horner as _fma_horner
from .lgamma import BERNOULLI, LOG_SQRT_2PI, SHIFT, sinpi_abs
from ..numpy._core import (accept, broadcast, broadcast_shapes, dtype_weak, float_operands,
                           shape_of, to_dtype)

F64, F32 = np.dtype(np.float64), np.dtype(np.float32)
SQRT1_2 = 1 / math.sqrt(2)
SQRT1_2_LO = float(Decimal(1) / Decimal(2).sqrt() - Decimal(SQRT1_2))  # 1/sqrt(2) - SQRT1_2


def _special(name: str, nargs: int = 1, float32_first: bool = False,
             pass_dtype: bool = False) -> Callable:
    """A decorator: fn(*float64 operands, broadcast) as SciPy's `name`, its result in
    the dtype of SciPy's loop for them: float32's or float64's, whichever comes first
    (float64's unless `float32_first`) of those the operands cast to safely, unless the
    operands are of the other's dtype. `pass_dtype`: fn also takes that dtype (`dtype=`),
    for a float32 result that needs fewer steps."""
    where = f"rune_jit.scipy.special.{name}"
    loops = (F32, F64) if float32_first else (F64, F32)

    def deco(fn: Callable) -> Callable:
        def f(*xs: Any) -> Any:
            if len(xs) != nargs:
                raise TypeError(f"{where} takes {nargs} argument(s), got {len(xs)}")
            out = _loop_dtype([accept(x, where) for x in xs], loops)
            xs = float_operands(*xs, where=where)
            ys = broadcast(*[to_dtype(x, F64) for x in xs], where=where)
            return to_dtype(fn(*ys, **({"dtype": out} if pass_dtype else {})), out)

        f.__name__, f.__qualname__, f.__doc__ = name, name, fn.__doc__
        return f

    return deco


def _loop_dtype(xs: list, loops: tuple) -> np.dtype:
    """NumPy's loop search for SciPy's ufuncs: the loop of the operands' dtype if they all
    have one, else the first loop every operand casts to safely. (A Python float counts
    as a float64 here, not as a weak scalar: xlogy(float32 array, 2.0) is float64.)"""
    strong = {d for d, _ in map(dtype_weak, xs)}
    if len(strong) == 1 and next(iter(strong)) in loops:
        return next(iter(strong))
    return next((t for t in loops if all(np.can_cast(d, t, "safe") for d in strong)), F64)


def _where(c, x, y):
    return rnp.where(c, x, y)


# ------------------------------------------------------------- error function and normal


@_special("erf")
def erf(x):
    """The error function.

    >>> print(np.round(erf(np.array([0.0, 0.5, 3.0])), 6))
    [0.       0.5205   0.999978]
    """
    return ew.erf(x)


@_special("erfc")
def erfc(x):
    """1 - erf(x), accurate where it is small (libm's erfc in compiled code).

    >>> print(erfc(10.0))
    2.088487583762545e-45
    """
    return ew.erfc(x)


@_special("erfinv", float32_first=True, pass_dtype=True)
def erfinv(y, dtype=F64):
    """The inverse of erf: Giles' polynomials in w = -log(1 - y²) (1 - y² computed as
    (1 - |y|)(1 + |y|) near ±1, where that is exact), then one Newton step on a residual
    computed to a few bits past the last (docs/accuracy.md): within 1 ulp. erfinv(±1) is
    ±inf, nan outside [-1, 1], and erfinv(-0.0) is 0.0, as SciPy's.

    >>> print(np.round(erfinv(np.array([0.0, 0.5, -1.0])), 6).tolist())
    [0.0, 0.476936, -inf]
    """
    # float32's result is Giles' float64 polynomials' rounded (within 2^-50 of exact)
    return (_erfinv_rule if dtype == F64 else _erfinv_giles_rule)(y)


def _erfinv(y, newton: bool = True):
    a = rnp.abs(y)
    inside = a < 1
    s = _where(inside, a, 0.0)
    w = _where(s < 0.5, -rnp.log1p(-s * s), -rnp.log((1.0 - s) * (1.0 + s)))
    x = s * _giles(w)
    x = _erfinv_newton(s, x) if newton else x
    x = _where(a == 0, 0.0, rnp.copysign(x, y))  # SciPy's erfinv(-0.0) is +0.0
    return _where(inside, x, _where(a == 1, rnp.copysign(np.inf, y), np.nan))


ERFINV_Q = (  # tools/taylor_special.py: erf(a) / a - 1 in z = a², z <= 1/4
    9.422759064650411e-11, -1.2290555301717928e-09, 1.4807192815879218e-08,
    -1.6365844691234924e-07, 1.6462114365889248e-06, -1.492565035840625e-05,
    0.00012055332981789664, -0.0008548327023450853, 0.005223977625442188,
    -0.026866170645131252, 0.11283791670955126, -0.37612638903183754, 0.1283791670955126
)


def _erfinv_newton(s, a):
    """a + (s - erf a) / erf'(a) for 0 <= s < 1 and a within a few ulps of erfinv(s): the
    residual s - erf a is what limits the result, so it is not erf's rounded value. Below
    a = 1/2, erf a = a + a Q(a²) (Q a Taylor series: tools/taylor_special.py) makes it
    (s - a) - a Q(a²), the first difference exact (a and s are within a factor 2 of each
    other, Sterbenz) and the rest one fused multiply-add; past it, s - erf a = erfc a - (1 - s), 1 - s exact
    and erfc accurate to its last bit relative to itself. (Past 1/2 the first form's
    rounding, times 1/erf'(a) = 2.3 at a = 1, would cost an ulp.)"""
    near = a < 0.5
    small = _where(near, a, 0.0)
    q = _fma_horner(small * small, ERFINV_Q)
    residual_near = ew.fma(-small, q, s - small)
    far = _where(near, 0.5, a)
    residual_far = ew.erfc(far) - (1.0 - s)
    residual = _where(near, residual_near, residual_far)
    return a + residual * (math.sqrt(math.pi) / 2) * rnp.exp(a * a)


@_special("ndtr")
def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt(2)): relative accuracy in the left tail.

    >>> print(np.round(ndtr(np.array([-1.0, 0.0, 1.0])), 6))
    [0.158655 0.5      0.841345]
    """
    return _ndtr(x)


def _ndtr(x):
    """0.5 erfc(z), z = -x / sqrt(2) carried as zh + zl (zh rounded, zl its error, from a
    fused multiply-add and the constant's own error): erfc(zh + zl) = erfc(zh) - 2 / sqrt(pi)
    exp(-zh²) zl to first order. Without zl, the rounding of z alone costs x² ulps."""
    zh = ew.mul(x, np.float64(-SQRT1_2))
    zl = ew.add(ew.fma(x, np.float64(-SQRT1_2), ew.neg(zh)), ew.mul(x, np.float64(-SQRT1_2_LO)))
    slope = ew.mul(np.float64(2 / math.sqrt(math.pi)), ew.exp(ew.neg(ew.mul(zh, zh))))
    return 0.5 * ew.sub(ew.erfc(zh), ew.mul(slope, zl))


LOW_TAIL = -20.0  # below: the asymptotic series of log_ndtr


@_special("log_ndtr")
def log_ndtr(x):
    """log(ndtr(x)), accurate in both tails: log1p(-ndtr(-x)) for x > 0, the asymptotic
    series of the Mills ratio below -20 (log_ndtr(-40) is -804.6084420137538).

    >>> print(np.round(log_ndtr(np.array([-40.0, 0.0])), 8).tolist())
    [-804.60844201, -0.69314718]
    """
    # each branch reads arguments it is accurate (and finite) at, so that the other
    # branch's derivative, selected away, is never inf * 0
    pos = _where(x > 0, x, 0.0)
    mid = _where((x <= 0) & (x >= LOW_TAIL), x, LOW_TAIL)
    low = _where(x < LOW_TAIL, x, LOW_TAIL)
    right = rnp.log1p(-_ndtr(-pos))
    middle = rnp.log(_ndtr(mid))
    left = _log_ndtr_asymptotic(low)
    return _where(x > 0, right, _where(x >= LOW_TAIL, middle, left))


def _log_ndtr_asymptotic(x, terms: int = 12):
    """-x²/2 - log(-x) - log(sqrt(2 pi)) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    r = 1.0 / (x * x)
    s, term = 1.0, 1.0
    for n in range(1, terms + 1):
        term = term * (-(2 * n - 1)) * r
        s = s + term
    return -0.5 * x * x - rnp.log(-x) - LOG_SQRT_2PI + rnp.log(s)


@_special("ndtri", float32_first=True)
def ndtri(p):
    """The inverse of ndtr (quantiles of the standard normal): Giles' erfinv polynomials
    in w = -log(4p(1-p)), computed from p (so accurate for tiny p), and Newton's method
    on log_ndtr where p < 1e-16.

    >>> print(np.round(ndtri(np.array([0.025, 0.5, 1e-300])), 6))
    [ -1.959964   0.       -37.047096]
    """
    return _ndtri_rule(p)


def _ndtri(p):
    q = _where(p > 0.5, 1.0 - p, p)  # exact
    x = _ndtri_lower(q)
    x = _where(p > 0.5, -x, x)
    x = _where(p == 0, -np.inf, _where(p == 1, np.inf, x))
    return _where((p < 0) | (p > 1) | rnp.isnan(p), np.nan, x)


W_MAX = 36.0  # Giles' double precision fit holds for w = -log(1 - y²) up to about here


def _ndtri_lower(q):
    """ndtri(q) for 0 < q <= 1/2."""
    safe = _where(q > 0, q, 0.25)
    w = -rnp.log(4.0 * safe * (1.0 - safe))
    central = _where(w < W_MAX, w, W_MAX)
    x = math.sqrt(2) * (2.0 * safe - 1.0) * _giles(central)
    tail_q = _where(w >= W_MAX, safe, 1e-300)
    return _where(w < W_MAX, x, _ndtri_tail(tail_q))


def _giles(w):
    """erfinv(y) / y as a polynomial of w = -log(1 - y²) (GILES_64, as ops.elementwise
    evaluates it), from w itself."""
    root = rnp.sqrt(w)
    out = None
    for below, shift, use_root, coefs in reversed(GILES_64):
        t = (root if use_root else w) - shift
        p = coefs[0] + 0.0 * t
        for c in coefs[1:]:
            p = ew.fma(p, t, np.float64(c))
        out = p if out is None else _where(w < below, p, out)
    return out


def _ndtri_tail(q, steps: int = 4):
    """Newton's method on log_ndtr(x) = log q from the asymptotic x ~ -sqrt(2 log(1/q)
    - log(4 pi log(1/q)))."""
    lq = rnp.log(q)
    t = -2.0 * lq
    x = -rnp.sqrt(t - rnp.log(2 * math.pi * t))
    for _ in range(steps):
        lc = _log_ndtr_asymptotic(_where(x < LOW_TAIL, x, LOW_TAIL))
        lc = _where(x < LOW_TAIL, lc, rnp.log(_ndtr(x)))
        slope = rnp.exp(-0.5 * x * x - LOG_SQRT_2PI - lc)  # d log_ndtr / dx
        x = x - (lc - lq) / slope
    return x


# derivatives from the result, not through the polynomials and Newton steps:
# ndtri' = 1 / pdf(ndtri), erfinv' = sqrt(pi) / 2 exp(erfinv²)
_ndtri_rule = rules_when_needed(custom_jvp(_ndtri))
_erfinv_rule = rules_when_needed(custom_jvp(_erfinv))
_erfinv_giles_rule = rules_when_needed(custom_jvp(lambda y: _erfinv(y, newton=False)))


@_ndtri_rule.defjvp
def _ndtri_jvp(primals, tangents):
    x = _ndtri_rule(primals[0])
    return x, tangents[0] * (math.sqrt(2 * math.pi) * rnp.exp(0.5 * x * x))


def _erfinv_jvp(rule):
    def jvp(primals, tangents):
        x = rule(primals[0])
        return x, tangents[0] * (math.sqrt(math.pi) / 2 * rnp.exp(x * x))
    rule.defjvp(jvp)


_erfinv_jvp(_erfinv_rule)
_erfinv_jvp(_erfinv_giles_rule)


@_special("expit")
def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)), without overflow.

    >>> print(np.round(expit(np.array([-1000.0, 0.0, 2.0])), 6))
    [0.       0.5      0.880797]
    """
    pos = x >= 0
    e = rnp.exp(_where(pos, -x, x))  # exp(-|x|), with the derivative of each side at 0
    return _where(pos, 1.0 / (1.0 + e), e / (1.0 + e))


@_special("logit")
def logit(p):
    """log(p / (1 - p)); near p = 1/2 as 2 arctanh(2p - 1), which keeps its accuracy.

    >>> print(np.round(logit(np.array([0.25, 0.5, 1.0])), 6))
    [-1.098612  0.             inf]
    """
    near = rnp.abs(p - 0.5) < 0.25
    mid = _where(near, p, 0.5)
    far = _where(near, 0.25, p)
    return _where(near, 2.0 * rnp.arctanh(2.0 * mid - 1.0), rnp.log(far / (1.0 - far)))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) over `axis`, without overflow, as SciPy's (and JAX's): all
    -inf gives -inf (with derivative 0), `return_sign=True` gives (log|s|, sign(s)).

    >>> print(np.round(logsumexp(np.array([1e4, 1e4])), 4))
    10000.6931
    >>> print(logsumexp(np.array([-np.inf, -np.inf])))
    -inf
    """
    from ..control_flow import stop_gradient

    a = rnp.asarray(accept(a, "rune_jit.scipy.special.logsumexp"))
    if dtype_weak(a)[0].kind != "f":
        a = rnp.astype(a, F64)
    if b is not None:
        shape = broadcast_shapes(shape_of(a), shape_of(b))
        a, b = rnp.broadcast_to(a, shape), rnp.broadcast_to(b, shape)
        a = _where(b == 0, -np.inf, a)  # a zero weight drops its term, even an inf one
    m = rnp.max(a, axis=axis, keepdims=True)
    m = stop_gradient(_where(rnp.isfinite(m), m, 0.0))
    e = rnp.exp(a - m)
    s = rnp.sum(e if b is None else b * e, axis=axis, keepdims=True)
    sign = rnp.sign(s)
    mag = rnp.abs(s)
    empty = mag == 0
    out = _where(empty, -np.inf, rnp.log(_where(empty, 1.0, mag)) + m)
    if not keepdims:
        axes = None if axis is None else axis
        out, sign = rnp.squeeze(out, axis=axes), rnp.squeeze(sign, axis=axes)
    return (out, sign) if return_sign else out


# ------------------------------------------------------------- gamma and its logarithm


def _horner(z, coefs):
    p = coefs[-1] + 0.0 * z
    for c in reversed(coefs[:-1]):
        p = p * z + c
    return p


def _shifted(x, power: int):
    """For digamma (power 1) and trigamma (2): (reflect: x < 0.5, big: y >= SHIFT for
    y = x or 1 - x, z = y or y + SHIFT, the recurrence's sum of 1/(y + k)**power)."""
    refl = x < 0.5
    y = _where(refl, 1.0 - x, x)
    big = y >= SHIFT
    z = _where(big, y, y + SHIFT)
    acc = 0.0
    for k in range(SHIFT):
        t = _where(big, 1.0, y + k)
        acc = acc + 1.0 / (t if power == 1 else rnp.square(t))
    return refl, big, z, acc


def _trigamma(x):
    refl, big, z, acc = _shifted(x, 2)
    r = 1.0 / (z * z)
    series = _horner(r, list(BERNOULLI)) / (z * z * z)
    pos = 1.0 / z + 0.5 * r + series + _where(big, 0.0, acc)
    s = sinpi_abs(_where(refl, x, 0.5))
    reflected = math.pi ** 2 / rnp.square(s) - pos
    out = _where(refl, reflected, pos)
    return _where(refl & (rnp.rint(x) == x), np.inf, out)


_gammaln_rule = rules_when_needed(custom_jvp(lgamma.gammaln))
_digamma_rule = rules_when_needed(custom_jvp(digamma_float64))
_gammaln_rule.defjvp(lambda p, t: (_gammaln_rule(p[0]), t[0] * _digamma_rule(p[0])))
_digamma_rule.defjvp(lambda p, t: (_digamma_rule(p[0]), t[0] * _trigamma(p[0])))


@_special("gammaln")
def gammaln(x):
    """log |Γ(x)| (inf at the poles 0, -1, -2, ...); its derivative is digamma.

    >>> print(np.round(gammaln(np.array([0.5, 1.0, 10.0, -2.5])), 6).tolist())
    [0.572365, 0.0, 12.801827, -0.056244]
    """
    return _gammaln_rule(x)


@_special("digamma")
def digamma(x):
    """ψ(x) = d/dx log Γ(x) (-inf at 0, -0.0 gives inf, nan at negative integers); its
    derivative is trigamma, ψ'(x).

    >>> print(np.round(digamma(np.array([1.0, 0.5, 10.0])), 6))
    [-0.577216 -1.96351   2.251753]
    """
    return _digamma_rule(x)


psi = digamma


@_special("trigamma")
def trigamma(x):
    """ψ'(x), SciPy's polygamma(1, x).

    >>> print(np.round(trigamma(np.array([1.0, 0.5])), 6))
    [1.644934 4.934802]
    """
    return _trigamma(x)


# ------------------------------------------------------------- x log y and entropy


@_special("xlogy", 2)
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is nan), with derivative 0 in y there.

    >>> print(xlogy(np.array([0.0, 2.0]), np.array([0.0, np.e])))
    [0. 2.]
    """
    zero = (x == 0) & ~rnp.isnan(y)
    return _where(zero, 0.0, x * rnp.log(_where(zero, 1.0, y)))


@_special("xlog1py", 2)
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is nan).

    >>> print(xlog1py(np.array([0.0, 2.0]), np.array([-1.0, 0.0])))
    [0. 0.]
    """
    zero = (x == 0) & ~rnp.isnan(y)
    return _where(zero, 0.0, x * rnp.log1p(_where(zero, 0.0, y)))


@_special("entr", float32_first=True)
def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN).

    >>> print(np.round(entr(np.array([0.0, 0.5, -1.0])), 6).tolist())
    [0.0, 0.346574, -inf]
    """
    pos = x > 0
    val = -x * rnp.log(_where(pos, x, 1.0))
    return _where(pos, val, _where(x == 0, 0.0, _where(x < 0, -np.inf, x)))


__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammaln", "log_ndtr",
           "logit", "logsumexp", "ndtr", "ndtri", "psi", "trigamma", "xlog1py", "xlogy"]

# The functions added for jax.scipy.special's names live in rune_jit/_src/special.py
from ..special import (beta, betainc, betaln, boxcox, boxcox1p, comb, factorial,  # noqa: E402
                       gamma, gammainc, gammaincc, gammasgn, i0, i0e, i1, i1e, kl_div, log_softmax,
                       loggamma, multigammaln, poch, rel_entr, softmax)

__all__ += ["beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "factorial", "gamma",
            "gammainc", "gammaincc", "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div",
            "log_softmax", "loggamma", "multigammaln", "poch", "rel_entr", "softmax"]
