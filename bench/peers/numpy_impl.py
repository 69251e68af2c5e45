"""The workloads in NumPy: vectorized where the math allows, else a Python loop over rows
whose row math is vectorized; the work that does not depend on the carry is hoisted out."""

from __future__ import annotations

import numpy as np

import workloads as wl

R = 0.999999


def w1(p):
    # c_k = sum_j R^(k-j) sin(x_j) = R^k * cumsum(sin(x_j) R^-j): the closed form of a
    # linear recurrence, stable here because R^-n stays near e for n <= 1e6
    k = np.arange(1, p.n + 1)

    def run():
        ys = R ** k * np.cumsum(np.sin(p.xs) * R ** -k)
        return ys[-1], ys
    return run


def w2(p):
    def run():
        decay = np.ones(p.n)
        decay[:-1] = np.cumprod(np.full(p.n - 1, R))[::-1]  # as the adjoint loop multiplies
        return decay * np.cos(p.xs)
    return run


def _rnn_forward(p):
    ux = p.xs @ p.U.T + p.b
    hs = np.empty((p.t + 1, p.h))
    hs[0] = p.h0
    for t in range(p.t):
        hs[t + 1] = np.tanh(p.W @ hs[t] + ux[t])
    return hs


def w3(p):
    def run():
        hs = _rnn_forward(p)
        return hs[-1], hs[1:]
    return run


def w3g(p):
    def run():
        hs = _rnn_forward(p)
        dz, gh = np.empty((p.t, p.h)), np.ones(p.h)
        for t in reversed(range(p.t)):
            dz[t] = gh * (1 - hs[t + 1] ** 2)
            gh = p.W.T @ dz[t]
        return dz.T @ hs[:-1], dz.T @ p.xs, dz.sum(0)
    return run


def newton(a, max_steps):
    """Newton sqrt per lane on the shrinking set of lanes still running."""
    with np.errstate(over="ignore"):  # x*x is inf while x is far above sqrt(1e300)
        return _newton(a, max_steps)


def _newton(a, max_steps):
    x = a.copy()
    live = np.flatnonzero(~(np.abs(x * x - a) <= 1e-12 * a))
    for _ in range(max_steps):
        if not live.size:
            return x
        xl, al = x[live], a[live]
        xl = (xl + al / xl) / 2
        x[live] = xl
        live = live[~(np.abs(xl * xl - al) <= 1e-12 * al)]
    if live.size:
        raise ValueError(f"newton: lane {live[0]} still running after {max_steps} steps")
    return x


def w4(p):
    return lambda: newton(p.a, p.max_steps)


def mandelbrot(p):
    """The lanes still inside |z| <= 2 step together, a shrinking set of them."""
    def run():
        z, steps = np.zeros_like(p.c), np.zeros(p.c.size, np.int64)
        live = np.arange(p.c.size)
        for _ in range(p.max_steps):
            zl = z[live]
            inside = ~(np.abs(zl) > 2.0)
            live, zl = live[inside], zl[inside]
            if not live.size:
                break
            z[live] = zl * zl + p.c[live]
            steps[live] += 1
        return steps
    return run


def w5(p):
    # implicit function theorem on r = x*x - a: da = -(dr/dx)^-1 (dr/da) = 1 / (2x)
    return lambda: 1.0 / (2.0 * newton(p.a, p.max_steps))


def w6(p):
    def run():
        cs, zs = np.empty((p.t + 1, p.h)), np.empty((p.t, p.h))
        cs[0] = p.c0
        for t in range(p.t):
            zs[t] = p.W @ cs[t] + p.xs[t]
            cs[t + 1] = np.tanh(np.sin(zs[t]))
        dz, gc = np.empty((p.t, p.h)), np.ones(p.h)
        for t in reversed(range(p.t)):
            dz[t] = gc * (1 - cs[t + 1] ** 2) * np.cos(zs[t])
            gc = p.W.T @ dz[t]
        return dz.T @ cs[:-1]
    return run


def unrolled(p):
    def f(x):
        for i in range(p.steps):
            x = np.sin(x) * 0.99 + 0.01 * i
        return x

    return lambda: f(p.x)


def dispatch(p):
    return lambda: p.x + 1


def _eager(name):
    """np.<name> on the row's operands (two for add)."""
    def make(p):
        f = getattr(np, name)
        args = (p.a, p.b) if name == "add" else (p.a,)
        return lambda: f(*args)
    return make


def _loss_grad(p):  # Egrad: the gradient of sum(sin(x) * x), by hand
    return lambda: np.sin(p.a) + p.a * np.cos(p.a)


def dmix(p):
    return lambda: p.x * p.s + p.d["a"] - p.d["b"] * p.n


def w8(p):
    def run():
        x = p.x0
        for _ in range(p.steps):
            x = np.tanh(np.bincount(p.rows, p.vals * x[p.cols], minlength=p.n) + p.b)
        return x
    return run


def heat(p):
    def run():
        u = p.u0
        for _ in range(p.steps):
            u = np.concatenate([u[:1], u[1:-1] + p.k * (u[:-2] - 2 * u[1:-1] + u[2:]), u[-1:]])
        return u
    return run


def _paths(p, grad: bool):
    """W9 (mean of X_T) or W9g (its pathwise gradient by forward tangents), vectorized
    over the paths, one np.random draw a path and step."""
    def run():
        rng = np.random.default_rng(p.seed)
        x, dmu, dsig = np.ones(p.paths), np.zeros(p.paths), np.zeros(p.paths)
        root = np.sqrt(p.dt)
        for _ in range(p.steps):
            z = rng.standard_normal(p.paths)
            grow = 1.0 + p.mu * p.dt + p.sigma * root * z
            if grad:
                dmu, dsig = dmu * grow + x * p.dt, dsig * grow + x * root * z
            x = x * grow
        itm = x > 1.0
        return (np.array([(dmu * itm).mean(), (dsig * itm).mean()]) if grad
                else np.maximum(x - 1.0, 0.0).mean())
    return run


def _linalg(A, b):
    w, v = np.linalg.eigh(A)
    return np.linalg.solve(A, b), np.linalg.cholesky(A), w, v * v


def softmax_train(p):
    rows, onehot = np.arange(p.n), np.eye(p.k)[p.labels]

    def run():
        W, losses = p.W0.copy(), np.empty(p.steps)
        for s in range(p.steps):
            z = p.X @ W
            top = z.max(axis=1, keepdims=True)
            lse = top + np.log(np.sum(np.exp(z - top), axis=1, keepdims=True))
            losses[s] = np.mean(lse[:, 0] - z[rows, p.labels])
            W = W - p.lr * (p.X.T @ (np.exp(z - lse) - onehot) / p.n)
        return W, losses
    return run


def _python_scan(step, carry, xs, length):
    """lax.scan's shape as a Python loop (xs None: `length` steps), the ys dropped."""
    for _ in range(length):
        carry, _ = step(carry, None)
    return carry, None


def _log_softmax(z, axis=-1):
    shifted = z - np.max(z, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def log_softmax_scan(p):
    run = wl.log_softmax_scan(_log_softmax, _python_scan, p.steps)
    return lambda: run(p.z0)


def nls(p):
    run = wl.nls(np, _python_scan, p)
    return lambda: run(p.params)


def matrix_carry(p):
    run = wl.matrix_carry(np, _python_scan, p.steps)
    return lambda: run(p.W, p.C0)


def _fill(x, rows):
    buf = np.zeros((rows, x.shape[0]))
    for i in range(rows):
        buf[i] = np.sin(x * i)
    return buf


IMPLS = {"FILL": lambda p: lambda: _fill(p.x, p.rows), "NLS": nls, "FT": lambda p: lambda: np.fft.fft(p.z), "W1": w1, "W2": w2, "W3": w3, "W3g": w3g, "W4": w4, "W4s": w4, "W5": w5, "W6": w6,
         "W8": w8, "HS": heat, "HSat": heat, "HS32": heat,
         "W9": lambda p: _paths(p, False), "W9g": lambda p: _paths(p, True),
         "W10": lambda p: lambda: _linalg(p.A, p.b), "W10b": lambda p: lambda: _linalg(p.A, p.b),
         "U": unrolled, "D": dispatch,
         **{f"E{name}{label}": _eager(name) for name in ("add", "sin", "sum")
            for label in ("1", "1k")},
         "Egrad": _loss_grad, "Egrad-jit": _loss_grad, "Escan": w1, "Escan-jit": w1,
         "Dmix": dmix, "Dmix-arrays": dmix,
         "ST": lambda p: lambda: np.sum(np.tanh(p.x)), "SX": softmax_train,
         "LSM": log_softmax_scan,
         "MM": lambda p: lambda: p.A @ p.B, "MB": mandelbrot,
         **{w.name: (lambda p: lambda: p.T.T @ p.F) for w in wl.WORKLOADS if w.group == "TF"},
         **{w.name: matrix_carry for w in wl.WORKLOADS if w.group == "MC"}}
