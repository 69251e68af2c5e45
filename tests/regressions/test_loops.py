"""Regressions: loop programs of the shapes the differential fuzzer (tests/loops/test_fuzz.py)
generates, each one a bug once. Every check runs the program on the three paths
(the interpreter, eager with loops compiled, jit), each in a forked child so that
a crash fails the test rather than the test process, and compares the gradient
with central differences.

The first five were found before the fuzzer (and fixed); the ones after them were
found by it (see each test's docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

import fuzz_programs as fuzz
import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import assert_trees_close
from rune_jit._src import config

PATHS = ("interpreter", "eager native", "jit")
X = np.array([0.3, -0.5, 0.7, 0.1])


def on_path(path: str, fn, args):
    def go():
        config.backend = "interpret" if path == "interpreter" else "native"
        with np.errstate(all="ignore"):
            return (rune.jit(fn) if path == "jit" else fn)(*args)

    return fuzz.isolated(go, timeout=300)


def agree(fn, *args, rtol: float = 1e-10, want=None):
    """fn(*args) on the three paths: each returns, and all agree (with `want`, if given,
    else with the interpreter). -> the interpreter's result."""
    res = {p: on_path(p, fn, args) for p in PATHS}
    bad = {p: f"{k}: {v!r}" for p, (k, v) in res.items() if k != "ok"}
    assert not bad, f"paths that did not return: {bad}"
    base = res["interpreter"][1] if want is None else want
    for p, (_, v) in res.items():
        try:
            assert_trees_close(v, base, rtol=rtol, atol=rtol)
        except AssertionError as e:
            raise AssertionError(f"{p}: {v!r}, expected {base!r}\n{e}") from None
    return res["interpreter"][1]


def central_grad(f, args, argnums, eps: float):
    """The gradient of scalar f by central differences, element by element (float64
    arithmetic on the perturbation, arguments kept in their dtype)."""
    out = []
    for i in argnums:
        x = np.asarray(args[i])
        g = np.zeros(x.shape)
        for j in np.ndindex(x.shape):
            def at(sign, i=i, j=j, x=x):
                y = x.astype(np.float64).copy()
                y[j] += sign * eps
                a = list(args)
                a[i] = y.astype(x.dtype)
                with np.errstate(all="ignore"):
                    return float(f(*a))
            # the step as the argument's dtype holds it
            y = x.astype(np.float64).copy()
            y[j] += eps
            hi = float(y.astype(x.dtype)[j])
            y[j] -= 2 * eps
            lo = float(y.astype(x.dtype)[j])
            g[j] = (at(1) - at(-1)) / (hi - lo)
        out.append(g)
    return out


def grads_agree(scalar, args, argnums, rtol: float, eps: float, fd_rtol: float,
                want=None):
    """grad on the three paths agrees; the interpreter's agrees with central
    differences (and check_grads passes); -> the gradient."""
    g = rune.grad(scalar, argnums=argnums)
    got = agree(g, *args, rtol=rtol)
    with fuzz.backend("interpret"):
        fd = central_grad(scalar, args, argnums if isinstance(argnums, tuple) else (argnums,),
                          eps)
        rune.check_grads(scalar, *args, eps=eps, modes=("fwd", "rev"))
    flat = got if isinstance(argnums, tuple) else (got,)
    for k, (a, b) in enumerate(zip(flat, fd)):
        np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=fd_rtol, atol=fd_rtol,
                                   err_msg=f"grad of argument {argnums} [{k}] against "
                                           "central differences")
    if want is not None:
        for a, b in zip(flat, want):
            np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=1e-3, atol=1e-4)
    return got


# ------------------------------------------------------------- fixed before the fuzzer


def f2(x):
    def outer(acc, _):
        v, ys = rune.scan(lambda c, r: (c * 0.5, 7.0), x, x)  # ys must be [7, 7, 7, 7]
        return (acc[0] + v, acc[1] + ys), None
    return rune.scan(outer, (rnp.zeros(4), rnp.zeros(4)), length=1)[0]


def test_nested_scan_with_constant_ys_returns_the_constant():
    got = agree(f2, X, want=(X / 16, np.full(4, 7.0)))
    assert got[1].tolist() == [7.0] * 4
    grads_agree(lambda x: rnp.sum(f2(x)[0]) + rnp.sum(f2(x)[1]), [X], 0, 1e-10, 1e-5, 1e-6,
                want=[np.full(4, 1 / 16)])


def g3(x):
    v1 = x * 2.0

    def outer(c0, _):
        v, _ = rune.scan(lambda c, r: (c * 0.5, None), v1, x)
        return rnp.tanh(rnp.sum(v) + c0 * 0.5), None
    return rune.scan(outer, np.float64(0.0), length=1)[0]


def test_grad_through_a_nested_scan_whose_init_is_captured():
    agree(g3, X)
    grads_agree(g3, [X], 0, 1e-10, 1e-5, 1e-6, want=[np.full(4, 0.1243)])


def p4(x, s):
    def outer(c, r):
        w = rune.iterate(lambda z: rnp.tanh(s + z), rnp.sin(r), until=lambda z: z > -10.0,
                         max_steps=50)
        return rnp.tanh(c + w), None
    return rune.scan(outer, s, x)[0]


@pytest.mark.slow  # 8 s of compiles (three paths, two gradients): the quick run's 5 minutes
def test_grad_of_a_scan_holding_an_iterate_that_takes_zero_steps():
    args = [np.array([0.3, -0.5]), np.float64(0.4)]
    agree(p4, *args)
    s, x = 0.4, args[0]
    want = (1 - np.tanh(np.tanh(s + np.sin(x[0])) + np.sin(x[1])) ** 2) * (
        1 - np.tanh(s + np.sin(x[0])) ** 2)
    grads_agree(p4, args, 1, 1e-10, 1e-5, 1e-6, want=[want])
    grads_agree(p4, args, (0, 1), 1e-10, 1e-5, 1e-6)


def prog5(x, s, f):  # x f64[4], s f64 scalar, f f32[4]
    xr = x[::-1]
    (c, n), ys = rune.scan(lambda cn, r: ((rnp.tanh(cn[0] * 1.5), cn[1] + 1), s + f),
                           (s, np.int64(0)), xr)
    a = rnp.matmul(ys, -1.25 * f + 1.25)
    return c + rnp.sum(xr * 0.25 / (1.0 + a * a))


def test_jit_grad_of_a_scan_with_f64_ys_from_a_f32_capture_over_reversed_xs():
    args = [X, np.float64(0.4), np.array([0.2, -0.1, 0.5, 0.3], np.float32)]
    agree(prog5, *args, rtol=1e-5)
    # float32 f: central differences step by 1e-2 (at 1e-4 they are float32 rounding)
    grads_agree(prog5, args, (0, 1, 2), 1e-5, 1e-3, 1e-3)


def h6(s, w):
    def outer(c, _):
        v = rune.iterate(lambda z: rnp.tanh(z + w) + 2.0, s, until=lambda z: z > 1.0,
                         max_steps=2)
        return rnp.tanh(v + c), None
    return rune.scan(outer, s, length=2)[0]


def test_grad_of_an_iterate_in_a_scan_step_reading_a_float32_value():
    args = [np.float64(0.3), np.float32(0.2)]
    agree(h6, *args, rtol=1e-6)
    grads_agree(h6, args, (0, 1), 1e-5, 1e-3, 1e-3)


# ------------------------------------------------------------- found by the fuzzer


def const_ys_after_carry(x):
    c, ys = rune.scan(lambda c, _: (c * 0.5, 2.5), x, length=1)  # ys = [2.5]: f64[1]
    return c, ys


def test_jvp_of_a_scan_with_constant_ys_gives_ys_tangents_their_type():
    """Fuzz seeds 138, 205: the zero tangent of a constant ys got the type of the
    carry before it (f64[4] for f64[1] here), and an op reading that tangent raised
    ("add: operand shapes [(1,), (4,)] differ", "cannot concatenate float32[2,3] and
    float64[4]")."""
    tx = np.ones(4)
    for path in PATHS:
        kind, res = on_path(path, lambda x, t: rune.jvp(const_ys_after_carry, (x,), (t,)),
                            (X, tx))
        assert kind == "ok", (path, res)
        (c, ys), (tc, tys) = res
        assert np.shape(tys) == np.shape(ys) == (1,), (path, tys)
        assert np.asarray(tys).tolist() == [0.0] and np.allclose(tc, 0.5 * tx)

    def reads_ys(x):
        c, ys = const_ys_after_carry(x)
        return rune.iterate(lambda z: (z[0] * 0.5, z[1] + rnp.max(z[0])), (c, ys),
                            until=lambda z: rnp.min(z[0]) > 0.0, max_steps=3)[1]
    agree(lambda x, t: rune.jvp(reads_ys, (x,), (t,)), X * 0.0 + 0.5, tx)


def dead_scan_that_raises(x):
    def step(c, r):
        # |tanh| < 1: until never holds, so every call raises IterateError
        z = rune.iterate(lambda z: rnp.tanh(z), rnp.tanh(r), until=lambda z: z > 1.5,
                         max_steps=3)
        return c + z, None
    rune.scan(step, np.float64(0.0), x)  # its results are not used
    return rnp.sum(x * 2.0)


@pytest.mark.parametrize("transform", ["value", "grad", "vmap", "jvp"])
def test_a_dead_scan_holding_an_iterate_still_raises(transform):
    """Fuzz seed 559: an iterate is never removed as dead code (docs/semantics.md), but
    under jit a scan none of whose results is used was dropped with the iterate in its
    step, so jit returned where the eager paths raise IterateError."""
    fn, args = {
        "value": (dead_scan_that_raises, (X,)),
        "grad": (rune.grad(dead_scan_that_raises), (X,)),
        "vmap": (rune.vmap(dead_scan_that_raises), (np.stack([X, X]),)),
        "jvp": (lambda x, t: rune.jvp(dead_scan_that_raises, (x,), (t,)), (X, X)),
    }[transform]
    for path in PATHS:
        kind, res = on_path(path, fn, args)
        assert kind == "err" and isinstance(res, rune.IterateError), (
            f"{path}: {kind} {res!r}, expected IterateError")


def dead_inner_scan_that_raises(x):  # x f64[2, 3]
    def outer(c, r):
        def inner(c2, r2):
            rune.iterate(lambda z: z * 0.5, r2, until=lambda z: z > 1.5, max_steps=1)
            return c2, None
        rune.scan(inner, c, r)  # its results are not used
        return c + rnp.sum(r), None
    return rune.scan(outer, np.float64(0.0), x)[0]


def test_a_dead_scan_nested_in_a_loop_step_still_raises():
    """Fuzz seeds 3711, 7901: the dead scan sits in another scan's step, so eager native
    (which compiles the outer scan whole) drops it as well as jit."""
    x = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    for path in PATHS:
        kind, res = on_path(path, dead_inner_scan_that_raises, (x,))
        assert kind == "err" and isinstance(res, rune.IterateError), (
            f"{path}: {kind} {res!r}, expected IterateError")


def scan_without_derivatives(x):
    def step(c, r):
        rune.iterate(lambda z: z * 0.5, r, until=lambda z: z > 1.5, max_steps=1)
        return c + 1, 2.5
    n, ys = rune.scan(step, np.int64(0), x)
    return rnp.sum(ys) + rnp.sum(x)


def test_a_scan_dead_only_in_the_gradient_still_raises():
    """Fuzz seed 10491: nothing the scan computes has a derivative, so the gradient
    program does not need it; jit(grad) dropped it, with the iterate that raises."""
    for path in PATHS:
        kind, res = on_path(path, rune.grad(scan_without_derivatives), (X[:3],))
        assert kind == "err" and isinstance(res, rune.IterateError), (
            f"{path}: {kind} {res!r}, expected IterateError")


def test_jvp_of_where_broadcasts_a_scalar_tangent():
    """Fuzz seeds 5206, 14728, 15225, 15246, 16652: select's jvp puts a zero of the
    operand's shape for a branch whose tangent is zero, so where(scalar test, array,
    traced scalar) gets a scalar tangent for an array value. In a loop step (with a
    carry whose tangent is zero) the wrong shape reaches rev, reshape, sum(axis=0) or the
    carry type check of an iterate, and grad and jvp raise."""
    x = np.array([0.3, -0.5, 0.7])

    def h(s):
        return rnp.where(s > 0.0, rnp.sin(x), s)

    for path in PATHS:
        kind, res = on_path(path, lambda s, t: rune.jvp(h, (s,), (t,)),
                            (np.float64(-0.3), np.float64(1.0)))
        assert kind == "ok", (path, res)
        assert np.shape(res[1]) == (3,) and np.allclose(res[1], 1.0), (path, res)

    def in_a_loop(s):
        def step(c, _):  # c: its tangent stays zero
            return c, rnp.sum(rnp.where(s > 0.0, c, s)[::-1])
        return rune.scan(step, rnp.zeros(3), length=2)[1]

    agree(lambda s, t: rune.jvp(in_a_loop, (s,), (t,)), np.float64(-0.3), np.float64(1.0),
          want=(np.full(2, -0.9), np.full(2, 3.0)))
    grads_agree(lambda s: rnp.sum(in_a_loop(s)), [np.float64(-0.3)], 0, 1e-10, 1e-5, 1e-6,
                want=[np.array(6.0)])


def unused_while_in_a_scan_step(s):
    def step(c, _):
        # its results are unused; a loop is still never dropped (it may raise)
        rune.while_loop(lambda kz: kz[0] < 1, lambda kz: (kz[0] + 1, kz[1] * kz[1]),
                        (np.int64(0), c))
        return c, None
    return rune.scan(step, s, length=1)[0]


def test_grad_of_a_scan_holding_an_unused_while_loop_without_max_steps():
    """Fuzz seeds 60, 221, 297, 322, 404 (and more past 200): reverse mode recomputes a
    while_loop without max_steps in the scan step's backward pass, and bound the loop
    again with its body region as it was: the gradient program held one region twice
    (IRError: assigned twice, under RUNE_JIT_VERIFY as the suite runs). The recomputed
    loop's regions are copies with variables of their own (ir.renamed)."""
    agree(rune.grad(lambda s: rnp.sum(unused_while_in_a_scan_step(s))), np.array([0.98, 0.72]),
          want=np.ones(2))


DOUBLE_FREE = """
import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
a1 = np.array([0.99, 0.78])
def loss(a1):
    def body(c):
        k, x = c
        def outer_step(u, _):
            def inner_step(v, r):
                return rnp.tanh(r / (1.0 + v * v) + v), None
            rune.scan(rune.remat(inner_step, policy=rune.checkpoint_policies.dots_saveable),
                      x, a1, length=2)
            return u * 0.5, None
        rune.scan(rune.remat(outer_step), x, length=0)
        return k + 1, x * 0.5
    return rnp.sum(rune.while_loop(lambda c: c[0] < 21, body, (np.int64(0), rnp.zeros(2)),
                                   max_steps=21)[1] - a1)
print(rune.grad(loss)(a1))
"""


def test_eager_grad_of_a_zero_length_remat_scan_in_a_while_loop_does_not_crash():
    """Fuzz seed 1362 of the widened generator (commit 1b1ed7d): eager grad of a bounded
    while_loop whose step holds a zero-length scan, whose tape has rows of no bytes
    (float64[21, 0, 2]). Growing it asked realloc for 0 bytes, which frees the buffer;
    the failure exit freed it again (glibc: double free). A row of no bytes now asks
    for one byte. Run in a child so a crash fails this test, not the test process."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", DOUBLE_FREE], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
