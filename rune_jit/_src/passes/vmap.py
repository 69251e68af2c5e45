"""Vectorizing map: a region's batched form, with the lane axis always first.

Every batched value carries its lanes on axis 0 (dim 0); an unbatched one has
dim None. Rules receive and return dims of that form only.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from ..ir import Literal, Region, Type
from ..ops.shape import materialize
from ..trace import bind, trace_flat, transforming
from . import at_eqn


_state = threading.local()


@contextmanager
def _setting(name: str, value: Any) -> Iterator[None]:
    """`_state.<name>` is `value` in here (per thread)."""
    saved = getattr(_state, name, None)
    setattr(_state, name, value)
    try:
        yield
    finally:
        setattr(_state, name, saved)


def hiding_axis() -> Any:
    """Batching in here maps an axis a pass made (scan fission maps a loop's steps), not a
    user's vmap: an error does not name a lane along it."""
    return _setting("hidden", True)


def hidden_axis() -> bool:
    return bool(getattr(_state, "hidden", False))


def naming_lanes(lanes: tuple[int, ...], shown: tuple[bool, ...]) -> Any:
    """The axis batched in here is the lanes `lanes` of a loop, flattened (the interpreter
    runs a loop's step on all its lanes at once): an error names a lane along it as the
    loop's lane, `shown` saying which of its axes are a user's vmap."""
    return _setting("lanes", (tuple(lanes), tuple(shown)))


def lanes_taking(mask: Any) -> Any:
    """Batching in here evaluates a branch that only the lanes where `mask` (a bool per
    lane, the lanes on axis 0) take: a check there fails in those lanes only (a vmapped
    cond runs both branches on every lane and picks per lane)."""
    from ..ops.elementwise import logical_and

    saved = taking()
    return _setting("taking", mask if saved is None else logical_and(saved, mask))


def lanes_running(mask: Any) -> Any:
    """The interpreter evaluates in here the step of a loop with lanes, on all of them,
    flattened: a check there fails in the lanes where `mask` holds, those still running
    (the axis is another than an enclosing branch's: the mask replaces theirs)."""
    return _setting("taking", mask)


def taking() -> Any:
    """The lanes that take the branch being batched (see `lanes_taking`), or None: all."""
    return getattr(_state, "taking", None)


def axis_lanes(size: int) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """How an error names a lane of the axis of `size` being batched now: (the lane axes
    it flattens, whether each is a user's vmap)."""
    given = getattr(_state, "lanes", None)
    return given if given is not None else ((size,), (not hidden_axis(),))


@transforming()
def batch_eval(region: Region, size: int, vals: Sequence[Any], dims: Sequence[int | None]):
    """Evaluate `region` (closed) on batched values; -> (outputs, their dims)."""
    env = dict(zip(region.params, zip(vals, dims)))

    def read(a):
        return (a.value, None) if isinstance(a, Literal) else env[a]

    for eqn in region.eqns:
        ins, params = eqn.closed
        args, ds = zip(*[read(a) for a in ins]) if ins else ((), ())
        with at_eqn("vmap", eqn):
            if all(d is None for d in ds):
                outs, out_dims = bind(eqn.prim, *args, **params), [None] * len(eqn.outputs)
            else:
                outs, out_dims = eqn.prim.rule("batch")(size, list(args), list(ds), **params)
        env.update(zip(eqn.outputs, zip(outs, out_dims)))
    result = [read(o) for o in region.outputs]
    return [v for v, _ in result], [d for _, d in result]


def batched_type(t: Type, size: int) -> Type:
    return t.with_shape((size,) + t.shape)


@transforming()
def batch_region(
    region: Region, size: int, dims: Sequence[int | None], force_out: bool | Sequence[bool] = False
) -> tuple[Region, list[int | None]]:
    """The batched form of a closed region; outputs in `force_out` are made batched."""
    n_out = len(region.outputs)
    force = [force_out] * n_out if isinstance(force_out, bool) else list(force_out)
    out_dims: list[int | None] = []
    in_types = [batched_type(t, size) if d is not None else t
                for t, d in zip(region.in_types, dims)]

    def fn(*args):
        outs, ods = batch_eval(region, size, args, dims)
        outs = [materialize(o, d, size) if f else o for o, d, f in zip(outs, ods, force)]
        out_dims.extend(0 if f else d for d, f in zip(ods, force))
        return outs

    return trace_flat(fn, in_types), out_dims
