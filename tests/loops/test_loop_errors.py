"""Bad input to the loops: each error is raised where the mistake is made, with a
message that names the pytree path and, where there are two, both types."""

import re

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp


def names_path(message: str, path: str) -> bool:
    """`path` appears in the message as a whole path, not as the start of a longer one."""
    return re.search(re.escape(path) + r"(?![.\[\w])", message) is not None


def assert_names(message: str, paths: list[str], texts: list[str]) -> None:
    """The message names every path whole and contains every text."""
    for p in paths:
        assert names_path(message, p), f"{p!r} is not named in: {message}"
    for t in texts:
        assert t in message, f"{t!r} is not in: {message}"


init = {"a": np.ones(3), "b": np.ones(2)}


def scan_returning(carry_fn):
    return lambda: rune.scan(lambda c, x: (carry_fn(c), None), init, np.ones(4))


def iterate_returning(carry_fn):
    return lambda: rune.iterate(carry_fn, init, until=lambda c: c["a"][0] > 5.0, max_steps=3)


# (what, thunk, exception, paths the message names, other text it contains)
CARRY_CASES = [
    ("structure", lambda c: {"a": c["a"]}, ["carry", "init"], ["structure"]),
    ("extra leaf", lambda c: {**c, "z": c["a"]}, ["carry", "init"], ["structure"]),
    ("list for dict", lambda c: [c["a"], c["b"]], ["carry", "init"], ["structure"]),
    ("shape", lambda c: {"a": c["a"], "b": c["b"][:1]}, ["carry['b']", "init['b']"],
     ["float64[1]", "float64[2]"]),
    ("dtype", lambda c: {"a": c["a"], "b": rnp.astype(c["b"], np.float32)},
     ["carry['b']", "init['b']"], ["float32[2]", "float64[2]"]),
    ("first leaf", lambda c: {"a": rnp.sum(c["a"]), "b": c["b"]}, ["carry['a']", "init['a']"],
     ["float64[]", "float64[3]"]),
]
LOOPS = {"scan": scan_returning, "iterate": iterate_returning}


@pytest.mark.parametrize("loop", list(LOOPS))
@pytest.mark.parametrize("what, carry_fn, paths, texts", CARRY_CASES,
                         ids=[c[0] for c in CARRY_CASES])
def test_step_returns_another_carry(loop, what, carry_fn, paths, texts):
    with pytest.raises(TypeError) as err:
        LOOPS[loop](carry_fn)()
    msg = str(err.value)
    assert msg.startswith(loop)
    assert_names(msg, paths, texts)


@pytest.mark.parametrize("loop", ["scan", "iterate"])
def test_a_numpy_float64_scalar_init_is_not_weak(loop):
    """np.float64(1.0) is a NumPy scalar, not a Python float: a step that returns
    float32 changes the carry's type, which is an error."""
    step = lambda c: rnp.astype(c, np.float32)
    with pytest.raises(TypeError, match=r"float32\[\].*float64\[\]"):
        if loop == "scan":
            rune.scan(lambda c, x: (step(c), None), np.float64(1.0), np.ones(3))
        else:
            rune.iterate(step, np.float64(1.0), until=lambda c: c > 5, max_steps=3)


def test_carry_error_under_transformations():
    bad = lambda x: rune.scan(lambda c, r: (rnp.concatenate([c, c[:1]]) * r, None),
                              np.zeros(2), x)[0]
    for transform in (rune.vmap, lambda f: rune.grad(lambda x: rnp.sum(f(x)))):
        with pytest.raises(TypeError, match=r"float64\[3\].*float64\[2\]"):
            transform(bad)(np.ones((3, 3)))


@pytest.mark.parametrize("until, got", [
    (lambda x: x, "float64[]"),
    (lambda x: rnp.astype(x < 1, np.int32), "int32[]"),
    (lambda x: x * np.ones(2) < 1, "bool[2]"),
    (lambda x: (x < 1, x < 2), "2 values"),
], ids=["float", "int", "vector", "tuple"])
def test_until_must_return_a_bool_scalar(until, got):
    with pytest.raises(TypeError) as err:
        rune.iterate(lambda x: x * 0.5, np.float64(3.0), until=until, max_steps=3)
    assert "until" in str(err.value) and "bool" in str(err.value) and got in str(err.value)


def test_until_must_return_a_bool_scalar_per_lane():
    with pytest.raises(TypeError, match=r"bool\[2\]"):
        rune.vmap(lambda a: rune.iterate(lambda x: x * 0.5, a, until=lambda x: x < 1,
                                         max_steps=3))(np.ones((4, 2)))


@pytest.mark.parametrize("max_steps", [0, -1, 2.0, True, None, "3", np.float64(3)])
def test_max_steps_must_be_a_positive_int(max_steps):
    with pytest.raises(ValueError, match="max_steps") as err:
        rune.iterate(lambda x: x * 0.5, np.float64(3.0), until=lambda x: x < 1,
                     max_steps=max_steps)
    assert repr(max_steps) in str(err.value)


def test_max_steps_may_be_a_numpy_int():
    got = rune.iterate(lambda x: x * 0.5, np.float64(3.0), until=lambda x: x < 1,
                       max_steps=np.int64(3))
    assert got.tolist() == 0.75


XS_CASES = [
    ("different leading sizes", {"u": np.ones(3), "v": np.ones((4, 2))}, None,
     ["xs['u']", "xs['v']"], ["3", "4"]),
    ("a scalar leaf", {"u": np.ones(3), "v": np.float64(2.0)}, None, ["xs['v']"], ["scalar"]),
    ("a scalar xs", np.float64(2.0), None, ["xs"], ["scalar"]),
    ("length disagrees", np.ones(3), 4, [], ["3", "4", "length"]),
    ("neither xs nor length", None, None, [], ["length"]),
    ("negative length", None, -1, [], ["length", "-1"]),
    ("float length", None, 2.0, [], ["length", "2.0"]),
]


@pytest.mark.parametrize("what, xs, length, paths, texts", XS_CASES,
                         ids=[c[0] for c in XS_CASES])
def test_bad_xs_or_length(what, xs, length, paths, texts):
    with pytest.raises(ValueError) as err:
        rune.scan(lambda c, x: (c, None), np.float64(0.0), xs, length)
    msg = str(err.value)
    assert_names(msg, paths, texts)


def test_scan_step_must_return_a_pair():
    with pytest.raises(TypeError, match="pair"):
        rune.scan(lambda c, x: c + x, np.float64(0.0), np.ones(3))


a = np.array([4.0, 9.0])
RESIDUAL_CASES = [
    ("shape", lambda x: x[:1], lambda: a, ["residual(x)", "x"], ["float64[1]", "float64[2]"]),
    ("dtype", lambda x: rnp.astype(x, np.float32), lambda: a, ["residual(x)", "x"],
     ["float32[2]", "float64[2]"]),
    ("structure", lambda x: (x, x), lambda: a, [], ["structure"]),
    ("missing key", lambda x: {"u": x["u"]}, lambda: {"u": a, "v": a}, [], ["structure"]),
    ("leaf shape", lambda x: {"u": x["u"], "v": x["v"][0]}, lambda: {"u": a, "v": a},
     ["residual(x)['v']", "x['v']"], ["float64[]", "float64[2]"]),
]


@pytest.mark.parametrize("what, residual, solve, paths, texts", RESIDUAL_CASES,
                         ids=[c[0] for c in RESIDUAL_CASES])
def test_residual_must_have_the_structure_and_types_of_x(what, residual, solve, paths, texts):
    with pytest.raises(TypeError) as err:
        rune.root(residual, solve)
    msg = str(err.value)
    assert msg.startswith("root")
    assert_names(msg, paths, texts)


def test_unknown_linear_solver():
    with pytest.raises(ValueError, match="linear_solver.*'lu'"):
        rune.root(lambda x: x, lambda: a, linear_solver="lu")


def cubic_root(a, solver):
    """(x - a)³ = 0 at x = a: ∂r/∂x = 3 (x - a)² = 0 there, a singular system."""
    return rune.root(lambda x: (x - a) ** 3, lambda: a, linear_solver=solver)


SINGULAR = {
    "grad": lambda s: rune.grad(lambda a: rnp.sum(cubic_root(a, s)))(a),
    "jvp": lambda s: rune.jvp(lambda a: cubic_root(a, s), (a,), (np.ones(2),)),
    "vmap of grad": lambda s: rune.vmap(rune.grad(lambda a: rnp.sum(cubic_root(a, s))))(
        np.stack([a, a])),
}


@pytest.mark.parametrize("solver", ["dense", "diagonal"])
@pytest.mark.parametrize("how", list(SINGULAR))
def test_singular_jacobian_in_roots_derivative(solver, how):
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        SINGULAR[how](solver)


def test_singular_coupled_jacobian():
    """A rank-one ∂r/∂x (the rows are multiples of each other)."""
    def f(a):
        return rnp.sum(rune.root(
            lambda x: rnp.stack([x[0] + x[1] - a[0], 2 * x[0] + 2 * x[1] - 2 * a[0]]),
            lambda: a))

    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        rune.grad(f)(a)
