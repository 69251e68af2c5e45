"""The workloads in Numba: @njit loops over NumPy arrays, adjoints written by hand.

Matrix-vector products are explicit loops, ordered to vectorize: Numba's np.dot needs
SciPy's BLAS, which the bench extra does not install. Each factory compiles a NEW
dispatcher (njit of the plain Python function), so its first call compiles.
"""

from __future__ import annotations

import math

import numba
import numpy as np

import workloads as wl

R = 0.999999
DT, DAMPING = 0.01, 0.5  # W7


def warm_up() -> None:
    """Pay the one-time costs of the process (LLVM initialization) outside any timing."""
    numba.njit(lambda x: x * 2.0)(1.0)


def _scan1(xs):
    ys = np.empty_like(xs)
    c = 0.0
    for i in range(xs.size):
        c = c * R + math.sin(xs[i])
        ys[i] = c
    return c, ys


def _scan1_adjoint(xs):
    g = np.empty_like(xs)
    ct = 1.0  # d(final c)/d(c after step i), walking back from the last step
    for i in range(xs.size - 1, -1, -1):
        g[i] = ct * math.cos(xs[i])
        ct *= R
    return g


def _rnn(W, U, b, xs, h0):
    # W h as a sum of scaled columns of W (rows of W.T): the inner loop is contiguous and
    # vectorizes without reordering a sum
    Wt, Ut = np.ascontiguousarray(W.T), np.ascontiguousarray(U.T)
    t, (h, d) = xs.shape[0], U.shape
    hs = np.empty((t + 1, h))
    hs[0] = h0
    for s in range(t):
        z = hs[s + 1]
        z[:] = b
        for j in range(h):
            for i in range(h):
                z[i] += Wt[j, i] * hs[s, j]
        for j in range(d):
            for i in range(h):
                z[i] += Ut[j, i] * xs[s, j]
        for i in range(h):
            z[i] = math.tanh(z[i])
    return hs


def _rnn_adjoint(W, U, xs, hs):
    t, (h, d) = xs.shape[0], U.shape
    gW, gU, gb = np.zeros((h, h)), np.zeros((h, d)), np.zeros(h)
    gh, dz = np.ones(h), np.empty(h)
    for s in range(t - 1, -1, -1):
        for i in range(h):
            dz[i] = gh[i] * (1.0 - hs[s + 1, i] ** 2)
            gb[i] += dz[i]
            for j in range(h):
                gW[i, j] += dz[i] * hs[s, j]
            for j in range(d):
                gU[i, j] += dz[i] * xs[s, j]
        gh[:] = 0.0
        for i in range(h):
            for j in range(h):
                gh[j] += W[i, j] * dz[i]
    return gW, gU, gb


def _newton(a, max_steps):
    x = a.copy()
    for i in range(a.size):
        xi, ai, k = a[i], a[i], 0
        while not abs(xi * xi - ai) <= 1e-12 * ai:
            if k == max_steps:
                raise ValueError("newton: a lane is still running after max_steps")
            xi = (xi + ai / xi) / 2
            k += 1
        x[i] = xi
    return x


def _mandelbrot(c, max_steps):
    steps = np.empty(c.size, np.int64)
    for i in range(c.size):
        z, k = 0j, 0
        while not abs(z) > 2.0 and k < max_steps:
            z = z * z + c[i]
            k += 1
        steps[i] = k
    return steps


def _heavy_tail(a, x0, tol, max_steps):
    x = np.empty_like(x0)
    stuck = np.zeros(a.size, np.bool_)  # (a raise in a prange loop makes it serial)
    for i in numba.prange(a.size):  # each lane its own loop, on every core
        xi, ai, k = x0[i], a[i], 0
        while not abs(ai * np.exp(-xi) - 1.0) <= tol and k <= max_steps:
            xi = xi - 1.0 + ai * np.exp(-xi)
            k += 1
        x[i] = xi
        stuck[i] = k > max_steps
    if stuck.any():
        raise ValueError("heavy_tail: a lane is still running after max_steps")
    return x


def _sqrt_adjoint(x):
    # implicit function theorem on r = x*x - a: da = -(dr/dx)^-1 (dr/da) = 1 / (2x)
    g = np.empty_like(x)
    for i in range(x.size):
        g[i] = 1.0 / (2.0 * x[i])
    return g


def _deep_grad(W, xs, c0):
    t, h = xs.shape
    Wt = np.ascontiguousarray(W.T)  # as in _rnn
    cs, zs = np.empty((t + 1, h)), np.empty((t, h))
    cs[0] = c0
    for s in range(t):
        zs[s] = xs[s]
        for j in range(h):
            for i in range(h):
                zs[s, i] += Wt[j, i] * cs[s, j]
        for i in range(h):
            cs[s + 1, i] = math.tanh(math.sin(zs[s, i]))
    gW, gc, dz = np.zeros((h, h)), np.ones(h), np.empty(h)
    for s in range(t - 1, -1, -1):
        for i in range(h):
            dz[i] = gc[i] * (1.0 - cs[s + 1, i] ** 2) * math.cos(zs[s, i])
            for j in range(h):
                gW[i, j] += dz[i] * cs[s, j]
        gc[:] = 0.0
        for i in range(h):
            for j in range(h):
                gc[j] += W[i, j] * dz[i]
    return gW


def _pendulum(s0, xs):
    th, om = s0[0], s0[1]  # the state as two scalars: the fastest way to write it here
    ys = np.empty_like(xs)
    for i in range(xs.size):
        dth, dom = om, xs[i] - math.sin(th) - DAMPING * om
        th, om = th + DT * dth, om + DT * dom
        ys[i] = th
    return np.array([th, om]), ys


def _heat(u0, steps, k, two):
    """HS: two buffers that swap, each point written once a step (k and two of u0's dtype,
    so that float32 stays float32)."""
    u, v, n = u0.copy(), np.empty_like(u0), u0.size
    for _ in range(steps):
        v[0], v[n - 1] = u[0], u[n - 1]
        for i in range(1, n - 1):
            v[i] = u[i] + k * (u[i - 1] - two * u[i] + u[i + 1])
        u, v = v, u
    return u


def heat(p):
    f, kind = numba.njit(_heat), p.u0.dtype.type
    return lambda: f(p.u0, p.steps, kind(p.k), kind(2))


def _kalman(F, Q, H, R, zs, x0, P0):
    """KF as a Numba user writes it: the same matrix products, np.linalg.solve for S."""
    x, P = x0.copy(), P0.copy()
    for t in range(zs.shape[0]):
        x, P = F @ x, F @ P @ F.T + Q
        HP = H @ P
        K = np.linalg.solve(H @ P @ H.T + R, HP).T
        x, P = x + K @ (zs[t] - H @ x), P - K @ HP
    return np.concatenate((x, P.ravel()))


def _add1(x):
    return x + 1


def _loss_grad(x):  # Egrad-jit: the gradient of sum(sin(x) * x), by hand
    return np.sin(x) + x * np.cos(x)


def _mixed(x, s, a, b, n):  # Dmix: Numba takes no dict, so its two arrays come apart
    return x * s + a - b * n


def _mixed_arrays(x, s, a, b):
    return x * s + a - b * 3


def dmix(p):
    f, a, b = numba.njit(_mixed), p.d["a"], p.d["b"]
    return lambda: f(p.x, p.s, a, b, p.n)


def dmix_arrays(p):
    f, s, a, b = numba.njit(_mixed_arrays), np.asarray(p.s), p.d["a"], p.d["b"]
    return lambda: f(p.x, s, a, b)


def _paths(seed, paths, steps, mu, sigma, dt):
    np.random.seed(seed)
    x = np.ones(paths)
    root = math.sqrt(dt)
    for _ in range(steps):
        for j in range(paths):
            x[j] += mu * x[j] * dt + sigma * x[j] * root * np.random.standard_normal()
    return np.maximum(x - 1.0, 0.0).mean()


def _paths_grad(seed, paths, steps, mu, sigma, dt):
    """d mean(max(X_T - 1, 0)) / d(mu, sigma) by forward tangents along each path."""
    np.random.seed(seed)
    x, dmu, dsig = np.ones(paths), np.zeros(paths), np.zeros(paths)
    root = math.sqrt(dt)
    for _ in range(steps):
        for j in range(paths):
            z = np.random.standard_normal()
            grow = 1.0 + mu * dt + sigma * root * z
            dmu[j] = dmu[j] * grow + x[j] * dt
            dsig[j] = dsig[j] * grow + x[j] * root * z
            x[j] *= grow
    itm = x > 1.0
    return np.array([(dmu * itm).mean(), (dsig * itm).mean()])


def _sum_tanh(x):
    total = 0.0
    for i in range(x.size):
        total += math.tanh(x[i])
    return total


def _log_softmax_scan(z0, steps):
    """LSM: each row's max, log-sum-exp and new values in one pass over its k entries."""
    n, k = z0.shape
    z, out = z0.copy(), np.empty_like(z0)
    for _ in range(steps):
        for i in range(n):
            top = -np.inf
            for j in range(k):
                top = max(top, z[i, j])
            total = 0.0
            for j in range(k):
                total += math.exp(z[i, j] - top)
            lse = top + math.log(total)
            for j in range(k):
                out[i, j] = z[i, j] - lse + z0[i, j]
        z, out = out, z
    return z


def _softmax_train(X, labels, W0, steps, lr):
    n, d = X.shape
    k = W0.shape[1]
    W, g, z = W0.copy(), np.empty_like(W0), np.empty(k)
    losses = np.empty(steps)
    for s in range(steps):
        g[:] = 0.0
        total = 0.0
        for i in range(n):
            top = -np.inf
            for j in range(k):
                acc = 0.0
                for f in range(d):
                    acc += X[i, f] * W[f, j]
                z[j] = acc
                top = max(top, acc)
            lse = 0.0
            for j in range(k):
                lse += math.exp(z[j] - top)
            lse = top + math.log(lse)
            total += lse - z[labels[i]]
            for j in range(k):  # d loss_i / d z_j = softmax_j - [j == label]
                dz = math.exp(z[j] - lse) - (1.0 if j == labels[i] else 0.0)
                for f in range(d):
                    g[f, j] += X[i, f] * dz
        losses[s] = total / n
        for f in range(d):
            for j in range(k):
                W[f, j] -= lr * (g[f, j] / n)
    return W, losses


def _transposed_product(T, F):
    return T.T @ F


def _matmul(A, B):
    return A @ B


def _matrix_carry(W, C0, steps):
    C = C0
    for _ in range(steps):
        C = np.tanh(W @ C + 0.1)
    return C


def _make(kernel, *fields, parallel=False):
    def factory(p):
        f = numba.njit(kernel, parallel=parallel)
        args = [getattr(p, name) for name in fields]
        return lambda: f(*args)
    return factory


def w3(p):
    rnn = numba.njit(_rnn)

    def run():
        hs = rnn(p.W, p.U, p.b, p.xs, p.h0)
        return hs[-1], hs[1:]
    return run


def w3g(p):
    rnn, adjoint = numba.njit(_rnn), numba.njit(_rnn_adjoint)
    return lambda: adjoint(p.W, p.U, p.xs, rnn(p.W, p.U, p.b, p.xs, p.h0))


def w5(p):
    newton, adjoint = numba.njit(_newton), numba.njit(_sqrt_adjoint)
    return lambda: adjoint(newton(p.a, p.max_steps))


def _spmv_loop(vals, rows, cols, x0, b, steps):
    x = x0.copy()
    y = np.empty_like(x)
    for _ in range(steps):
        y[:] = b
        for k in range(vals.size):
            y[rows[k]] += vals[k] * x[cols[k]]
        for i in range(x.size):
            x[i] = math.tanh(y[i])
    return x


def _spmv_grad(vals, rows, cols, x0, b, steps):
    n = x0.size
    xs = np.empty((steps + 1, n))  # the forward pass's states: the adjoint reads them
    xs[0] = x0
    for t in range(steps):
        y = b.copy()
        for k in range(vals.size):
            y[rows[k]] += vals[k] * xs[t, cols[k]]
        for i in range(n):
            xs[t + 1, i] = math.tanh(y[i])
    g, gx, gy = np.zeros(vals.size), np.ones(n), np.empty(n)
    for t in range(steps - 1, -1, -1):
        for i in range(n):
            gy[i] = gx[i] * (1.0 - xs[t + 1, i] ** 2)
            gx[i] = 0.0
        for k in range(vals.size):
            g[k] += gy[rows[k]] * xs[t, cols[k]]
            gx[cols[k]] += gy[rows[k]] * vals[k]
    return g


def _fill(x, rows):
    buf = np.zeros((rows, x.shape[0]))
    for i in range(rows):
        for j in range(x.shape[0]):
            buf[i, j] = np.sin(x[j] * i)
    return buf


IMPLS = {"FILL": _make(_fill, "x", "rows"), "W9": _make(_paths, "seed", "paths", "steps", "mu", "sigma", "dt"),
         "W9g": _make(_paths_grad, "seed", "paths", "steps", "mu", "sigma", "dt"),
         "W8": _make(_spmv_loop, "vals", "rows", "cols", "x0", "b", "steps"),
         "W8g": _make(_spmv_grad, "vals", "rows", "cols", "x0", "b", "steps"),
         "KF": _make(_kalman, "F", "Q", "H", "R", "zs", "x0", "P0"),
         "W1": _make(_scan1, "xs"), "W2": _make(_scan1_adjoint, "xs"), "W3": w3, "W3g": w3g,
         "W4": _make(_newton, "a", "max_steps"), "W4s": _make(_newton, "a", "max_steps"),
         "MB": _make(_mandelbrot, "c", "max_steps"),
         "HT": _make(_heavy_tail, "a", "x0", "tol", "max_steps", parallel=True),
         "W5": w5, "W6": _make(_deep_grad, "W", "xs", "c0"), "W7": _make(_pendulum, "s0", "xs"),
         "RM": wl.w3g_with_no_input(w3g), "D": _make(_add1, "x"), "HS": heat, "HSat": heat,
         "HS32": heat,
         "Egrad-jit": _make(_loss_grad, "a"), "Escan-jit": _make(_scan1, "xs"), "Dmix": dmix,
         "Dmix-arrays": dmix_arrays, "ST": _make(_sum_tanh, "x"),
         "SX": _make(_softmax_train, "X", "labels", "W0", "steps", "lr"),
         "LSM": _make(_log_softmax_scan, "z0", "steps"),
         "MM": _make(_matmul, "A", "B"),
         **{w.name: _make(_transposed_product, "T", "F") for w in wl.WORKLOADS
            if w.group == "TF"},
         **{w.name: _make(_matrix_carry, "W", "C0", "steps") for w in wl.WORKLOADS
            if w.group == "MC"}}
