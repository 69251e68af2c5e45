"""The weak ints of a trace: Python int arguments, and values computed from them alone,
that the trace converts to a narrower integer dtype. NumPy 2 raises OverflowError for
one that does not fit; the trace does not know their values, so it collects them
(`collecting_weak_ints`) and the call checks them when the values are there
(`WeakIntChecks`)."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from ..dtypes import int_bounds
from ..interpret import eval_region
from ..ir import Region
from ..passes.simplify import dce
from ..trace import Tracer, using
from ..values import as_value

# A weak int argument (a Python int passed to jit, vmap, ...) is traced as an int64 whose
# value the trace does not know, so the check that NumPy makes when the int meets an
# array of a narrower dtype waits for the value: each trace that `tracing.trace_fn` makes
# collects the weak ints of its own that `promote` narrows, and checks them when the
# values are there (eagerly right after the trace, under jit at every call).
_collecting = threading.local()


@contextmanager
def collecting_weak_ints(builder: Any, into: list) -> Iterator[None]:
    """While `builder` traces, the weak ints of it that `promote` narrows are appended
    to `into` as (var, dtype)."""
    stack = _collecting.__dict__.setdefault("stack", [])
    stack.append((builder, into))
    try:
        yield
    finally:
        stack.pop()


def weak_int_converted(x: Any, dtype: np.dtype) -> None:
    """The weak int `x` is converted to the integer dtype `dtype`. Concrete, it must fit
    (NumPy's OverflowError); traced, it is checked by the trace that collects the weak
    ints of its builder. A loop step's or a branch's builder is not collected: a value
    of it made of the enclosing trace's values alone (`n * 2` in a step, n an argument)
    is checked there, and one that depends on the step's own inputs (a weak carry)
    is converted unchecked."""
    if isinstance(x, Tracer):
        for builder, into in reversed(getattr(_collecting, "stack", ())):
            if builder is x.builder:
                into.append((x.ir_var, np.dtype(dtype)))
                builder.kept.add(x.ir_var)  # the checks read it: a rewrite keeps it
                return
        outer = _in_enclosing_trace(x)
        if outer is not None:
            weak_int_converted(outer, dtype)
        return
    value, (lo, hi) = int(x), int_bounds(dtype)
    if not lo <= value <= hi:
        raise OverflowError(f"Python integer {value} out of bounds for {np.dtype(dtype)}")


def _in_enclosing_trace(x: Tracer) -> Any:
    """`x`, computed again in the trace around its own (as a tracer of that trace), or
    None if it depends on the inputs of its own (a loop step's carry or row)."""
    b = x.builder
    if b.parent is None:
        return None
    body = dce(Region((), tuple(b.eqns), (x.ir_var,)))
    free = body.captures  # here: the builder's own params and the outer values it reads
    if any(v not in b.captured for v in free):
        return None
    with using(b.parent):
        (out,) = eval_region(Region(free, body.eqns, body.outputs),
                             [b.captured[v] for v in free])
    return out


class WeakIntChecks(NamedTuple):
    """The weak ints of a trace (Python int arguments, and values computed from them
    alone) that it converted to a narrower integer dtype, as `x_int32 + n` converts n:
    NumPy 2 raises OverflowError for one that does not fit, so their values are checked
    before the program runs (`check`). `region` computes them from the trace's inputs."""
    region: Region  # (captures..., leaves...) -> the weak ints converted
    dtypes: tuple[np.dtype, ...]
    direct: tuple[int, ...] | None  # the inputs they are, if they are inputs (usually)

    @staticmethod
    def of(region: Region, converted: list) -> "WeakIntChecks | None":
        if not converted:
            return None
        narrowest: dict = {}  # each value once, with the narrowest dtype it met
        for var, dtype in converted:
            if var not in narrowest or dtype.itemsize < narrowest[var].itemsize:
                narrowest[var] = dtype
        checks = dce(Region(region.params, region.eqns, tuple(narrowest)))
        at = {p: i for i, p in enumerate(checks.params)}
        direct = None if checks.eqns else tuple(at[o] for o in checks.outputs)
        return WeakIntChecks(checks, tuple(narrowest.values()), direct)

    def check(self, inputs: Sequence[Any]) -> None:
        """Raise if one does not fit; under an enclosing trace (the inputs are traced),
        leave the check to that trace."""
        if self.direct is not None:
            values = [inputs[i] for i in self.direct]
        else:
            values = eval_region(self.region, [as_value(x) for x in inputs])
        for value, dtype in zip(values, self.dtypes):
            weak_int_converted(value, dtype)
