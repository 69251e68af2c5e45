"""rune_jit.check and experimental.checkify: run-time checks that fail the call with the
failing values, the lane under vmap and the step of each enclosing loop; eager (the
interpreter, and loops compiled as a unit), jitted, and under the transformations."""

import pickle

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit.experimental import checkify



def at(marker: str) -> str:
    """'file:line' of the line of this file that ends with the comment `# marker`."""
    with open(__file__) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# {marker}"):
                return f"{__file__}:{n}"
    raise LookupError(marker)


def fails(f, *args) -> str:
    with pytest.raises(rune.CheckError) as info:
        f(*args)
    return str(info.value)


def safe_log(x):
    rune.check(x > 0, "log of {}", x)
    return rnp.log(x)


# ------------------------------------------------------------- outside loops


def test_a_check_that_holds_changes_nothing(mode):
    assert mode(safe_log)(np.e) == 1.0
    np.testing.assert_array_equal(mode(rune.vmap(safe_log))(np.array([1.0, np.e])), [0, 1])


def test_the_message_is_formatted_with_the_failing_values(mode):
    def f(x, n):
        rune.check(x < n, "x = {:.2f} is not below {n} ({!r})", x, x + 1, n=n)
        return x

    assert fails(mode(f), np.float64(2.5), np.int64(2)) == (
        "x = 2.50 is not below 2 (np.float64(3.5))")
    assert issubclass(rune.CheckError, ValueError)


def test_vmap_names_the_first_failing_lane(mode):
    assert fails(mode(rune.vmap(safe_log)), np.array([1.0, -2.0, -3.0])) == (
        "log of -2.0, in lane 1")


def test_nested_vmaps_name_the_lane_outermost_first(mode):
    xs = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]])
    assert fails(mode(rune.vmap(rune.vmap(safe_log))), xs) == "log of -6.0, in lane (1, 2)"
    # in_axes=1 maps the columns first: lane (column, row)
    assert fails(mode(rune.vmap(rune.vmap(safe_log), in_axes=1)), xs) == (
        "log of -6.0, in lane (2, 1)")


def test_a_predicate_the_map_does_not_change_names_no_lane(mode):
    def f(x, y):
        rune.check(y > 0, "y = {}", y)
        return x * y

    g = mode(rune.vmap(f, in_axes=(0, None)))
    assert fails(g, np.ones(3), np.float64(-1.0)) == "y = -1.0"


def test_the_values_may_vary_by_lane_where_the_predicate_does_not(mode):
    def f(x, y):
        rune.check(y > 0, "y = {} at x = {}", y, x)
        return x * y

    g = mode(rune.vmap(f, in_axes=(0, None)))
    assert fails(g, np.array([3.0, 4.0]), np.float64(-1.0)) == "y = -1.0 at x = 3.0, in lane 0"


def test_a_check_nothing_reads_still_runs(mode):
    def f(x):
        rune.check(x > 0, "x = {}", x)
        return np.float64(1.0)

    assert fails(mode(f), np.float64(-1.0)) == "x = -1.0"


def test_array_values_are_formatted_whole(mode):
    def f(x):
        rune.check(rnp.all(x > 0), "x = {}", x)
        return x

    assert fails(mode(f), np.array([1.0, -2.0])) == "x = [ 1. -2.]"


# ------------------------------------------------------------- in loops


def _running_sum(xs):
    def step(c, x):
        rune.check(c < 5, "c = {} at x = {}", c, x)
        return c + x, c

    return rune.scan(step, 0.0, xs)[0]  # SCAN


def test_scan_names_the_step(mode):
    assert mode(_running_sum)(np.arange(4.0)) == 6.0
    assert fails(mode(_running_sum), np.arange(5.0)) == (
        f"c = 6.0 at x = 4.0, at step 4 of the scan at {at('SCAN')}")


def test_vmapped_scan_names_the_lane_then_the_step(mode):
    xs = np.array([[0.0, 0.5, 0.5, 0.5], [0.0, 3.0, 3.0, 3.0], [0.0, 6.0, 6.0, 6.0]])
    assert fails(mode(rune.vmap(_running_sum)), xs) == (
        f"c = 6.0 at x = 6.0, in lane 2, at step 2 of the scan at {at('SCAN')}")


def test_nested_scans_name_the_innermost_step_first(mode):
    def f(xs):
        def outer(c, x):
            def inner(d, y):
                rune.check(d < 5, "d = {}", d)
                return d + x * y, None

            return rune.scan(inner, c, xs)[0], None  # INNER

        return rune.scan(outer, 0.0, xs)[0]  # OUTER

    assert fails(mode(f), np.arange(3.0)) == (
        f"d = 5.0, at step 2 of the scan at {at('INNER')}, "
        f"at step 2 of the scan at {at('OUTER')}")


def _steps_of(x):
    def step(c):
        rune.check(c[0] < 3.5, "c = {}", c[0])
        return c[0] + x, c[1] + 1

    return rune.iterate(step, (0.0, 0), until=lambda c: c[1] >= 4, max_steps=10)[0]  # ITER


def test_iterate_names_the_step(mode):
    assert mode(_steps_of)(1.0) == 4.0
    assert fails(mode(_steps_of), 2.0) == f"c = 4.0, at step 2 of the iterate at {at('ITER')}"


def test_vmapped_iterate_names_the_first_lane_of_the_first_failing_step(mode):
    xs = np.array([0.5, 1.5, 2.0, 3.0])  # lanes 2 and 3 fail, at steps 2 and 2
    assert fails(mode(rune.vmap(_steps_of)), xs) == (
        f"c = 4.0, in lane 2, at step 2 of the iterate at {at('ITER')}")
    assert fails(mode(rune.vmap(rune.vmap(_steps_of))), xs.reshape(2, 2)) == (
        f"c = 4.0, in lane (1, 0), at step 2 of the iterate at {at('ITER')}")


def _newton(a):
    def step(x):
        rune.check(x > 0, "x = {} for a = {}", x, a)
        return 0.5 * (x + a / x)

    return rune.iterate(step, a, until=lambda x: abs(x * x - a) <= 1e-12 * a,  # NEWTON
                        max_steps=100)


def test_iterate_in_blocks_of_lanes_names_the_first_failing_lane(mode):
    a = np.linspace(1.0, 100.0, 1000)
    np.testing.assert_allclose(mode(rune.vmap(_newton))(a), np.sqrt(a), rtol=1e-12)
    a[[777, 901]] = -4.0
    assert fails(mode(rune.vmap(_newton)), a) == (
        f"x = -4.0 for a = -4.0, in lane 777, at step 0 of the iterate at {at('NEWTON')}")


def _count_to(k, x, c0):
    def step(c):
        rune.check(c[1] < k, "stepped at n = {} >= k = {}", c[1], k)
        return c[0] + x, c[1] + 1.0

    c, _ = rune.iterate(step, (c0, 0.0), until=lambda c: c[1] >= k, max_steps=100)
    return rnp.mean(c)


@pytest.mark.parametrize("c0", [np.float64(0.0), np.zeros(3)], ids=["lane_blocks", "by_lane"])
def test_a_lane_that_stopped_checks_nothing(mode, c0):
    """Lanes stop at k = 1..7 steps while the others run: a stopped lane's carry fails the
    check, so the step is not checked there (compiled blocks of lanes of scalars evaluate
    it; a lane of arrays runs on its own)."""
    ks = np.arange(100.0) % 7 + 1
    f = mode(rune.vmap(lambda k: _count_to(k, 2.0, c0)))
    np.testing.assert_array_equal(f(ks), 2 * ks)
    g = mode(rune.vmap(rune.grad(lambda x, k: _count_to(k, x, c0)), in_axes=(None, 0)))
    np.testing.assert_array_equal(g(2.0, ks), ks)


def test_while_loop_and_fori_loop(mode):
    def w(x):
        def body(c):
            rune.check(c < 7, "c = {}", c)
            return c + x

        return rune.while_loop(lambda c: c < 10, body, 0.0)  # WHILE

    def f(x):
        def body(i, c):
            rune.check(c < 7, "c = {} at i = {}", c, i)
            return c + x

        return rune.fori_loop(0, 5, body, 0.0)  # FORI

    assert mode(w)(5.0) == 10.0
    assert fails(mode(w), 3.0) == f"c = 9.0, at step 3 of the iterate at {at('WHILE')}"
    assert fails(mode(f), 3.0) == f"c = 9.0 at i = 3, at step 3 of the scan at {at('FORI')}"


def test_cond_checks_the_branch_taken(mode):
    def f(x):
        return rune.cond(x > 0, lambda v: (rune.check(v < 1, "big {}", v), v)[1],
                         lambda v: (rune.check(v > -1, "small {}", v), v)[1], x)

    assert fails(mode(f), 3.0) == "big 3.0"
    assert fails(mode(f), -3.0) == "small -3.0"
    assert mode(f)(0.5) == 0.5


def test_vmapped_cond_checks_each_lane_in_the_branch_it_takes(mode):
    def f(x):
        return rune.cond(x > 0, lambda v: (rune.check(v > 0, "not positive {}", v), v)[1],
                         lambda v: (rune.check(v <= 0, "positive {}", v), -v)[1], x)

    np.testing.assert_array_equal(mode(rune.vmap(f))(np.array([-3.0, 0.5, 4.0])),
                                  [3.0, 0.5, 4.0])

    def g(x):  # in a scan step: lane 1 takes the checked branch with c = 3 at step 2
        def step(c, _):
            return rune.cond(c > 0, lambda v: (rune.check(v < 3, "big {}", v), v + 1.0)[1],
                             lambda v: v - 1.0, c), None

        return rune.scan(step, x, None, length=4)[0]  # COND_SCAN

    assert fails(mode(rune.vmap(g)), np.array([-3.0, 1.0, 0.5])) == (
        f"big 3.0, in lane 1, at step 2 of the scan at {at('COND_SCAN')}")


# ------------------------------------------------------------- derivatives


def test_grad_and_jvp_check_the_forward_values(mode):
    def f(x):
        rune.check(rnp.all(x > 0), "log of {}", x)
        return rnp.sum(rnp.log(x) * x)

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(mode(rune.grad(f))(x), np.log(x) + 1, rtol=1e-14)
    assert fails(mode(rune.grad(f)), np.array([1.0, -2.0])) == "log of [ 1. -2.]"
    assert fails(mode(lambda x: rune.jvp(safe_log, (x,), (1.0,))), -2.0) == "log of -2.0"
    rune.check_grads(f, x)


def test_vmap_of_grad_names_the_lane(mode):
    g = mode(rune.vmap(rune.grad(safe_log)))
    np.testing.assert_allclose(g(np.array([1.0, 4.0])), [1.0, 0.25])
    assert fails(g, np.array([1.0, 4.0, -1.0])) == "log of -1.0, in lane 2"


def test_grad_through_loops_checks_each_step(mode):
    g = mode(rune.grad(_running_sum))
    np.testing.assert_array_equal(g(np.arange(4.0)), np.ones(4))
    assert fails(g, np.arange(5.0)) == f"c = 6.0 at x = 4.0, at step 4 of the scan at {at('SCAN')}"
    h = mode(rune.vmap(rune.grad(_steps_of)))
    np.testing.assert_array_equal(h(np.array([0.5, 1.0])), [4.0, 4.0])
    assert fails(h, np.array([0.5, 2.0])) == (
        f"c = 4.0, in lane 1, at step 2 of the iterate at {at('ITER')}")


# ------------------------------------------------------------- compiled code


def test_debug_callbacks_before_a_failing_check_run_once():
    seen = []

    def f(xs):
        def step(c, x):
            rune.debug.callback(seen.append, x)
            rune.check(x < 2, "x = {}", x)
            return c + x, None

        return rune.scan(step, 0.0, xs)[0]

    with pytest.raises(rune.CheckError):
        rune.jit(f)(np.arange(4.0))
    assert [float(v) for v in seen] == [0.0, 1.0, 2.0]


def test_a_failing_call_does_not_spoil_the_next():
    g = rune.jit(_running_sum)
    for _ in range(2):
        assert fails(g, np.arange(5.0)).startswith("c = 6.0")
        assert g(np.arange(4.0)) == 6.0


def test_the_error_pickles():
    err = pickle.loads(pickle.dumps(rune.CheckError("x = 1", (2,), ((3, "scan", "f.py:4"),))))
    assert str(err) == "x = 1, in lane 2, at step 3 of the scan at f.py:4"


def test_the_check_is_a_branch_weighted_unlikely():
    text = rune.jit(safe_log).lower(1.0).llvm_ir
    assert "!prof" in text and "branch_weights" in text


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize("pred, what", [
    (lambda x: x, "float64 of shape ()"),
    (lambda x: x > np.zeros(3), "bool of shape (3,)"),
])
def test_the_predicate_must_be_a_bool_scalar(pred, what):
    with pytest.raises(TypeError, match=r"must be a bool scalar .*got " + what.replace("(", r"\(")
                       .replace(")", r"\)")):
        rune.jit(lambda x: rune.check(pred(x), "x"))(1.0)


def test_a_predicate_per_lane_must_be_a_scalar_per_lane():
    with pytest.raises(TypeError, match=r"got bool of shape \(2,\)"):
        rune.vmap(lambda x: rune.check(x > 0, "x"))(np.ones((3, 2)))


@pytest.mark.parametrize("msg, args, kwargs", [
    ("x = {} and {}", (1.0,), {}),  # too few values
    ("x", (1.0,), {}),  # a value the message does not use
    ("x = {y}", (), {"z": 1.0}),  # another name
    ("x = {:d}", (1.5,), {}),  # a format the value cannot take
])
def test_a_message_that_does_not_match_its_values_fails_when_traced(msg, args, kwargs):
    with pytest.raises(TypeError, match="rune_jit.check: the message"):
        rune.make_ir(lambda x: rune.check(x > 0, msg, *[x * a for a in args],
                                          **{k: x * v for k, v in kwargs.items()}))(1.0)
    with pytest.raises(TypeError, match="rune_jit.check: the message"):
        rune.check(True, msg, *args, **kwargs)  # eagerly, even where it holds


def test_the_message_must_be_a_string():
    with pytest.raises(TypeError, match="must be a str"):
        rune.check(True, 3)


# ------------------------------------------------------------- checkify


def test_checkify_returns_the_error_and_the_results(mode):
    def f(x):
        rune.check(x < 10, "x = {} is too large", x)
        return x * 2

    err, out = checkify.checkify(mode(f))(np.float64(12.0))
    assert err.get() == "x = 12.0 is too large" and out == 24.0
    assert isinstance(err.get_exception(), rune.CheckError)
    with pytest.raises(rune.CheckError, match="x = 12.0 is too large"):
        err.throw()
    err, out = checkify.checkify(mode(f))(np.float64(1.0))
    assert err.get() is None and err.get_exception() is None and out == 2.0
    err.throw()  # nothing to raise


def test_checkify_of_loops_and_maps(mode):
    err, out = checkify.checkify(mode(rune.vmap(_running_sum)))(
        np.array([[0.0, 3.0, 3.0, 3.0], [0.0, 1.0, 1.0, 1.0]]))
    assert err.get() == f"c = 6.0 at x = 3.0, in lane 0, at step 3 of the scan at {at('SCAN')}"
    np.testing.assert_array_equal(out, [9.0, 3.0])  # computed with the checks off


def test_checkify_of_a_function_without_checks_calls_it_once():
    calls = []

    def f(x):
        calls.append(x)
        return x + 1

    err, out = checkify.checkify(rune.jit(f))(1.0)
    assert err.get() is None and out == 2.0 and len(calls) == 1


def test_checkify_inside_a_trace_says_where_to_put_it():
    with pytest.raises(NotImplementedError, match=r"checkify\(jit\(f\)\)"):
        rune.jit(checkify.checkify(safe_log))(1.0)


def test_checkify_takes_user_checks_only():
    assert checkify.check is rune.check
    with pytest.raises(ValueError, match="user_checks"):
        checkify.checkify(safe_log, errors=frozenset({"nan"}))


# ------------------------------------------------------------- RUNE_JIT_DEBUG_NANS


@pytest.fixture
def nan_checks(monkeypatch):
    """The checks RUNE_JIT_DEBUG_NANS=1 turns on at import, in this process."""
    from rune_jit._src import trace
    from rune_jit._src.ops import nan_checks as nc

    monkeypatch.setattr(trace, "after_staging", nc.after_staging)
    monkeypatch.setattr(trace, "after_eager", nc.after_eager)


def _nan_at(prim: str, marker: str) -> str:
    return f"rune_jit.debug_nans: {prim} produced a NaN from operands without one at {at(marker)}"


def _shifted_sqrt(x):
    return rnp.sqrt(x * 2 - 1.0)  # SQRT


def _log_sum(xs):
    def step(c, x):
        return c + rnp.log(x), None  # LOG

    return rune.scan(step, 0.0, xs)[0]  # LOG_SCAN


@pytest.mark.filterwarnings("ignore:invalid value")
def test_debug_nans_names_the_operation_its_line_the_lane_and_the_step(mode, nan_checks):
    assert mode(_shifted_sqrt)(5.0) == 3.0
    assert fails(mode(_shifted_sqrt), 0.0) == _nan_at("sqrt", "SQRT")
    assert fails(mode(rune.vmap(_shifted_sqrt)), np.array([1.0, 5.0, 0.25])) == (
        _nan_at("sqrt", "SQRT") + ", in lane 2")
    step = f", at step 2 of the scan at {at('LOG_SCAN')}"
    assert fails(mode(_log_sum), np.array([1.0, 2.0, -1.0])) == _nan_at("log", "LOG") + step
    xs = np.array([[1.0, 2.0, 1.0], [1.0, 2.0, -1.0]])
    assert fails(mode(rune.vmap(_log_sum)), xs) == (
        _nan_at("log", "LOG") + ", in lane 1" + step)
    assert fails(mode(rune.grad(_log_sum)), xs[1]) == _nan_at("log", "LOG") + step


@pytest.mark.filterwarnings("ignore:invalid value")
def test_debug_nans_passes_a_nan_that_came_in(mode, nan_checks):
    assert np.isnan(mode(_shifted_sqrt)(np.nan))
    np.testing.assert_array_equal(mode(rune.grad(_log_sum))(np.array([1.0, 2.0])), [1.0, 0.5])


def test_debug_nans_is_read_from_the_environment_once():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
        assert rune.config.jax_debug_nans is True
        try:
            rune.jit(lambda x: rnp.log(x))(np.float64(-1.0))
        except rune.CheckError as err:
            print(str(err).split(" at ")[0])
        try:
            rune.config.update("jax_debug_nans", False)
        except ValueError as err:
            print("ValueError", "RUNE_JIT_DEBUG_NANS=1" in str(err))
    """)
    env = {**__import__("os").environ, "RUNE_JIT_DEBUG_NANS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == [
        "rune_jit.debug_nans: log produced a NaN from operands without one", "ValueError True"]
