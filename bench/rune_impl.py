"""The workloads in rune_jit, written as its docs show: scan, iterate, root, remat under jit.

Each factory builds a NEW `rune.jit` object, so its first call traces and compiles
(unless this process or the disk cache has already compiled the same program).
"""

from __future__ import annotations

import warnings

import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp
import rune_jit.random as rr
import rune_jit.scipy as rsp
from rune_jit._src.api import linearized
from rune_jit._src.ir import Var

import workloads as wl


def warm_up() -> None:
    """Pay the one-time costs of the process (LLVM initialization) outside any timing."""
    rune.jit(lambda x: x * 2.0)(np.ones(3))


def _scan1(xs):
    return rune.scan(lambda c, x: (c * 0.999999 + rnp.sin(x),) * 2, np.float64(0.0), xs)


def _rnn(W, U, b, xs, h0):
    return rune.scan(lambda h, x: (rnp.tanh(W @ h + U @ x + b),) * 2, h0, xs)


def _newton(max_steps):
    def solve(a):
        return rune.iterate(lambda x: (x + a / x) / 2, a,
                            until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a,
                            max_steps=max_steps)
    return rune.vmap(solve)


def _sum_root(a, max_steps):
    x = rune.root(lambda x: x * x - a, lambda: _newton(max_steps)(a), linear_solver="diagonal")
    return rnp.sum(x)


def _deep(remat):
    def loss(W, xs, c0):
        def step(c, x):
            return rnp.tanh(rnp.sin(W @ c + x))
        body = rune.remat(step) if remat else step
        return rnp.sum(rune.scan(lambda c, x: (body(c, x), None), c0, xs)[0])
    return loss


def _recurrence(remat, steps):
    """RM: sum(final c) for c' = tanh(W c + b), `steps` steps with no xs."""
    def loss(W, b, c0):
        def step(c):
            return rnp.tanh(W @ c + b)
        body = rune.remat(step) if remat else step
        return rnp.sum(rune.scan(lambda c, _: (body(c), None), c0, length=steps)[0])
    return loss


DT, DAMPING = 0.01, 0.5  # W7's step and friction


def _pendulum(s0, xs):
    def step(s, x):
        n = s + DT * rnp.stack([s[1], x - rnp.sin(s[0]) - DAMPING * s[1]])
        return n, n[0]
    return rune.scan(step, s0, xs)


def w7(p):
    f = rune.jit(_pendulum)
    return lambda: f(p.s0, p.xs)


def _heat(p, at: bool):
    def step(u, _):
        inner = u[1:-1] + p.k * (u[:-2] - 2 * u[1:-1] + u[2:])
        return (u.at[1:-1].set(inner) if at else rnp.concatenate([u[:1], inner, u[-1:]])), None
    return lambda u0: rune.scan(step, u0, length=p.steps)[0]


def heat(at: bool):
    def make(p):
        f = rune.jit(_heat(p, at))
        return lambda: f(p.u0)
    return make


def nls(p):
    f = rune.jit(wl.nls(rnp, rune.scan, p))
    return lambda: f(p.params)


def nls_grad(p):
    f = rune.jit(rune.grad(wl.nls(rnp, rune.scan, p)))
    return lambda: f(p.params)


def ft(p):
    f = rune.jit(rnp.fft.fft)
    return lambda: f(p.z)


def fill(p):
    f = rune.jit(wl.fill_rows(rnp, rune.fori_loop, p.rows))
    return lambda: f(p.x)


def kf(p):
    f = rune.jit(wl.kalman(rnp, rnp.linalg.solve, rune.scan))
    return lambda: f(p.F, p.Q, p.H, p.R, p.zs, p.x0, p.P0)


def _spmv_loop(p):
    def loop(vals, rows, cols, x0, b):
        def step(x, _):
            return rnp.tanh(rune.ops.segment_sum(vals * x[cols], rows, p.n) + b), None
        return rune.scan(step, x0, length=p.steps)[0]
    return loop


def w8(p):
    f = rune.jit(_spmv_loop(p))
    return lambda: f(p.vals, p.rows, p.cols, p.x0, p.b)


def w8g(p):
    loop = _spmv_loop(p)
    f = rune.jit(rune.grad(lambda vals, *rest: rnp.sum(loop(vals, *rest))))
    return lambda: f(p.vals, p.rows, p.cols, p.x0, p.b)


def w1(p):
    f = rune.jit(_scan1)
    return lambda: f(p.xs)


def _checked_scan1(xs):
    def step(c, x):
        rune.check(rnp.isfinite(c), "c = {} is not finite", c)
        nxt = c * 0.999999 + rnp.sin(x)
        return nxt, nxt

    return rune.scan(step, np.float64(0.0), xs)


def w1c(p):
    f = rune.jit(_checked_scan1)
    return lambda: f(p.xs)


def w2(p):
    f = rune.jit(rune.grad(lambda xs: _scan1(xs)[0]))
    return lambda: f(p.xs)


def w3(p):
    f = rune.jit(_rnn)
    return lambda: f(p.W, p.U, p.b, p.xs, p.h0)


def w3g(p):
    f = rune.jit(rune.grad(lambda *a: rnp.sum(_rnn(*a)[0]), argnums=(0, 1, 2)))
    return lambda: f(p.W, p.U, p.b, p.xs, p.h0)


def w4(p):
    f = rune.jit(_newton(p.max_steps))
    return lambda: f(p.a)


def w5(p):
    f = rune.jit(rune.grad(lambda a: _sum_root(a, p.max_steps)))
    return lambda: f(p.a)


def escape_steps(max_steps: int):
    """One lane of the Mandelbrot set: the steps z -> z*z + c takes from 0 to |z| > 2, at
    most max_steps (MB; bench/speedup.py's Mandelbrot)."""
    def lane(c):
        def step(s):
            z, k = s
            return z * z + c, k + 1

        return rune.iterate(step, (0j * c, 0), until=lambda s: (rnp.abs(s[0]) > 2.0) | (
            s[1] >= max_steps), max_steps=max_steps)[1]
    return lane


def mandelbrot(p):
    f = rune.jit(rune.vmap(escape_steps(p.max_steps)))
    return lambda: f(p.c)


def _cg(matvec, b):
    return rsp.sparse.linalg.cg(matvec, b, tol=wl.IL_TOL, maxiter=50 * b.size)[0]


def _implicit(name: str, p):
    if name == "ILd":
        return wl.implicit_layer(rnp, _cg, rune.root, p)
    return wl.implicit_layer(rnp, _cg, lambda r, s: rune.root(r, s, linear_solve=_cg), p)


def heavy_tail(p):
    def lane(a, x0):
        return rune.iterate(lambda x: x - 1.0 + a * rnp.exp(-x), x0, until=lambda x: rnp.abs(
            a * rnp.exp(-x) - 1.0) <= p.tol, max_steps=p.max_steps)
    f = rune.jit(rune.vmap(lane))
    return lambda: f(p.a, p.x0)


def _loss(name: str, p):
    """W6, W6r, RM, RMr, CK, CKk, IL, ILd: the function whose gradient is taken."""
    if name in ("IL", "ILd"):
        return _implicit(name, p)
    if name in ("CK", "CKk"):
        k = p.k if name == "CKk" else "all"
        return wl.rollout(rnp, lambda *a, **kw: rune.scan(*a, checkpoints=k, **kw), p)
    return _recurrence(name == "RMr", p.t) if name in ("RM", "RMr") else _deep(name == "W6r")


def _grad_of(name):
    def make(p):
        argnums, args = wl.gradient_args(name, p)
        f = rune.jit(rune.grad(_loss(name, p), argnums=argnums))
        return lambda: f(*args)
    return make


def _linalg(A, b):
    w, v = rnp.linalg.eigh(A)
    return rnp.linalg.solve(A, b), rnp.linalg.cholesky(A), w, v * v


def w10(p):
    f = rune.jit(_linalg)
    return lambda: f(p.A, p.b)


def unrolled(p):
    def f(x):
        for i in range(p.steps):
            x = rnp.sin(x) * 0.99 + 0.01 * i
        return x

    g = rune.jit(f)

    def call():
        with warnings.catch_warnings():  # the trace's warning that it unrolled a loop
            warnings.simplefilter("ignore")
            return g(p.x)

    return call


def sum_tanh(p):
    f = rune.jit(lambda x: rnp.sum(rnp.tanh(x)))
    return lambda: f(p.x)


def transposed_product(p):
    f = rune.jit(lambda t, f: t.T @ f)
    return lambda: f(p.T, p.F)


def matmul(p):
    f = rune.jit(lambda a, b: a @ b)
    return lambda: f(p.A, p.B)


def matrix_carry(p):
    f = rune.jit(wl.matrix_carry(rnp, rune.scan, p.steps))
    return lambda: f(p.W, p.C0)


def softmax_train(p):
    f = rune.jit(wl.softmax_training(rnp, rune.nn.log_softmax, rune.value_and_grad, rune.scan,
                                     p.lr, p.steps))
    return lambda: f(p.W0, p.X, p.labels)


def log_softmax_scan(p):
    f = rune.jit(wl.log_softmax_scan(rune.nn.log_softmax, rune.scan, p.steps))
    return lambda: f(p.z0)


def dispatch(p):
    f = rune.jit(lambda x: x + 1)
    return lambda: f(p.x)


def _paths(p):
    """mean(max(X_T - 1, 0)) over p.paths Euler–Maruyama paths, a normal draw a path and step."""
    def mean_final(mu, sigma):
        key = rr.key(p.seed)

        def step(x, t):
            z = rr.normal(rr.fold_in(key, t), (p.paths,))
            return x + mu * x * p.dt + sigma * x * np.sqrt(p.dt) * z, None
        final = rune.scan(step, rnp.ones(p.paths), np.arange(p.steps))[0]
        return rnp.mean(rnp.maximum(final - 1.0, 0.0))
    return mean_final


def w9(p):
    f = rune.jit(_paths(p))
    return lambda: f(p.mu, p.sigma)


def w9g(p):
    f = rune.jit(rune.grad(_paths(p), argnums=(0, 1)))
    return lambda: np.array(f(p.mu, p.sigma))


# issue 18: calls outside jit, and jitted calls of numbers, dicts and static values


def _eager(name):
    """rnp.<name> called outside jit on the row's operands (two for add)."""
    def make(p):
        f = getattr(rnp, name)
        args = (p.a, p.b) if name == "add" else (p.a,)
        return lambda: f(*args)
    return make


def _sin_loss(x):  # Egrad's
    return rnp.sum(rnp.sin(x) * x)


def egrad(p):
    return lambda: rune.grad(_sin_loss)(p.a)  # a new grad(f) per call, as at a prompt


def egrad_jit(p):
    f = rune.jit(rune.grad(_sin_loss))
    return lambda: f(p.a)


def escan(p):
    return lambda: _scan1(p.xs)


def escan_jit(p):
    f = rune.jit(_scan1)
    return lambda: f(p.xs)


def _mixed(x, s, d, n):
    return x * s + d["a"] - d["b"] * n


def dmix(p):
    f = rune.jit(_mixed, static_argnums=3)
    return lambda: f(p.x, p.s, p.d, p.n)


def dmix_arrays(p):
    f = rune.jit(lambda x, s, a, b: _mixed(x, s, {"a": a, "b": b}, 3))
    s, a, b = np.asarray(p.s), p.d["a"], p.d["b"]
    return lambda: f(p.x, s, a, b)


IMPLS = {"FILL": fill, "NLS": nls, "NLSg": nls_grad, "FT": ft, "W1": w1, "W1c": w1c, "W2": w2, "W3": w3, "W3g": w3g, "W4": w4, "W4s": w4, "W5": w5, "W7": w7,
         "W6": _grad_of("W6"), "W6r": _grad_of("W6r"), "RM": _grad_of("RM"),
         "RMr": _grad_of("RMr"), "CK": _grad_of("CK"), "CKk": _grad_of("CKk"),
         "IL": _grad_of("IL"), "ILd": _grad_of("ILd"), "W8": w8, "W8g": w8g, "W9": w9, "W9g": w9g,
         "W10": w10, "W10b": w10, "HS": heat(False), "HSat": heat(True), "HS32": heat(False),
         "U": unrolled, "D": dispatch,
         **{f"E{name}{label}": _eager(name) for name in ("add", "sin", "sum")
            for label in ("1", "1k")},
         "Egrad": egrad, "Egrad-jit": egrad_jit, "Escan": escan, "Escan-jit": escan_jit,
         "Dmix": dmix, "Dmix-arrays": dmix_arrays, "ST": sum_tanh, "KF": kf,
         "SX": softmax_train, "LSM": log_softmax_scan, "MM": matmul, "MB": mandelbrot,
         "HT": heavy_tail,
         **{w.name: transposed_product for w in wl.WORKLOADS if w.group == "TF"},
         **{w.name: matrix_carry for w in wl.WORKLOADS if w.group == "MC"}}


def kept_bytes(name: str, p) -> int:
    """Bytes reverse mode passes from the forward to the backward program: the residuals
    of linearize's known region, not counting inputs passed through (the caller holds
    them anyway) nor constants."""
    _, args = wl.gradient_args(name, p)
    region = rune.make_ir(_loss(name, p))(*args)
    lin = linearized(region, len(region.params) - len(args))
    residuals = lin.known.outputs[len(region.outputs):]
    inputs = set(lin.known.params)
    return sum(v.type.size * v.type.dtype.itemsize for v in residuals
               if isinstance(v, Var) and v not in inputs)


def stored_bytes(name: str, p) -> int:
    """Bytes a call of the compiled gradient stores: the tapes and whatever else its
    passes stack (the backward loop's stacked operands of a product summed after it),
    its scratch memory."""
    argnums, args = wl.gradient_args(name, p)
    f = rune.jit(rune.grad(_loss(name, p), argnums=argnums))
    return f.lower(*args).cost()["scratch_bytes"]
