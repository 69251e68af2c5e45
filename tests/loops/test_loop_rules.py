"""SPEC §3, one test per rule; the rules about the IR are checked on the IR."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import forward_and_reverse, prims, scan_parts, scan_ys, top
from rune_jit._src.ir import count_eqns


def step(c, x):
    n = rnp.sin(c) * x + rnp.cos(x)
    return n, n * c


def scan_fn(xs):
    c, ys = rune.scan(step, np.float64(0.3), xs)
    return c + rnp.sum(ys)


def iterate_fn(a, max_steps):
    return rune.iterate(lambda x: x * 0.5 + rnp.sin(x) * 0.1, a, until=lambda x: x < 1.0,
                        max_steps=max_steps)


SCAN_PROGRAMS = {
    "plain": lambda xs: scan_fn(xs),
    "grad": rune.grad(scan_fn),
    "vmap": rune.vmap(scan_fn, in_axes=1),
    "jvp": lambda xs: rune.jvp(scan_fn, (xs,), (xs,)),
    "vmap of grad": rune.vmap(rune.grad(scan_fn), in_axes=1),
    "grad of grad": rune.grad(lambda xs: rnp.sum(rune.grad(scan_fn)(xs))),
}
ITERATE_PROGRAMS = {  # max_steps -> the program
    "plain": lambda m: lambda a: iterate_fn(a, m),
    "grad": lambda m: rune.grad(lambda a: iterate_fn(a, m)),
    "vmap": lambda m: rune.vmap(lambda a: iterate_fn(a, m)),
    "jvp": lambda m: lambda a: rune.jvp(lambda a: iterate_fn(a, m), (a,), (a,)),
    "vmap of grad": lambda m: rune.vmap(rune.grad(lambda a: iterate_fn(a, m))),
}


def scan_ir(program, n):
    xs = np.linspace(0.0, 1.0, 2 * n).reshape(n, 2)
    return rune.make_ir(SCAN_PROGRAMS[program])(xs if program.startswith("vmap") else xs[:, 0])


def iterate_ir(program, max_steps):
    a = np.array([3.0, 40.0]) if program.startswith("vmap") else np.float64(3.0)
    return rune.make_ir(ITERATE_PROGRAMS[program](max_steps))(a)


# ------------------------------------------------------------- 1. traced once


@pytest.mark.parametrize("program", list(SCAN_PROGRAMS))
def test_rule1_scan_ir_size_does_not_depend_on_the_number_of_rows(program):
    assert count_eqns(scan_ir(program, 10)) == count_eqns(scan_ir(program, 100_000))


@pytest.mark.parametrize("program", list(ITERATE_PROGRAMS))
def test_rule1_iterate_ir_size_does_not_depend_on_max_steps(program):
    assert count_eqns(iterate_ir(program, 3)) == count_eqns(iterate_ir(program, 100_000))


def test_rule1_the_step_is_traced_a_fixed_number_of_times():
    calls = []

    def counted(c, x):
        calls.append(None)
        return c + x, None

    def traces(n):
        calls.clear()
        rune.make_ir(lambda xs: rune.scan(counted, np.float64(0.0), xs)[0])(np.ones(n))
        return len(calls)

    assert traces(10) == traces(100_000) == 1


def nested_scans(depth, calls):
    """A scan over a (2,) * depth array, each level a scan over the next axis."""
    def inner(c, x):
        calls.append(None)
        return c * x + 1.0, None

    f = inner
    for _ in range(depth - 1):
        f = (lambda g: lambda c, x: (rune.scan(g, c, x)[0], None))(f)
    return lambda c: rune.scan(f, c, np.full((2,) * depth, 0.5))[0]


NESTED_TRANSFORMS = {
    "plain": lambda f: f,
    "grad": rune.grad,
    "jvp": lambda f: lambda c: rune.jvp(f, (c,), (c,)),
    "vmap": lambda f: lambda c: rune.vmap(f)(rnp.full(3, c)),
    "grad of grad": lambda f: rune.grad(rune.grad(f)),
    "vmap of grad": lambda f: lambda c: rune.vmap(rune.grad(f))(rnp.full(3, c)),
}


@pytest.mark.parametrize("transform", list(NESTED_TRANSFORMS))
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_rule1_a_nested_step_is_traced_once_at_any_depth(transform, depth):
    """A step traced twice per level would be traced 2**depth times."""
    calls = []
    rune.make_ir(NESTED_TRANSFORMS[transform](nested_scans(depth, calls)))(np.float64(1.0))
    assert len(calls) == 1


def test_rule1_a_weak_init_costs_one_probe_trace():
    calls = []

    def counted(c):
        calls.append(None)
        return c * np.float32(0.5)

    out = rune.iterate(counted, 4, until=lambda c: c < 1, max_steps=10)
    assert out.dtype == np.float32 and len(calls) == 2


# ------------------------------------------------------------- 2. transformations are loops


@pytest.mark.parametrize("program", [p for p in SCAN_PROGRAMS if p != "plain"])
def test_rule2_every_transformation_of_a_scan_is_a_scan(program):
    small, large = scan_ir(program, 10), scan_ir(program, 100_000)
    assert top(small, "scan"), f"no scan at the top of:\n{small}"
    assert count_eqns(small) == count_eqns(large)


@pytest.mark.parametrize("reverse", [False, True])
def test_rule2_reverse_mode_runs_the_transposed_step_backwards(reverse):
    f = lambda xs: rune.scan(step, np.float64(0.3), xs, reverse=reverse)[0]
    fwd, rev = forward_and_reverse(rune.make_ir(rune.grad(f))(np.ones(5)))
    assert fwd.params["reverse"] is reverse and rev.params["reverse"] is (not reverse)


@pytest.mark.parametrize("program", [p for p in ITERATE_PROGRAMS if p != "plain"])
def test_rule2_every_transformation_of_an_iterate_is_a_loop(program):
    ir = iterate_ir(program, 50)
    [it] = top(ir, "iterate")
    if program.startswith("vmap"):
        assert it.params["lanes"] == (2,)
    if "grad" in program:
        [back] = top(ir, "scan")
        assert back.params["reverse"] and back.params["length"] == 50


# ------------------------------------------------------------- 3. residuals


def running_product_total(xs):
    def body(acc, row):
        nxt = acc * row
        return nxt, nxt

    return rune.scan(body, np.float64(1.0), xs)[0]


def stacked(values, n):
    return [v for v in values if v.type.shape[:1] == (n,) and v.type.dtype == np.float64]


def test_rule3_running_product_saves_one_float_a_step_and_reads_xs_in_place():
    n = 7
    ir = rune.make_ir(rune.grad(running_product_total))(np.arange(1.0, n + 1))
    [xs] = ir.params
    fwd, rev = forward_and_reverse(ir)
    [tape] = stacked(scan_ys(fwd), n)
    assert tape.type.shape == (n,)
    assert set(scan_parts(rev)[1]) == {xs, tape}
    assert not [e for e in top(ir, "copy") + top(ir, "broadcast_in_dim")
                if xs in e.inputs], "xs is copied instead of read"


def test_rule3_a_loop_constant_is_saved_once_not_per_step():
    """sin(w) is read by every step and by the step's transpose: it is computed once,
    outside the loops, and the reverse loop reads that one value."""
    n = 6

    def f(xs, w):
        return rnp.sum(rune.scan(lambda c, x: (c * rnp.sin(w) + x, None), np.zeros(2), xs)[0])

    ir = rune.make_ir(rune.grad(f, argnums=(0, 1)))(np.ones((n, 2)), np.array([0.3, 0.4]))
    w = ir.params[1]
    [sin_w] = [e.outputs[0] for e in top(ir, "sin") if e.inputs == (w,)]
    assert sin_w.type.shape == (2,)
    fwd, rev = forward_and_reverse(ir)
    assert sin_w in rev.captures or sin_w in rev.inputs
    assert "sin" not in prims(fwd.params["step"]) | prims(rev.params["step"])
    assert len(stacked(scan_ys(fwd), n)) == 1  # the carry, which d/dw reads


def test_rule3_iterate_tape_has_max_steps_rows_and_runs_back_per_lane():
    max_steps = 40
    g = rune.grad(lambda a: iterate_fn(a, max_steps))
    ir = rune.make_ir(rune.vmap(g))(np.array([0.5, 3.0, 1e9]))
    [it] = top(ir, "iterate")
    nc = it.params["num_carry"]
    counts, tapes = it.outputs[nc], it.outputs[nc + 1:]
    assert counts.type.shape == (3,) and tapes
    assert all(t.type.size == max_steps * 3 for t in tapes)
    [back] = top(ir, "scan")
    assert back.params["counted"] and back.inputs[0] is counts
    assert back.params["reverse"] and back.params["length"] == max_steps

    a = np.array([0.5, 3.0, 1e9, 1e3, 1.5])
    got = rune.vmap(g)(a)
    np.testing.assert_allclose(got, [g(x) for x in a], rtol=1e-14)
    assert got[0] == 1.0  # a lane that takes no step


# ------------------------------------------------------------- 4. iterate


def newton(a, max_steps=50):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.all(rnp.abs(x * x - a) < 1e-12),
                        max_steps=max_steps)


def test_rule4_lanes_stop_on_their_own_and_the_error_names_the_first_lane():
    a = np.array([1.0, 16.0, 1e6])
    assert rune.vmap(newton)(a).tolist() == [1.0, 4.000000000000051, 1000.0]
    with pytest.raises(rune.IterateError) as err:
        rune.vmap(lambda a: newton(a, max_steps=3))(a)
    assert str(err.value) == (
        "rune_jit.iterate: until is still false after max_steps = 3 steps, in lane 1")


# ------------------------------------------------------------- 5. root


def test_rule5_root_derivative_comes_from_the_residual():
    a = np.array([4.0, 9.0])
    sqrt_root = lambda a: rune.root(lambda x: x * x - a, lambda: newton(a))
    g = rune.grad(lambda a: rnp.sum(sqrt_root(a)))(a)
    assert g.tolist() == [0.25, 0.16666666666666666]
    rune.check_grads(lambda a: rnp.sum(sqrt_root(a)), a)


# ------------------------------------------------------------- 6. remat


def test_rule6_remat_keeps_arguments_and_recomputes_in_the_backward_loop():
    layer = lambda x: rnp.tanh(rnp.sin(x))

    def deep(lyr):
        return lambda xs: rune.scan(lambda acc, row: (lyr(acc + row),) * 2,
                                    np.float64(0.5), xs)[0]

    xs = np.linspace(-0.7, 1.3, 6)
    fwd_r, rev_r = forward_and_reverse(rune.make_ir(rune.grad(deep(rune.remat(layer))))(xs))
    fwd_p, rev_p = forward_and_reverse(rune.make_ir(rune.grad(deep(layer)))(xs))
    assert len(stacked(scan_ys(fwd_r), 6)) == 1 < len(stacked(scan_ys(fwd_p), 6))
    assert "sin" in prims(rev_r.params["step"]) and "sin" not in prims(rev_p.params["step"])
    gap = np.max(np.abs(rune.grad(deep(rune.remat(layer)))(xs) - rune.grad(deep(layer))(xs)))
    assert gap < 1e-12


# ------------------------------------------------------------- 7. errors


FAILING = {
    "grad": lambda a: rune.grad(lambda a: newton(a, 3))(a[1]),
    "jvp": lambda a: rune.jvp(lambda a: newton(a, 3), (a,), (a,)),
    "vmap": lambda a: rune.vmap(lambda a: newton(a, 3))(a),
    "vmap of grad": lambda a: rune.vmap(rune.grad(lambda a: newton(a, 3)))(a),
    "grad of vmap": lambda a: rune.grad(lambda a: rnp.sum(rune.vmap(lambda a: newton(a, 3))(a)))(a),
    "jvp of grad": lambda a: rune.jvp(rune.grad(lambda a: newton(a, 3)), (a[1],), (a[1],)),
    "inside a scan": lambda a: rune.scan(lambda c, x: (c + newton(x, 3), None),
                                         np.float64(0.0), a),
    "root's solve": lambda a: rune.grad(lambda a: rnp.sum(rune.root(
        lambda x: x * x - a, lambda: newton(a, 3))))(a),
}


@pytest.mark.parametrize("how", list(FAILING))
def test_rule7_iterate_error_propagates_out_of_transformations(how):
    with pytest.raises(rune.IterateError, match="until is still false after max_steps = 3"):
        FAILING[how](np.array([1.0, 16.0, 1e6]))
