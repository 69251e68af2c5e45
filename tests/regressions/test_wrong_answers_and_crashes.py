"""Regression tests for wrong answers and crashes found by users and by fuzzing (issue 10).

Each test is named for the bug it holds fixed; the loop-shaped ones also have
generators in tests/fuzz_programs.py that produce their shapes.
"""

import numpy as np
import pytest
import scipy.special

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit._src.ir import Eqn, Literal, Region, Var, digest, type_of
from rune_jit._src.ops.elementwise import add_p

X3 = np.array([1.0, 2.0, 3.0])
TRANSFORMS = {
    "grad": rune.grad, "value_and_grad": rune.value_and_grad, "jacfwd": rune.jacfwd,
    "jacrev": rune.jacrev, "hessian": rune.hessian,
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_jit_of_a_transformed_jitted_function_runs_the_transformation(name):
    """jit(grad(jit(f))) ran jit(f): functools.wraps copied the inner jitted function's
    attributes (its function and caches) onto the outer one."""
    f = rune.jit(lambda p: rnp.sum(p ** 3))
    transform = TRANSFORMS[name]
    want = transform(f)(X3)
    got = rune.jit(transform(f))(X3)
    for g, w in zip(rune.tree.leaves(got), rune.tree.leaves(want)):
        np.testing.assert_allclose(g, w)


def test_jit_of_vmap_of_a_jitted_function():
    f = rune.jit(lambda p: p ** 3)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(rune.jit(rune.vmap(f))(x), x ** 3)
    assert "cache" not in vars(rune.vmap(f)) and "f" not in vars(rune.grad(f))


def _steps_out(x):
    def step(c, r):
        z = rune.iterate(lambda z: z + 1.0, rnp.sin(r) * 10.0, until=lambda z: z > 3.0,
                         max_steps=3)
        return c + z, None
    return rune.scan(step, 0.0, x)[0]


@pytest.mark.parametrize("path", ["interpret", "eager", "jit"])
def test_an_iterate_in_a_scan_outside_vmap_names_no_lane(path, monkeypatch):
    """Scan fission maps the iterate over the scan's steps: those are not lanes."""
    if path == "interpret":
        monkeypatch.setattr(config, "backend", "interpret")
    f = rune.jit(_steps_out) if path == "jit" else _steps_out
    with pytest.raises(rune.IterateError) as info:
        f(np.array([9.5, 1.0]))
    assert str(info.value) == ("rune_jit.iterate: until is still false after max_steps = 3 "
                               "steps")


@pytest.mark.parametrize("path", ["interpret", "eager", "jit"])
def test_an_iterate_in_a_scan_under_vmap_names_the_users_lane(path, monkeypatch):
    if path == "interpret":
        monkeypatch.setattr(config, "backend", "interpret")
    f = rune.vmap(_steps_out)
    f = rune.jit(f) if path == "jit" else f
    with pytest.raises(rune.IterateError, match=r"max_steps = 3 steps, in lane 1\b"):
        f(np.array([[1.5, 1.5], [1.5, -1.0]]))  # lane 1, in its second step


def _program_with_constant(value: np.ndarray) -> Region:
    x, out = Var(type_of(value)), Var(type_of(value))
    return Region((x,), (Eqn(add_p, (x, Literal(value)), (out,)),), (out,))


def test_the_cache_key_is_every_byte_of_the_program_not_its_printed_text():
    """The printer abbreviates array constants and params; the disk cache must not."""
    a, b = np.zeros(100), np.zeros(100)
    b[57] = 1.0
    ra, rb = _program_with_constant(a), _program_with_constant(b)
    assert str(ra) == str(rb)
    assert digest(ra) != digest(rb)
    assert digest(ra) == digest(_program_with_constant(a.copy()))
    big = np.arange(5000.0)
    changed = big.copy()
    changed[2500] += 1.0
    eqn = ra.eqns[0]
    with_param = [Region(ra.params, (Eqn(eqn.prim, eqn.inputs, eqn.outputs, {"table": t}),),
                         ra.outputs) for t in (big, changed)]
    assert str(with_param[0]) == str(with_param[1])
    assert digest(with_param[0]) != digest(with_param[1])


def test_messages_and_the_ir_name_dtypes_as_numpy_does():
    with pytest.raises(TypeError) as info:
        rune.scan(lambda c, _: ((c[0] * 1.0, c[1]), None), (np.int32(1), np.float64(0.0)),
                  length=2)
    assert "float64[]" in str(info.value) and "int32[]" in str(info.value)
    assert "f64" not in str(info.value) and "i32" not in str(info.value)
    ir = str(rune.make_ir(lambda x: x.astype(np.float32) * 2)(np.ones(3, np.int32)))
    assert "int32[3]" in ir and "float32[3]" in ir and "i32" not in ir


@pytest.mark.parametrize("fn, name", [
    (scipy.special.ndtr, "scipy.special.ndtr"),
    (np.linalg.cond, "numpy.linalg.cond"),
    (np.fft.fft, "numpy.fft.fft"),
])
def test_the_no_rule_error_names_the_function_where_users_find_it(fn, name):
    with pytest.raises(TypeError, match=rf"rune_jit: {name} has no rule for traced values"):
        rune.jit(lambda x: fn(x))(np.eye(2))


@pytest.mark.parametrize("kind", ["sin_mul", "horner", "concatenate"])
@pytest.mark.slow
def test_long_fused_chains_lower_without_recursion_error(kind):
    """A fused chain was lowered by Python recursion, about three frames an op (about 325
    ops were enough to fail). Budget: a few seconds for 2000 ops."""
    def f(x):
        for i in range(2000):
            if kind == "sin_mul":
                x = rnp.sin(x) * 1.01 if i % 2 else rnp.sin(x)
            elif kind == "horner":
                x = x * 0.5 + 0.25
            else:
                x = rnp.concatenate([x[:1] * 1.01, x[1:] + 0.1])
        return x

    x = np.linspace(0.0, 1.0, 8)
    np.testing.assert_allclose(rune.jit(f)(x), f(x), rtol=1e-12)
