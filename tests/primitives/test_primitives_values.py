"""Every primitive's values against NumPy, on every backend (and, on the eager one, also
staged to IR and interpreted), over 0-d, broadcast and empty shapes and the five dtypes.

Where NumPy raises, rune_jit raises the same class (TypeError or ValueError); where
NumPy gives a dtype rune_jit lacks (int8 from bool arithmetic), TypeError.
"""

from contextlib import nullcontext

import numpy as np
import pytest

import rune_jit as rune
from rune_jit._src.ir import Literal, type_of
from rune_jit._src.primitive import Primitive
from primitive_cases import (BINARY, CASES, DTYPES, assert_outcome, draw, expected, is_error,
                             prims_in, staged)


def runs(backend, f) -> list:
    """f as the backend runs it; on the eager backend, which runs f's operations one by
    one, also f staged to IR and interpreted (a compiling backend stages f itself)."""
    run = backend(f)
    return [run] if run is not f else [run, backend(staged(f))]


def _shape_id(shapes: tuple) -> str:
    return "_".join("x".join(map(str, s)) or "0d" for s in shapes)


def _variants():
    return [pytest.param(case, shapes, dtype, id=f"{case.id}-{_shape_id(shapes)}-{dtype}")
            for case in CASES for shapes in case.shapes for dtype in case.dtypes]


@pytest.mark.parametrize("case,shapes,dtype", _variants())
def test_value_matches_numpy(case, shapes, dtype, backend, rng):
    args = case.draw(rng, shapes, dtype)
    want = expected(case.ref, args)
    for run in runs(backend, case.fn):
        assert_outcome(run, args, want)


def test_every_primitive_has_a_value_case():
    missing = set(Primitive.registry) - {case.prim for case in CASES}
    assert not missing, f"primitives with no row in primitive_cases.CASES: {sorted(missing)}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_stages_its_primitive(case, rng):
    args = case.draw(rng, case.largest(), case.dtype)
    assert case.prim in prims_in(rune.make_ir(case.fn)(*args))


def _run_checking_types(region, args):
    """The interpreter's walk, checking each impl result against the equation's type."""
    env = dict(zip(region.params, args))
    for eqn in region.eqns:
        ins, params = eqn.closed
        vals = [a.value if isinstance(a, Literal) else env[a] for a in ins]
        outs = [np.asarray(o) for o in eqn.prim.impl(*vals, **params)]
        got = [type_of(o) for o in outs]
        assert got == [v.type for v in eqn.outputs], (
            f"{eqn.prim.name}: impl gives {list(map(str, got))}, shape rule says "
            f"{[str(v.type) for v in eqn.outputs]}")
        env.update(zip(eqn.outputs, outs))


@pytest.mark.parametrize("case,shapes,dtype", _variants())
def test_impl_agrees_with_shape_rule(case, shapes, dtype, rng):
    args = case.draw(rng, shapes, dtype)
    want = expected(case.ref, args)
    rejected = pytest.raises(want) if is_error(want) else nullcontext()  # staging or an impl
    with np.errstate(all="ignore"), rejected:
        _run_checking_types(rune.make_ir(case.fn)(*args), args)


# ------------------------------------------------------------- promotion (NEP 50)

PROMOTING = [c for c in CASES if c.id in {*BINARY, "where", "concatenate", "stack", "matmul",
                                          "dot", "outer", "solve"}]
PAIRS = [(a, b) for i, a in enumerate(DTYPES) for b in DTYPES[i + 1:]]  # promotion is symmetric


def _ranked(case) -> tuple:
    """The first variant whose arguments are all non-empty arrays."""
    return next(s for s in case.shapes if all(len(x) and 0 not in x for x in s))


@pytest.mark.parametrize("dtypes", PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("case", PROMOTING, ids=lambda c: c.id)
def test_mixed_dtypes_promote_as_numpy(case, dtypes, backend, rng):
    shapes = _ranked(case)
    chosen = dict(zip(case.free(len(shapes)), dtypes))
    args = [draw(rng, s, chosen.get(i, dtypes[0]), case.domain(i)) for i, s in enumerate(shapes)]
    want = expected(case.ref, args)
    for run in runs(backend, case.fn):
        assert_outcome(run, args, want)


WEAK = [c for c in PROMOTING if c.id in {*BINARY, "where"}]
NUMBERS = [(2, 0), (True, 1), (-2.5, 0), (-2.5, 1)]  # (a Python number, its position)


@pytest.mark.parametrize("number,position", NUMBERS, ids=lambda v: repr(v))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", WEAK, ids=lambda c: c.id)
def test_python_numbers_are_weak(case, dtype, number, position, backend, rng):
    shapes = _ranked(case)
    args = case.draw(rng, shapes, dtype)
    args[case.free(len(shapes))[position]] = number
    want = expected(case.ref, args)
    for run in runs(backend, case.fn):
        assert_outcome(run, args, want)
