"""digamma (psi, the derivative of log Γ) in float64, for rune_jit.scipy.special.digamma:
the layout of lgamma.py (series around 1 and around psi's zero x0, Taylor pieces around
2, 2.5 and 3, the recurrence down to [2, 3) with its sum in double-double arithmetic, the
asymptotic series from 10 with a double-double log), rounded once; the reflection below
-1/4. docs/accuracy.md has the references and the measured errors.

    >>> import numpy as np
    >>> print(digamma(np.array([0.5, 1.4616321449683622, 7.25])).tolist())
    [-1.9635100260214235, -9.241265521729427e-17, 1.910453526883736]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as rnp
from ..ops import elementwise as ew
from .double_double import centered, fma_horner, log_dd, two_prod, two_sum
from .lgamma import BERNOULLI, EULER, EULER_LO, LGAMMA_SERIES, NEAR, SHIFT, TINY

# tools/taylor_special.py: psi's positive zero x0 and psi'(x0) (double-doubles), and for
# t = x - x0 in [-1/4, 0.29]: psi = t psi'(x0) + t² DIGAMMA_ROOT(t) (Taylor series)
ROOT_NEAR = (1.2116321449683622, 1.75)
ROOT = (1.4616321449683622, 9.549995429965697e-17)
TRIGAMMA_ROOT = (0.9676722454476212, -3.387874303038943e-17)
DIGAMMA_ROOT = (  # next term 2^-63.6
    -3.5430070947659604e-05, 5.178575795222081e-05, -7.569179582195066e-05,
    0.0001106337276874741, -0.00016170622091974803, 0.00023635601564027053,
    -0.0003454680251063077, 0.000504953265834602, -0.0007380709389960052,
    0.0010788252019162967, -0.0015769367714301972, 0.002305126326734928, -0.003369801655439328,
    0.004926781395729853, -0.007204534386356869, 0.010538791616612175, -0.01542476590494896,
    0.022597648232218104, -0.03316112647484736, 0.04880428816414311, -0.07219956125645471,
    0.10782405069126237, -0.16394270544240652, 0.258499760955651, -0.4427631689835921)
DIGAMMA_CENTERS = (  # tools/taylor_special.py: next term 2^-62.0 relative
    ((0.42278433509846713, 4.942915152430645e-18), (0.6449340668482264, 3.040672350398476e-17),
     (-4.769329867878064e-07, 9.539620338727962e-07, -1.908212716553939e-06,
      3.81729326499984e-06, -7.637197637899763e-06, 1.528225940865187e-05,
      -3.058823630702049e-05, 6.124813505870483e-05, -0.00012271334757848915,
      0.0002460865533080483, -0.0004941886041194645, 0.0009945751278180853,
      -0.0020083928260822143, 0.00407735619794434, -0.008349277381922827,
      0.01734306198444914, -0.03692775514336993, 0.08232323371113819, -0.2020569031595943)),
    ((0.7031566406452432, -4.430586970323463e-18), (0.49035775610023485, 1.1037396511248528e-17),
     (-4.401820633602188e-09, 1.1008345466854143e-08, -2.7534182401274525e-08,
      6.888225415513035e-08, -1.7237026144441994e-07, 4.315056529691794e-07,
      -1.0808116193449874e-06, 2.70927597946691e-06, -6.798929231974794e-06,
      1.7089167198843548e-05, -4.3052688655542605e-05, 0.00010882584206868631,
      -0.00027643925426264714, 0.000707388165183161, -0.0018305640382639378,
      0.004821409821393196, -0.013073166646113807, 0.03731764146954201,
      -0.1181020258208637)),
    ((0.9227843350984671, 4.942915152430645e-18), (0.39493406684822646, -2.510442772727307e-17),
     (-9.582858468146312e-11, 2.8771746654611316e-10, -8.640837414389256e-10,
      2.5959993748398565e-09, -7.803106649762274e-09, 2.3470346151871732e-08,
      -7.065818202049355e-08, 2.1297880870482925e-07, -6.430350784891467e-07,
      1.9459283080482987e-06, -5.907354119464559e-06, 1.8012627818085337e-05,
      -5.526782608221442e-05, 0.00017110619794433938, -0.0005367773819228268,
      0.0017180619844491397, -0.005677755143369927, 0.019823233711138193,
      -0.07705690315959429)),
)
ZETA2 = (1.6449340668482264, 3.040672350398476e-17)
# psi(1 + z) = -γ + ζ(2) z + z² H(z), H's coefficients (-1)^k ζ(k) for k = 3 .. 30
# (A&S 6.3.14), highest power first
PSI_ONE = [k * LGAMMA_SERIES[k - 2] for k in range(30, 2, -1)]
ASYMPTOTIC = [b / (2 * k) for k, b in enumerate(BERNOULLI, 1)][::-1]  # A&S 6.3.18


def _where(c, x, y):
    return rnp.where(c, x, y)


def _psi_one(z: Any) -> tuple[Any, Any]:
    """psi(1 + z) as hi + lo, |z| <= 1/4: -γ and ζ(2) double-doubles, ζ(2) z exact."""
    p_hi, p_err = two_prod(z, np.float64(ZETA2[0]))
    hi, err = two_sum(np.float64(-EULER), p_hi)
    return hi, err + (p_err + (z * ZETA2[1] - EULER_LO + z * (z * fma_horner(z, PSI_ONE))))


def _psi_root(t: Any, t_lo: Any) -> tuple[Any, Any]:
    """psi(x0 + t + t_lo) as hi + lo, t in [-1/4, 0.29], |t_lo| <= 2^-52 |t| or x0's lo:
    t psi'(x0) (exact) + t_lo psi'(x0) + t² P(t)."""
    hi, err = two_prod(t, np.float64(TRIGAMMA_ROOT[0]))
    tt = t + t_lo
    return hi, err + (t * TRIGAMMA_ROOT[1] + t_lo * TRIGAMMA_ROOT[0]
                      + tt * (tt * fma_horner(tt, DIGAMMA_ROOT)))


def _reciprocal(v: Any) -> tuple[Any, Any]:
    """1/v as hi + lo (the rounding error from a fused multiply-add)."""
    r = 1.0 / v
    return r, ew.fma(-r, v, np.float64(1.0)) * r


def _recurrence_sum(y: Any, n: Any) -> tuple[Any, Any]:
    """Σ_{k<n} 1/(y + k) as hi + lo (each y + k exact), n = 0 .. NEAR + 1."""
    hi, lo = 0.0 * y, 0.0 * y
    for k in range(NEAR + 1):
        r, r_err = _reciprocal(_where(k < n, y + k, 1.0))
        hi, err = two_sum(hi, _where(k < n, r, 0.0))
        lo = lo + _where(k < n, err + r_err, 0.0)
    return hi, lo


def _asymptotic(z: Any) -> tuple[Any, Any]:
    """psi(z) = log z - 1/(2z) - Σ B2k / (2k z^2k) as hi + lo for z >= SHIFT, log z a
    double-double."""
    l_hi, l_lo = log_dd(z)
    r = 1.0 / (z * z)
    return l_hi, l_lo - (0.5 / z + r * fma_horner(r, ASYMPTOTIC))


def digamma(x: Any) -> Any:
    """psi of float64 x, SciPy's special values (-inf at +0, +inf at -0, NaN at the
    negative integers and -inf, +inf at +inf). |x| < 1/4 and [1/4, 3/4):
    psi(1 + x) - 1/x (1/x a double-double); on (-NEAR, -1/4] the recurrence
    psi(1 + f) - Σ 1/(x + k), k = 0 .. m, f = x + m = x - rint(x); below -NEAR the
    reflection psi(1 - x) - pi / tan(pi x) (A&S 6.3.7), 1 - x as hi + lo and pi x reduced
    exactly; the rest from `_positive`."""
    ax = rnp.abs(x)
    low = (ax < 0.25) | ((x >= 0.25) & (x < 0.75))
    far = x <= -NEAR
    mid = (x < 0) & ~low & ~far
    y, y_err = two_sum(np.float64(1.0), -x)
    y = _where(far, y, _where(low | mid, 2.0, x))
    hi, lo = _positive(x, _where(mid, x - rnp.rint(x), x), y, low, mid)
    # far: psi(y + y_err) = psi(y) + y_err / y (psi'(y) = 1/y to 2^-4 past 20)
    c = math.pi / rnp.tan(math.pi * _where(far, x - rnp.rint(x), 0.25))
    r_hi, r_err = two_sum(hi, -c)
    out = _where(far, r_hi + (r_err + (lo + _where(far, y_err, 0.0) / y)), hi + lo)
    # below TINY psi = -1/x - γ (the next term is ζ(2) x): 1/x's error would overflow
    out = _where(ax < TINY, -1.0 / x - EULER, out)
    pole = (x < 0) & (rnp.rint(x) == x)
    out = _where(x == 0, -rnp.copysign(np.inf, x), _where(pole, np.nan, out))
    return _where(x == np.inf, np.inf, _where(rnp.isnan(x), x, out))


def _positive(x, f, y, low, mid):
    """psi(y) for y >= 3/4 as hi + lo (and psi(1 + f) - Σ 1/(x + k) to f in the `low` and
    `mid` lanes, f = x on `low`): the series around 1 on [3/4, 5/4], around x0 to 1.75
    (psi(1 + f) for f < -1/4 as psi(2 + f) - 1/(1 + f)), the pieces around 2, 2.5 and 3
    to 3.25, then the recurrence psi(y) = psi(y - n) + Σ 1/(y - n + k) from [2, 3), the
    asymptotic series from SHIFT."""
    near = low | mid
    small = near & (rnp.abs(f) < 0.25)
    one = ~near & (rnp.abs(y - 1.0) <= 0.25)
    root = ~near & ~one & (y <= ROOT_NEAR[1])
    pieces = ~near & ~one & ~root & (y < SHIFT)
    reduce = pieces & (y >= 3.25)
    n = _where(reduce, rnp.floor(y) - 2.0, _where(mid, 1.0 - rnp.rint(x), 0.0))
    n = _where(low, 1.0, n)
    base = _where(near, x, y - n)  # exact
    o_hi, o_lo = _psi_one(_where(small, f, _where(one, y - 1.0, 0.0)))
    # psi(1 + f) for f > 1/4 is psi(x0 + t), t = f - (x0 - 1) exact (Sterbenz); psi(2 + f)
    # for f < -1/4 at t = (f + 1/2) + (3/2 - x0), hi + lo (both terms exact)
    two = near & ~small & (f < 0)
    t_hi, t_err = two_sum(f + 0.5, np.float64(1.5 - ROOT[0]))
    t = _where(two, t_hi, _where(near, f - (ROOT[0] - 1.0), _where(root, y - ROOT[0], 0.0)))
    z_hi, z_lo = _psi_root(t, _where(two, t_err, 0.0) - ROOT[1])
    center = _where(pieces, rnp.rint(2.0 * base) * 0.5, 2.0)
    c_hi, c_lo = centered(2.0 * center - 4.0, _where(pieces, base - center, 0.0),
                          DIGAMMA_CENTERS)
    s_hi, s_lo = _recurrence_sum(base, n)
    # and 1/(1 + f) for f < -1/4, 1 + f as hi + lo
    u_hi, u_lo = two_sum(np.float64(1.0), _where(two, f, 0.0))
    v_hi, v_lo = _reciprocal(u_hi)
    s_hi, s_err = two_sum(s_hi, _where(two, v_hi, 0.0))
    s_lo = s_lo + _where(two, s_err + (v_lo - u_lo * v_hi * v_hi), 0.0)
    first = small | one
    a_hi = _where(first, o_hi, _where(near | root, z_hi, c_hi))
    a_lo = _where(first, o_lo, _where(near | root, z_lo, c_lo))
    b_hi = _where(near, -s_hi, _where(reduce, s_hi, 0.0))
    b_lo = _where(near, -s_lo, _where(reduce, s_lo, 0.0))
    hi, err = two_sum(a_hi, b_hi)
    as_hi, as_lo = _asymptotic(_where(y < SHIFT, SHIFT, y))
    big = ~near & (y >= SHIFT)
    return _where(big, as_hi, hi), _where(big, as_lo, err + (a_lo + b_lo))
