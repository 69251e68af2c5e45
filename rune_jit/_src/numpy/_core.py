"""What every rune_jit.numpy function does first: accept, promote, broadcast."""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from ..dtypes import check_supported, float_for, int_bounds, python_scalar_dtype, result_type
from ..ops import complex_parts as cp
from ..ops import elementwise as ew
from ..ops.shape import broadcast_in_dim
from ..trace import Tracer, type_of_value

PY_SCALARS = (bool, int, float, complex)


def is_python_scalar(x: Any) -> bool:
    """A weak operand. np.float64 subclasses float, but NumPy scalars are strong (NEP 50)."""
    return isinstance(x, PY_SCALARS) and not isinstance(x, np.generic)


def as_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as NumPy takes one: an int or a sequence of ints."""
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def strong(x: Tracer) -> Tracer:
    """`x` as a strong value, as np.asarray makes a Python scalar a strong 0-d array."""
    return Tracer(x.ir_var, x.builder) if x.weak else x


def weak(x: Tracer) -> Tracer:
    """A weak view of `x`: a new Tracer, since the builder shares tracers between equal
    equations (CSE) and marking one in place would make its other uses weak too."""
    return x if x.weak else Tracer(x.ir_var, x.builder, weak=True)


# ndarray subclasses whose values and operations are exactly an ndarray's: a memmap only
# says where its memory is. Any other subclass may mean more than its data (a mask, a
# matrix's products, units), which rune_jit would silently drop, so it is rejected.
PLAIN_SUBCLASSES = (np.memmap,)
ARRAY_PROTOCOLS = ("__array__", "__array_interface__", "__array_struct__")


def array_of(x: Any, what: str) -> np.ndarray | None:
    """`x` as an ndarray if it is an array, else None. Arrays are ndarrays (and the
    subclasses in PLAIN_SUBCLASSES), NumPy scalars, and objects that are not ndarrays but
    offer NumPy's array protocols or DLPack (a JAX array, an array API array), converted
    as np.asarray (np.from_dlpack) converts them. Another ndarray subclass is a TypeError
    that calls it `what`."""
    kind = type(x)
    if isinstance(x, np.ndarray):
        if kind is not np.ndarray and kind not in PLAIN_SUBCLASSES:
            raise TypeError(
                f"{what} is a {kind.__module__}.{kind.__qualname__}, a subclass of "
                "numpy.ndarray, which rune_jit does not accept: it would compute with the "
                "data alone and drop what the subclass adds (a mask, a matrix's products, "
                "units). Pass np.asarray(...) of it to compute with its data")
        return np.asarray(x)
    if isinstance(x, np.generic) or any(hasattr(kind, p) for p in ARRAY_PROTOCOLS):
        return np.asarray(x)
    if hasattr(kind, "__dlpack__"):
        return np.from_dlpack(x)
    return None


def accept(x: Any, where: str = "rune_jit.numpy") -> Any:
    """A Tracer, an array of a supported dtype (see `array_of`: array-likes are
    converted, ndarray subclasses rejected), or a Python scalar (kept weak)."""
    if isinstance(x, Tracer) or is_python_scalar(x):
        return x
    arr = array_of(x, f"{where}: an operand")
    if arr is not None:
        check_supported(arr.dtype, where)
        return arr
    if isinstance(x, (list, tuple)):
        from .creation import array

        return array(x)
    raise TypeError(f"{where}: expected an array or a number, got {type(x).__name__}")


def dtype_weak(x: Any) -> tuple[np.dtype, bool]:
    if is_python_scalar(x):
        if isinstance(x, int) and not isinstance(x, bool):
            # any Python int promotes as a weak int; whether it fits the result is its
            # conversion's question (`to_dtype`), as in NumPy (2**63 fits uint64)
            return np.dtype(np.int64), True
        return python_scalar_dtype(x), True
    if isinstance(x, Tracer):
        return x.dtype, x.weak
    return x.dtype, False


def to_dtype(x: Any, dtype: np.dtype) -> Any:
    """`x` converted to `dtype`. A complex `x` to a real dtype is a TypeError: a function
    that converts its operands to floats has no complex form, and dropping the imaginary
    part would be a wrong answer (the user's casts go through `cast`)."""
    if isinstance(x, PY_SCALARS):
        return np.asarray(x, dtype)
    if dtype_weak(x)[0].kind == "c" and np.dtype(dtype).kind != "c":
        raise TypeError(f"rune_jit: this function does not take complex values (it would "
                        f"compute in {np.dtype(dtype).name}); pass rnp.real(z), rnp.imag(z) "
                        "or rnp.abs(z) if that is what you mean")
    return ew.convert(x, dtype)


def cast(x: Any, dtype: np.dtype) -> Any:
    """The user's cast (astype, array(..., dtype=)): complex to real warns and keeps the
    real part, as NumPy's casts do (ComplexWarning); to bool it is x != 0, silently."""
    if dtype_weak(x)[0].kind == "c" and np.dtype(dtype).kind == "b":
        return ew.ne(x, ew.const(0.0, x))
    if dtype_weak(x)[0].kind == "c" and np.dtype(dtype).kind != "c":
        warnings.warn(np.exceptions.ComplexWarning(
            "Casting complex values to real discards the imaginary part"), stacklevel=3)
        x = cp.real(x)
    return to_dtype(x, dtype)


def promote(*xs: Any, where: str = "rune_jit.numpy") -> list:
    """Operands converted to their NumPy 2 (NEP 50) common dtype. A weak int that does
    not fit it is an OverflowError, as in NumPy: a Python int here (np.asarray raises),
    a traced one when its value is known (`weak_int_converted`)."""
    xs = [accept(x, where) for x in xs]
    dtype = check_supported(result_type(*[dtype_weak(x) for x in xs]), where)
    for x in xs:
        if isinstance(x, Tracer) and x.weak and x.dtype.kind == "i" and narrows(x.dtype, dtype):
            weak_int_converted(x, dtype)
    return [to_dtype(x, dtype) for x in xs]


def real_only(x: Any, where: str) -> Any:
    """`x`, unless it is complex: a TypeError that names `where` (a function with no
    complex form refuses rather than drop the imaginary part)."""
    if dtype_weak(x)[0].kind == "c":
        raise TypeError(f"{where} does not take complex values (got "
                        f"{dtype_weak(x)[0].name})")
    return x


def narrows(src: np.dtype, dst: np.dtype) -> bool:
    """Converting integers of `src` to `dst` can lose values (a weak int64 to uint8)."""
    if dst.kind not in "iu":
        return False
    lo, hi = int_bounds(src)
    dlo, dhi = int_bounds(dst)
    return lo < dlo or hi > dhi


# A weak int argument (a Python int passed to jit, vmap, ...) is traced as an int64 whose
# value the trace does not know, so the check that NumPy makes when the int meets an
# array of a narrower dtype waits for the value: each trace that `api.trace_fn` makes
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
    from ..interpret import eval_region
    from ..ir import Region
    from ..passes.simplify import dce
    from ..trace import using

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


def shape_of(x: Any) -> tuple[int, ...]:
    return () if isinstance(x, PY_SCALARS) else type_of_value(x).shape


def broadcast_shapes(*shapes: tuple[int, ...], where: str = "rune_jit.numpy") -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"{where}: operands could not be broadcast together with shapes {shown}"
        ) from None


def broadcast(*xs: Any, where: str = "rune_jit.numpy") -> list:
    """Operands of one shape, or 0-d (elementwise primitives broadcast scalars)."""
    shape = broadcast_shapes(*[shape_of(x) for x in xs], where=where)
    return [x if shape_of(x) in ((), shape) else broadcast_to_shape(x, shape) for x in xs]


def broadcast_to_shape(x: Any, shape: tuple) -> Any:
    xs = shape_of(x)
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))


def float_operands(*xs: Any, where: str, widest: bool = False,
                   complex_ok: bool = False) -> list:
    """The operands in the float dtype NumPy's loop search picks for np.sin, np.arctan2:
    the smallest float that every operand casts to safely (`dtypes.float_for`: float16
    for bool, int8, uint8; float32 for int16, uint16), or, with `widest`, float64 when no
    operand is a float (np.divide's rule). Complex operands stay complex with
    `complex_ok`, else they are a TypeError (`real_only`)."""
    xs = [accept(x, where) for x in xs]
    to = _float_dtype([dtype_weak(x) for x in xs], widest)
    if not complex_ok:
        real_only(np.empty(0, to), where)
    promote(*xs, where=where)  # for its checks (a weak int narrowed: OverflowError)
    return [to_dtype(x, to) for x in xs]


KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _float_dtype(pairs: list[tuple[np.dtype, bool]], widest: bool) -> np.dtype:
    """NumPy's loop search with weak scalars: a Python scalar of a kind above every
    array's (a float with integer arrays) counts as its default dtype (float64); one of a
    kind the arrays have counts for nothing."""
    strong = [d for d, w in pairs if not w]
    if not strong:
        return float_for(result_type(*pairs))
    top = max(KIND_RANK[d.kind] for d in strong)
    counted = strong + [d for d, w in pairs if w and KIND_RANK[d.kind] > top]
    if widest and all(d.kind not in "fc" for d in counted):
        return np.dtype(np.float64)
    return np.result_type(*[float_for(d) for d in counted])


def normalize_axis(axis: int, ndim: int, where: str) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{where}: axis {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return axis % ndim


def normalize_axes(axis: Any, ndim: int, where: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(normalize_axis(int(a), ndim, where) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axis in {axis}")
    return out


def as_value(x: Any) -> Any:
    """Python scalars become 0-d arrays of NumPy's default dtype for them."""
    if isinstance(x, PY_SCALARS):
        return np.asarray(x, python_scalar_dtype(x))
    return x
