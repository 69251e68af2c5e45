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
from primitive_cases import (BINARY, CASES, DTYPES, assert_outcomes, draw, expected, is_error,
                             prims_in)


def _shape_id(shapes: tuple) -> str:
    return "_".join("x".join(map(str, s)) or "0d" for s in shapes)


def fresh():
    """The generator each variant draws from: the same numbers as when each was a test of
    its own (some variants' tolerances hold for those draws, not for any: the eigenvalues
    of a matrix of uint32 draws near 4e9 are accurate to its norm, not to themselves)."""
    return np.random.default_rng(0)


def _by_dtype():
    """A test per case and dtype, over the case's shape variants (run as one program)."""
    return [pytest.param(case, dtype, id=f"{case.id}-{dtype}")
            for case in CASES for dtype in case.dtypes]


@pytest.mark.parametrize("case,dtype", _by_dtype())
def test_value_matches_numpy(case, dtype, backend):
    argsets = [case.draw(fresh(), shapes, dtype) for shapes in case.shapes]
    assert_outcomes(backend, [(case.fn, args) for args in argsets],
                    [expected(case.ref, args) for args in argsets],
                    [_shape_id(shapes) for shapes in case.shapes])


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


@pytest.mark.parametrize("case,dtype", _by_dtype())
def test_impl_agrees_with_shape_rule(case, dtype):
    for shapes in case.shapes:
        args = case.draw(fresh(), shapes, dtype)
        want = expected(case.ref, args)
        rejected = pytest.raises(want) if is_error(want) else nullcontext()  # staging, an impl
        with np.errstate(all="ignore"), rejected:
            _run_checking_types(rune.make_ir(case.fn)(*args), args)


# ------------------------------------------------------------- promotion (NEP 50)

PROMOTING = [c for c in CASES if c.id in {*BINARY, "where", "concatenate", "stack", "matmul",
                                          "dot", "outer", "solve"}]
PAIRS = [(a, b) for i, a in enumerate(DTYPES) for b in DTYPES[i + 1:]]  # promotion is symmetric


def _ranked(case) -> tuple:
    """The first variant whose arguments are all non-empty arrays."""
    return next(s for s in case.shapes if all(len(x) and 0 not in x for x in s))


def _mixed(case, dtypes: tuple, rng) -> list:
    shapes = _ranked(case)
    chosen = dict(zip(case.free(len(shapes)), dtypes))
    return [draw(rng, s, chosen.get(i, dtypes[0]), case.domain(i)) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("first", DTYPES[:-1], ids=str)  # PAIRS: (first, a later one)
@pytest.mark.parametrize("case", PROMOTING, ids=lambda c: c.id)
def test_mixed_dtypes_promote_as_numpy(case, first, backend):
    pairs = [p for p in PAIRS if p[0] == first]
    argsets = [_mixed(case, dtypes, fresh()) for dtypes in pairs]
    assert_outcomes(backend, [(case.fn, args) for args in argsets],
                    [expected(case.ref, args) for args in argsets], [f"{a}-{b}" for a, b in pairs])


WEAK = [c for c in PROMOTING if c.id in {*BINARY, "where"}]
NUMBERS = [(2, 0), (True, 1), (-2.5, 0), (-2.5, 1)]  # (a Python number, its position)


def _with_number(case, dtype, number, position: int, rng) -> list:
    shapes = _ranked(case)
    args = case.draw(rng, shapes, dtype)
    args[case.free(len(shapes))[position]] = number
    return args


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", WEAK, ids=lambda c: c.id)
def test_python_numbers_are_weak(case, dtype, backend):
    argsets = [_with_number(case, dtype, number, position, fresh())
               for number, position in NUMBERS]
    assert_outcomes(backend, [(case.fn, args) for args in argsets],
                    [expected(case.ref, args) for args in argsets], list(map(repr, NUMBERS)))
