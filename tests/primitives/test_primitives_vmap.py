"""vmap of every primitive against a Python loop over the batch, for mapped axes 0 and 1,
unmapped (None) arguments, and mixes of them."""

from __future__ import annotations

import numpy as np
import pytest

import rune_jit as rune
from primitive_cases import CASES, assert_outcome, assert_outcomes, expected, is_error

BATCH = 5  # unlike any example's axis, so a lane axis put in the wrong place shows
VARIANTS = 3  # the first shape variants of each row, which list the most telling first

IN_AXES = {
    1: [0, 1],
    2: [(0, 0), (0, None), (None, 1), (1, 0)],
    3: [(0, 0, 0), (1, 1, None), (None, 0, 1), (1, None, 0), (0, None, None)],
    4: [(0, 0, 0, 0), (1, None, 0, None), (None, 1, None, 0), (0, 1, 0, 0)],
}


def _axes(in_axes, shapes) -> tuple:
    return in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(shapes)


def _fits(in_axes, shapes) -> bool:
    axes = _axes(in_axes, shapes)
    return all(a is None or a <= len(s) for a, s in zip(axes, shapes))


def _variants(case) -> list[tuple]:
    """(shapes, in_axes) of the case's first shape variants and the axes that fit them."""
    return [(shapes, axes) for shapes in case.shapes[:VARIANTS] for axes in IN_AXES[len(shapes)]
            if _fits(axes, shapes)]


def _batched(case, rng, shapes, axes) -> list:
    """Per-argument arrays: examples stacked on the mapped axis, or one example."""
    examples = [case.draw(rng, shapes, case.dtype) for _ in range(BATCH)]
    return [np.stack([ex[k] for ex in examples], axis=a) if a is not None else examples[0][k]
            for k, a in enumerate(axes)]


def _stack(rows):
    """The rows stacked, or the first error among them."""
    return next((r for r in rows if is_error(r)), None) or np.stack(rows)


def _loop(ref, args, axes):
    return _stack([expected(ref, [np.take(x, b, axis=a) if a is not None else x
                                  for x, a in zip(args, axes)]) for b in range(BATCH)])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vmap_matches_a_loop(case, backend, rng):
    """Every variant of the case batched, as one program (primitive_cases.run_together)."""
    variants = _variants(case)
    argsets = [_batched(case, rng, shapes, _axes(axes, shapes)) for shapes, axes in variants]
    assert_outcomes(backend, [(rune.vmap(case.fn, in_axes=axes), args)
                              for (_, axes), args in zip(variants, argsets)],
                    [_loop(case.ref, args, _axes(axes, shapes))
                     for (shapes, axes), args in zip(variants, argsets)],
                    [f"{shapes}-{axes}".replace(" ", "") for shapes, axes in variants])


ONE_PER_PRIMITIVE = list({c.prim: c for c in reversed(CASES)}.values())


@pytest.mark.parametrize("case", ONE_PER_PRIMITIVE, ids=lambda c: c.id)
def test_nested_vmap_matches_a_double_loop(case, backend, rng):
    """Two lane axes: batch rules must not assume that lanes are a single leading axis."""
    shapes = case.largest()
    zeros = (0,) * len(shapes)
    outer = [_batched(case, rng, shapes, zeros) for _ in range(2)]
    args = [np.stack([o[k] for o in outer]) for k in range(len(shapes))]
    assert_outcome(backend(rune.vmap(rune.vmap(case.fn))), args,
                   _stack([_loop(case.ref, o, zeros) for o in outer]))
