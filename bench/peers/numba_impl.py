"""The workloads in Numba: @njit loops over NumPy arrays, adjoints written by hand.

Matrix-vector products are explicit loops, ordered to vectorize: Numba's np.dot needs
SciPy's BLAS, which the bench extra does not install. Each factory compiles a NEW
dispatcher (njit of the plain Python function), so its first call compiles.
"""

from __future__ import annotations

import math

import numba
import numpy as np

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


def _add1(x):
    return x + 1


def _make(kernel, *fields):
    def factory(p):
        f = numba.njit(kernel)
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


IMPLS = {"W1": _make(_scan1, "xs"), "W2": _make(_scan1_adjoint, "xs"), "W3": w3, "W3g": w3g,
         "W4": _make(_newton, "a", "max_steps"), "W4s": _make(_newton, "a", "max_steps"),
         "W5": w5, "W6": _make(_deep_grad, "W", "xs", "c0"), "W7": _make(_pendulum, "s0", "xs"),
         "D": _make(_add1, "x")}
