"""The primitive test tables: one row per operation, shared by the value and vmap tests.

A row pairs a function written with rune_jit (through rune_jit.numpy where it
offers the operation, else the IR-level op) with the same function in NumPy,
the argument shapes to try (each variant a tuple of shapes, one per argument)
and each argument's domain (how its values are drawn).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.api import as_value
from rune_jit._src.interpret import eval_region
from rune_jit._src.ir import Region
from rune_jit._src.numpy.indexing import getitem
from rune_jit._src.numpy.sorting import accumulate
from rune_jit._src.ops import complex_parts as cp
from rune_jit._src.ops import decomp as dc
from rune_jit._src.ops import elementwise as ew
from rune_jit._src.ops import fft as ffts
from rune_jit._src.ops import gather as gt
from rune_jit._src.ops import index as ix
from rune_jit._src.ops import linalg as la
from rune_jit._src.ops import shape as sh
from rune_jit._src.ops import sort as so
from rune_jit.scipy import linalg as rsl
from rune_jit._src.trace import bind1

F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL = (np.dtype(t) for t in (
    "float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32",
    "uint16", "uint8", "bool"))
FLOATS = (F64, F32, F16)
SIGNED, UNSIGNED = (I64, I32, I16, I8), (U64, U32, U16, U8)
INTS = SIGNED + UNSIGNED
NUMERIC = FLOATS + INTS
DTYPES = NUMERIC + (BOOL,)
C128, C64 = np.dtype(np.complex128), np.dtype(np.complex64)
COMPLEXES = (C128, C64)  # drawn by the rows of the complex parts (tests/primitives/test_complex.py)


@dataclass(frozen=True)
class Case:
    id: str
    prim: str  # the primitive this row exists to exercise
    fn: Callable
    ref: Callable
    shapes: tuple
    domains: tuple = ()  # per argument, "any" when left out
    dtype: np.dtype = F64  # drawn where one dtype will do (vmap, which primitive is staged)
    # The value tests draw every dtype and NumPy says what should happen. A row that
    # binds a primitive with no rune_jit.numpy function draws only the dtypes it
    # accepts: primitives take no promotion, and test_primitives checks their rejections.
    dtypes: tuple = DTYPES

    def domain(self, i: int) -> str:
        return self.domains[i] if i < len(self.domains) else "any"

    def draw(self, rng, shapes: tuple, dtype: np.dtype) -> list:
        return [draw(rng, s, dtype, self.domain(i)) for i, s in enumerate(shapes)]

    def largest(self) -> tuple:
        return max(self.shapes, key=lambda v: sum(int(np.prod(s)) for s in v))

    def free(self, n: int) -> list[int]:
        """The arguments whose dtype a test may choose (not predicates or indices)."""
        return [i for i in range(n) if self.domain(i) not in FIXED]


# ------------------------------------------------------------- drawing arguments

def _ranks(rng, shape: tuple) -> np.ndarray:
    """0, 1, ..., n - 1 in a random order, centred on 0."""
    n = math.prod(shape)
    return np.reshape(rng.permutation(n) - n // 2, shape)


def _whole_at_even(v: np.ndarray) -> np.ndarray:
    """v, rounded down at its even flat positions (a 0-d v: whole)."""
    even = np.arange(v.size).reshape(v.shape) % 2 == 0
    return np.where(even, np.floor(v), v)


# Each domain draws (float values, integer values); bools are random where a domain
# allows False and all True where it needs nonzero values.
DOMAINS = {
    "any": (lambda r, s: r.standard_normal(s), lambda r, s: r.integers(-5, 6, s)),
    "coarse": (lambda r, s: r.integers(-2, 3, s), lambda r, s: r.integers(-2, 3, s)),  # ties
    "pos": (lambda r, s: r.uniform(0.5, 2.5, s), lambda r, s: r.integers(1, 6, s)),
    "above1": (lambda r, s: r.uniform(1.2, 3.5, s), lambda r, s: r.integers(1, 6, s)),
    "nonzero": (lambda r, s: r.choice([-1, 1], s) * r.uniform(0.5, 2.5, s),
                lambda r, s: r.choice([-1, 1], s) * r.integers(1, 6, s)),
    "exponent": (lambda r, s: r.uniform(-2, 2, s), lambda r, s: r.integers(0, 4, s)),
    # whole float exponents too, for negative bases (IREE's powf gave NaN for them)
    "whole_or_not": (lambda r, s: _whole_at_even(r.uniform(-2, 4, s)),
                     lambda r, s: r.integers(0, 4, s)),
    "small": (lambda r, s: r.uniform(-1, 1, s), lambda r, s: r.integers(-1, 2, s)),
    "special": (lambda r, s: r.choice([0.5, -1.0, np.nan, np.inf, -np.inf], s),
                lambda r, s: r.integers(-5, 6, s)),
    # erfinv's edges: ±1 (±inf), past them (nan), near them, 0
    "edges": (lambda r, s: r.choice([1.0, -1.0, 1.5, 0.999, -0.9999, 0.0], s),
              lambda r, s: r.integers(-1, 2, s)),
    # shift counts: inside the bit widths, at them, past them, negative
    "shift": (lambda r, s: r.choice([0.0, 3.0, 8.0], s),
              lambda r, s: r.choice([0, 1, 3, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, -1, -2],
                                    s)),
    # no two equal (sort, cummax: derivatives away from ties), at least 0.2 apart
    "distinct": (lambda r, s: _ranks(r, s) + r.uniform(0.1, 0.9, s),
                 lambda r, s: _ranks(r, s)),
    # products far above 1, whose rounding error an fma keeps (float16 holds them too)
    "large": (lambda r, s: r.uniform(100.0, 250.0, s), lambda r, s: r.integers(100, 250, s)),
}
RANDOM_BOOLS = ("any", "coarse", "exponent", "whole_or_not", "small", "special")
# Domains of a fixed dtype, whatever the dtype under test.
FIXED = {
    "pred": lambda r, s: r.random(s) < 0.5,
    "index": lambda r, s: r.integers(-3, 3, s),  # in range for an axis of 3 or more
    "start": lambda r, s: r.integers(-2, 6, s),  # out of range too: starts are clamped
    "count": lambda r, s: r.integers(0, 5, s),
}
FIXED_DTYPE = {"pred": BOOL, "index": I64, "start": I64, "count": I64}


def draw(rng, shape: tuple, dtype: np.dtype, domain: str) -> np.ndarray:
    if domain in FIXED:
        return np.asarray(FIXED[domain](rng, shape), FIXED_DTYPE[domain])
    if domain == "wellcond":
        return _well_conditioned(rng, shape, dtype)
    if domain == "spd":
        return _positive_definite(rng, shape, dtype)
    if dtype.kind == "b":
        random = domain in RANDOM_BOOLS
        return np.asarray(rng.random(shape) < 0.5) if random else np.ones(shape, bool)
    floats, ints = DOMAINS[domain]
    if dtype.kind == "c":  # both parts drawn from the domain
        return np.asarray(floats(rng, shape) + 1j * floats(rng, shape), dtype)
    return np.asarray((floats if dtype.kind == "f" else ints)(rng, shape), dtype)


def _well_conditioned(rng, shape: tuple, dtype: np.dtype) -> np.ndarray:
    n = shape[-1]
    if dtype.kind == "b":
        return np.broadcast_to(np.eye(n, dtype=bool), shape).copy()
    noise = rng.integers(-2, 3, shape) if dtype.kind == "i" else rng.uniform(-1, 1, shape)
    return np.asarray(noise + 3 * n * np.eye(n), dtype)


def _positive_definite(rng, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Symmetric positive definite (integers for an integer dtype; the identity for bool)."""
    n = shape[-1]
    if dtype.kind == "b":
        return np.broadcast_to(np.eye(n, dtype=bool), shape).copy()
    b = rng.integers(-2, 3, shape) if dtype.kind in "iu" else rng.uniform(-1, 1, shape)
    return np.asarray(b @ np.swapaxes(b, -1, -2) + n * np.eye(n, dtype=b.dtype), dtype)


# ------------------------------------------------------------- what NumPy says

def expected(ref: Callable, args: list):
    """NumPy's result; or the error class NumPy raises (TypeError, ValueError or
    OverflowError: a Python int that the other operand's dtype does not hold), and
    TypeError where NumPy gives a dtype rune_jit lacks."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty axis
            out = np.asarray(ref(*args))
    except (TypeError, ValueError, OverflowError) as err:
        return next(e for e in (TypeError, OverflowError, ValueError) if isinstance(err, e))
    return out if out.dtype in DTYPES + COMPLEXES else TypeError


def is_error(want) -> bool:
    return isinstance(want, type) and issubclass(want, Exception)


def assert_outcome(run: Callable, args: list, want) -> None:
    """run(*args) gives what NumPy gives, or raises the error class NumPy raises."""
    if is_error(want):
        with pytest.raises(want):
            run(*args)
    else:
        assert_matches(run(*args), want)


# float16 computes in float32 and rounds each result, as NumPy does; where NumPy's
# float32 function (its SIMD libm) and glibc's differ by an ulp, the halves may differ by one
TOL = {F64: dict(rtol=1e-12, atol=1e-12), F32: dict(rtol=2e-6, atol=1e-6),
       F16: dict(rtol=1e-3, atol=1e-3)}
TOL.update({C128: TOL[F64], C64: TOL[F32]})


def assert_matches(got, want: np.ndarray) -> None:
    assert isinstance(got, np.ndarray), f"result is a {type(got).__name__}, not an ndarray"
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (
        f"got {got.dtype}{list(got.shape)}, NumPy gives {want.dtype}{list(want.shape)}")
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, equal_nan=True, **TOL[want.dtype])
    else:
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------- the staged path

def staged(f: Callable) -> Callable:
    """f traced to IR, then run by the reference interpreter (its result, or the tuple of
    its results)."""

    def run(*args):
        outs = eval_region(rune.make_ir(f)(*args), [as_value(a) for a in args])
        return outs[0] if len(outs) == 1 else tuple(outs)

    return run


# ------------------------------------------------------------- many calls, one program

Call = tuple[Callable, list]  # a function and its arguments


def together(calls: list[Call]) -> tuple[Callable, list]:
    """One function of all the calls' arguments that gives the tuple of their results,
    and those arguments. A test's variants run as one program, not a program each: most
    of a small program's compile time is LLVM's cost per module (24 variants of a cumsum
    took 7.5 ms each together, 22 ms each alone)."""
    ends = np.cumsum([len(args) for _, args in calls]).tolist()

    def joint(*flat):
        return tuple(fn(*flat[i:j]) for (fn, _), i, j in zip(calls, [0] + ends, ends))

    return joint, [x for _, args in calls for x in args]


def run_together(make: Callable, calls: list[Call]) -> list:
    """Each call's result, `make` (rune.jit, a backend...) running them together; if
    that raises, the first call that raises alone raises its own error."""
    if len(calls) <= 1:
        return [make(fn)(*args) for fn, args in calls]
    joint, flat = together(calls)
    try:
        return list(make(joint)(*flat))
    except Exception:
        for fn, args in calls:
            make(fn)(*args)
        raise


def makers(backend: Callable) -> list[Callable]:
    """How `backend` runs a function; on the eager backend, which runs its operations one
    by one, also staged to IR and interpreted (a compiling backend stages it itself)."""
    probe = staged  # any function: the eager backend gives it back unchanged
    return [backend] if backend(probe) is not probe else [backend,
                                                          lambda f: backend(staged(f))]


def assert_outcomes(backend: Callable, calls: list[Call], wants: list, names: list[str]
                    ) -> None:
    """assert_outcome of each call, on each of the backend's makers: the calls NumPy
    rejects one by one (they raise while staging), the others together (run_together),
    a mismatch named by its call's name."""
    good = [k for k, want in enumerate(wants) if not is_error(want)]
    for make in makers(backend):
        for k in set(range(len(calls))) - set(good):
            fn, args = calls[k]
            assert_outcome(make(fn), args, wants[k])
        for k, got in zip(good, run_together(make, [calls[k] for k in good])):
            try:
                assert_matches(got, wants[k])
            except AssertionError as err:
                raise AssertionError(f"{names[k]}: {err}") from None


def prims_in(region: Region) -> set[str]:
    return {n for e in region.eqns for n in {e.prim.name}.union(*map(prims_in, e.regions))}


# ------------------------------------------------------------- the table

# Shape variants, most telling first (the vmap tests take the first few).
U = (((),), ((2, 3),), ((4,),), ((0, 2),))
B = (((), ()), ((2, 1), (3,)), ((2, 3), ()), ((3,), (3,)), ((), (3,)), ((0, 3), (3,)))
T = (((), (), ()), ((3,), (3,), (3,)), ((2, 3), (), (3,)), ((2, 1), (1, 3), ()))

UNARY = {  # rune_jit.numpy name: (primitive, domain)
    "sqrt": ("sqrt", "pos"), "exp": ("exp", "any"), "expm1": ("expm1", "any"),
    "log": ("log", "pos"), "log1p": ("log1p", "pos"), "sin": ("sin", "any"),
    "cos": ("cos", "any"), "tan": ("tan", "small"), "tanh": ("tanh", "any"),
    "sinh": ("sinh", "any"), "cosh": ("cosh", "any"), "arctan": ("arctan", "any"),
    "negative": ("neg", "any"), "abs": ("abs", "any"), "sign": ("sign", "any"),
    "isnan": ("isnan", "special"), "isfinite": ("isfinite", "special"),
    "logical_not": ("logical_not", "coarse"),
    "invert": ("bitwise_not", "any"), "bitwise_count": ("bitwise_count", "any"),
    "floor": ("floor", "any"), "ceil": ("ceil", "any"), "trunc": ("trunc", "any"),
    "rint": ("rint", "any"), "arcsin": ("arcsin", "small"), "arccos": ("arccos", "small"),
    "arcsinh": ("arcsinh", "any"), "arccosh": ("arccosh", "above1"),
    "arctanh": ("arctanh", "small"), "cbrt": ("cbrt", "any"), "log2": ("log2", "pos"),
    "log10": ("log10", "pos"), "exp2": ("exp2", "any"),
}
BINARY = {  # rune_jit.numpy name: (primitive, domains)
    "add": ("add", ()), "multiply": ("mul", ()), "subtract": ("sub", ()),
    "maximum": ("max", ("coarse", "coarse")), "minimum": ("min", ("coarse", "coarse")),
    "power": ("pow", ("nonzero", "whole_or_not")), "divide": ("div", ("any", "nonzero")),
    "floor_divide": ("floor_divide", ("any", "nonzero")),
    "remainder": ("remainder", ("any", "nonzero")), "arctan2": ("arctan2", ()),
    "less": ("lt", ("coarse", "coarse")), "less_equal": ("le", ("coarse", "coarse")),
    "greater": ("gt", ("coarse", "coarse")), "greater_equal": ("ge", ("coarse", "coarse")),
    "equal": ("eq", ("coarse", "coarse")), "not_equal": ("ne", ("coarse", "coarse")),
    "logical_and": ("logical_and", ("coarse", "coarse")),
    "logical_or": ("logical_or", ("coarse", "coarse")),
    "logical_xor": ("logical_xor", ("coarse", "coarse")),
    "bitwise_and": ("bitwise_and", ()), "bitwise_or": ("bitwise_or", ()),
    "bitwise_xor": ("bitwise_xor", ()), "left_shift": ("shift_left", ("any", "shift")),
    "right_shift": ("shift_right", ("any", "shift")),
    "hypot": ("hypot", ()), "copysign": ("copysign", ()),
    "fmod": ("fmod", ("any", "nonzero")),
}
LOGICAL = ("logical_not", "logical_and", "logical_or", "logical_xor")
BITS = ("invert", "bitwise_count", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
        "right_shift")


def _by_float64(f: Callable) -> Callable:
    """f of each element, computed in float64 and rounded to the argument's dtype."""
    return lambda x: np.vectorize(f, otypes=[F64])(np.asarray(x, F64)).astype(x.dtype)


def _erfinv64(y: float) -> float:
    """erfinv by Newton's method on math.erf: an oracle independent of Giles'."""
    if abs(y) >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    x = 0.0
    for _ in range(100):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) <= 1e-17 * max(1.0, abs(x)):
            break
    return x


np_erfinv = _by_float64(_erfinv64)


def _staged_dtype(name: str) -> np.dtype:
    """The dtype a row draws where one will do: one its primitive accepts."""
    return BOOL if name in LOGICAL else I64 if name in BITS else F64


def _bitcast(to: np.dtype, sources: tuple) -> Case:
    return Case(f"bitcast_to_{to}", "bitcast_convert", lambda x: ew.bitcast_convert(x, to),
                lambda x: np.asarray(x).view(to), U, ("special",), sources[0], sources)


def np_fma(a, b, c):
    """a * b + c rounded once: exactly, in rationals, then to float64 (and to a narrower
    dtype: a second rounding, inside that dtype's tolerance)."""
    a, b, c = np.broadcast_arrays(a, b, c)
    exact = [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
             for x, y, z in zip(a.flat, b.flat, c.flat)]
    return np.asarray(exact, F64).reshape(a.shape).astype(a.dtype)


FMA_SHAPES = (((), (), ()), ((3,), (3,), (3,)), ((2, 3), (), (2, 3)), ((0,), (), (0,)))


def _np_complex(x, y):
    """x + iy of float arrays, in NumPy's complex dtype of their parts."""
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.result_type(x.dtype, np.complex64))
    out.real, out.imag = x, y
    return out


def _elementwise() -> list[Case]:
    cases = [Case(n, p, getattr(rnp, n), getattr(np, n), U, (d,), _staged_dtype(n))
             for n, (p, d) in UNARY.items()]
    cases += [Case(n, p, getattr(rnp, n), getattr(np, n), B, d, _staged_dtype(n))
              for n, (p, d) in BINARY.items()]
    cases += [_bitcast(U32, (F32, I32)), _bitcast(F64, (U64, I64)),
              _bitcast(F16, (U16, I16)), _bitcast(I8, (U8,))]
    cases += [Case("erf", "erf", ew.erf, _by_float64(math.erf), U, ("any",), F64, FLOATS),
              Case("erfc", "erfc", ew.erfc, _by_float64(math.erfc), U, ("any",), F64, FLOATS),
              Case("erfinv", "erfinv", ew.erfinv, np_erfinv, U, ("small",), F64, FLOATS),
              Case("erfinv_edges", "erfinv", ew.erfinv, np_erfinv, (((5,),),), ("edges",), F64,
                   FLOATS)]
    cases += [Case("fma", "fma", ew.fma, np_fma, FMA_SHAPES, (), F64, FLOATS),
              # a * b - fl(a * b): the rounding error of the product, which a multiply
              # and an add rounded apart would make 0
              Case("fma_one_rounding", "fma", lambda a, b: ew.fma(a, b, ew.neg(ew.mul(a, b))),
                   lambda a, b: np_fma(a, b, -(a * b)), (((6,), (6,)), ((), ())),
                   ("large", "large"), F64, FLOATS)]
    cases += [Case(n, n, getattr(cp, n), getattr(np, n), U, ("any",), C128, COMPLEXES)
              for n in ("real", "imag", "conj")]
    cases.append(Case("complex", "complex", cp.complex_, _np_complex,
                      (((), ()), ((3,), (3,)), ((2, 3), ()), ((0,), ())), (), F64, FLOATS))
    cases.append(Case("where", "select", rnp.where, np.where, T, ("pred",)))
    cases.append(Case("where_numeric_pred", "select", rnp.where, np.where,
                      (((3,), (3,), (3,)),), ("coarse",)))
    return cases


def _astype(dtype: np.dtype) -> Case:
    return Case(f"astype_{dtype}", "convert", lambda x: rnp.astype(x, dtype),
                lambda x: x.astype(dtype), U, dtype=F32 if dtype == F64 else F64)


def np_pad(x, *, shape, starts, strides):
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(s, s + n * st, st) for s, n, st in zip(starts, x.shape, strides))] = x
    return out


def _pad(shape, starts, strides) -> Callable:
    return lambda x: bind1(sh.pad_p, x, shape=shape, starts=starts, strides=strides)


def _iota_ref(x, axis):
    shape = [n if i == axis else 1 for i, n in enumerate(x.shape)]
    return x + np.arange(x.shape[axis], dtype=x.dtype).reshape(shape)


def _shape_ops() -> list[Case]:
    def idx(key):
        return lambda x: getitem(x, key), lambda x: x[key]

    rows = [
        ("broadcast_to_2x3", "broadcast_in_dim", lambda x: rnp.broadcast_to(x, (2, 3)),
         lambda x: np.broadcast_to(x, (2, 3)), (((),), ((3,),), ((2, 1),), ((1, 3),))),
        ("reshape", "reshape", lambda x: rnp.reshape(x, (3, -1)),
         lambda x: np.reshape(x, (3, -1)), (((6,),), ((2, 3),), ((3, 1, 2),))),
        ("expand_dims", "reshape", lambda x: rnp.expand_dims(x, 0),
         lambda x: np.expand_dims(x, 0), U),
        ("squeeze", "reshape", rnp.squeeze, np.squeeze, (((1,),), ((2, 1, 3),))),
        ("index_none", "reshape", *idx(None), U),
        ("transpose", "transpose", rnp.transpose, np.transpose, (((2, 3),), ((2, 3, 4),))),
        ("transpose_axes", "transpose", lambda x: rnp.transpose(x, (1, 0, 2)),
         lambda x: np.transpose(x, (1, 0, 2)), (((2, 3, 4),),)),
        ("moveaxis", "transpose", lambda x: rnp.moveaxis(x, 0, -1),
         lambda x: np.moveaxis(x, 0, -1), (((2, 3, 4),),)),
        ("reverse", "rev", *idx(slice(None, None, -1)), (((5,),), ((4, 3),))),
        ("reverse_step2", "rev", *idx((slice(None), slice(None, None, -2))), (((2, 5),),)),
        ("slice_1_3", "slice", *idx(slice(1, 3)), (((0,),), ((5,),), ((4, 3),))),
        ("slice_int", "slice", *idx(1), (((4,),), ((4, 3),))),
        ("slice_neg_int", "slice", *idx((Ellipsis, -1)), (((4,),), ((4, 3),))),
        ("slice_strided", "slice", *idx((slice(None, None, 2), slice(1, None))), (((5, 4),),)),
        ("pad_1d", "pad", _pad((7,), (1,), (2,)),
         lambda x: np_pad(x, shape=(7,), starts=(1,), strides=(2,)), (((3,),),)),
        ("pad_2d", "pad", _pad((3, 5), (1, 0), (1, 2)),
         lambda x: np_pad(x, shape=(3, 5), starts=(1, 0), strides=(1, 2)), (((2, 2),),)),
        ("concatenate", "concatenate", lambda a, b: rnp.concatenate([a, b]),
         lambda a, b: np.concatenate([a, b]), (((0,), (2,)), ((3,), (2,)), ((2, 3), (1, 3)))),
        ("concatenate_axis1", "concatenate", lambda a, b: rnp.concatenate([a, b], axis=1),
         lambda a, b: np.concatenate([a, b], axis=1), (((2, 3), (2, 1)),)),
        ("concatenate_none", "concatenate", lambda a, b: rnp.concatenate([a, b], axis=None),
         lambda a, b: np.concatenate([a, b], axis=None), (((2, 3), (4,)),)),
        ("stack", "concatenate", lambda a, b: rnp.stack([a, b]),
         lambda a, b: np.stack([a, b]), (((), ()), ((3,), (3,)))),
        ("stack_axis1", "concatenate", lambda a, b: rnp.stack([a, b], axis=1),
         lambda a, b: np.stack([a, b], axis=1), (((2, 3), (2, 3)),)),
        ("iota_axis1", "iota", lambda x: ew.add(x, sh.iota(x.shape, 1, x.dtype)),
         lambda x: _iota_ref(x, 1), (((2, 3),),)),
        ("stop_gradient", "stop_gradient", rune.stop_gradient, lambda x: x, U),
    ]
    return [Case(*r) for r in rows] + [_astype(d) for d in DTYPES]


def _reductions() -> list[Case]:
    cases = []
    axes = [(None, False), (0, False), ((0, 2), False), (-1, True), (None, True)]
    shapes = {None: (((),), ((2, 0, 4),), ((2, 3, 4),))}  # 0-d inputs reduce over no axis
    for name, prim, domain in (
            ("sum", "reduce_sum", "any"), ("prod", "reduce_prod", "any"),
            ("mean", "reduce_sum", "any"), ("max", "reduce_max", "coarse"),
            ("min", "reduce_min", "coarse"), ("all", "reduce_min", "coarse"),
            ("any", "reduce_max", "coarse")):
        for axis, keep in axes:
            cases.append(Case(
                f"{name}_axis{axis}_keep{keep}".replace(" ", ""), prim,
                lambda x, n=name, a=axis, k=keep: getattr(rnp, n)(x, axis=a, keepdims=k),
                lambda x, n=name, a=axis, k=keep: getattr(np, n)(x, axis=a, keepdims=k),
                shapes.get(axis, (((2, 0, 4),), ((2, 3, 4),))), (domain,)))
    for name in ("argmax", "argmin"):
        for axis, keep in ((None, False), (0, False), (-1, True)):
            cases.append(Case(
                f"{name}_axis{axis}_keep{keep}", name,
                lambda x, n=name, a=axis, k=keep: getattr(rnp, n)(x, axis=a, keepdims=k),
                lambda x, n=name, a=axis, k=keep: getattr(np, n)(x, axis=a, keepdims=k),
                (((3, 0),), ((3, 4),)), ("coarse",)))
    return cases


def np_dynamic_slice(x, starts, sizes):
    at = [int(np.clip(s, 0, n - k)) for s, n, k in zip(starts, x.shape, sizes)]
    return x[tuple(slice(a, a + k) for a, k in zip(at, sizes))]


def np_dynamic_update_slice(x, upd, starts):
    out = x.copy()
    at = [int(np.clip(s, 0, n - k)) for s, n, k in zip(starts, x.shape, upd.shape)]
    out[tuple(slice(a, a + k) for a, k in zip(at, upd.shape))] = upd
    return out


def _indexing() -> list[Case]:
    rows = [
        ("index_traced", "dynamic_slice", getitem, lambda x, i: x[i],
         (((5,), ()), ((4, 3), ())), ("any", "index")),
        ("index_traced_axis1", "dynamic_slice", lambda x, i: getitem(x, (slice(None), i)),
         lambda x, i: x[:, i], (((2, 4), ()),), ("any", "index")),
        ("dynamic_slice_2d", "dynamic_slice",
         lambda x, i, j: ix.dynamic_slice(x, [i, j], (2, 2)),
         lambda x, i, j: np_dynamic_slice(x, (i, j), (2, 2)),
         (((4, 5), (), ()),), ("any", "start", "start")),
        ("dynamic_update_slice", "dynamic_update_slice",
         lambda x, u, i: ix.dynamic_update_slice(x, u, [i]),
         lambda x, u, i: np_dynamic_update_slice(x, u, (i,)),
         (((5,), (2,), ()),), ("any", "any", "start")),
        ("dynamic_update_slice_2d", "dynamic_update_slice",
         lambda x, u, i, j: ix.dynamic_update_slice(x, u, [i, j]),
         lambda x, u, i, j: np_dynamic_update_slice(x, u, (i, j)),
         (((3, 4), (2, 2), (), ()),), ("any", "any", "start", "start")),
    ]
    return [Case(*r) for r in rows]


def _take(**kw) -> Callable:
    return lambda x, i: rnp.take(x, i, **kw)


def np_gather_fill(x, *idx, fill):
    """gather in mode "fill": NumPy's reading of each index (negative from the end),
    `fill` where one is out of bounds."""
    pos, ok = [], np.ones(np.shape(idx[0]), bool)
    for i, n in zip(idx, x.shape):
        j = np.where(i < 0, i + n, i)
        ok &= (j >= 0) & (j < n)
        pos.append(j)
    out = x[tuple(np.where(ok, j, 0) for j in pos)]
    return np.where(ok.reshape(ok.shape + (1,) * (x.ndim - len(idx))), out,
                    np.asarray(fill, x.dtype))


NP_AT = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _at(op: str, mode: str | None = None) -> Callable:
    return lambda x, i, u: getattr(rnp.at(x)[i], op)(u, mode=mode)


def np_at(op: str, mode: str | None = None) -> Callable:
    """x.at[i].op(u) in NumPy: `out[i] = u` for set (the last of repeated positions
    wins), `np.<ufunc>.at` for the others (repeated positions accumulate); out-of-bounds
    indices clipped (as JAX's .at clips: a negative index counts from the end first, then
    clips), wrapped, or their updates dropped."""
    def ref(x, i, u):
        n, out = x.shape[0], x.copy()
        if mode == "clip":
            i = np.clip(np.where(i < 0, i + n, i), 0, n - 1)
        elif mode == "wrap":
            i = np.mod(i, n)
        elif mode == "drop":
            j = np.where(i < 0, i + n, i)
            keep = (j >= 0) & (j < n)
            i, u = j[keep], np.broadcast_to(u, i.shape + x.shape[1:])[keep]
        if op == "set":
            out[i] = u
        else:
            NP_AT[op].at(out, i, u)
        return out

    return ref


def _gather_scatter() -> list[Case]:
    """Gathers (rnp.take, take_along_axis, index arrays, x.at[i].get) and scatters
    (x.at[i].set/add/...), in each out-of-bounds mode."""
    rows = [
        ("take", "gather", _take(axis=0), lambda x, i: np.take(x, i, axis=0),
         (((5,), (4,)), ((4, 3), (2, 2)), ((3,), ()), ((3, 0), (2,)), ((4,), (0,))),
         ("any", "index")),
        ("index_check", "index_check", lambda x, i: gt.gather(x, [i]),
         lambda x, i: np.take(x, i, axis=0), (((5,), (4,)), ((4, 3), (2, 2))), ("any", "index")),
        ("take_flat_clip", "gather", _take(mode="clip"), lambda x, i: np.take(x, i, mode="clip"),
         (((2, 3), (4,)), ((4,), (2, 3))), ("any", "start")),
        ("take_axis1_wrap", "gather", _take(axis=1, mode="wrap"),
         lambda x, i: np.take(x, i, axis=1, mode="wrap"), (((2, 4), (5,)),), ("any", "start")),
        ("take_fill", "gather", _take(mode="fill", fill_value=2),
         lambda x, i: np_gather_fill(x, i, fill=2), (((4,), (6,)), ((4,), (2, 0))),
         ("any", "start")),
        ("take_along_axis", "gather", lambda x, i: rnp.take_along_axis(x, i, -1),
         lambda x, i: np.take_along_axis(x, i, -1),
         (((2, 4), (2, 3)), ((4,), (6,)), ((3, 4), (1, 2)), ((2, 3), (2, 0))), ("any", "index")),
        ("index_arrays_apart", "gather", lambda x, i, j: getitem(x, (i, slice(None), j)),
         lambda x, i, j: x[i, :, j], (((3, 2, 4), (2,), (2,)), ((3, 1, 3), (2, 1), (3,))),
         ("any", "index", "index")),
        ("index_arrays_adjacent", "gather", lambda x, i, j: getitem(x, (slice(1, None), i, j)),
         lambda x, i, j: x[1:, i, j], (((2, 3, 4), (2, 1), (3,)),), ("any", "index", "index")),
        ("at_get_fill", "gather", lambda x, i: rnp.at(x)[i].get(mode="fill", fill_value=2),
         lambda x, i: np_gather_fill(x, i, fill=2), (((4, 2), (3, 2)),), ("any", "start")),
        ("gather_fill_2d", "gather", lambda x, i, j: gt.gather(x, [i, j], "fill", 1),
         lambda x, i, j: np_gather_fill(x, i, j, fill=1), (((4, 3), (5,), (5,)),),
         ("any", "start", "start")),
        ("at_set", "scatter", _at("set"), np_at("set"),
         (((4,), (6,), (6,)), ((4, 3), (2,), (2, 3)), ((4, 3), (2,), (3,)), ((5,), (), ()),
          ((4,), (0,), (0,)), ((3, 0), (2,), (2, 0))), ("any", "index", "any")),
        *[(f"at_{op}", "scatter", _at(op), np_at(op),
           (((4,), (6,), (6,)), ((4, 3), (2,), (2, 3)), ((4,), (0,), (0,))),
           ("coarse", "index", "coarse")) for op in ("add", "multiply", "min", "max")],
        ("at_add_drop", "scatter", _at("add", "drop"), np_at("add", "drop"),
         (((4,), (6,), (6,)), ((3, 2), (4,), (4, 2))), ("any", "start", "any")),
        ("at_set_drop", "scatter", _at("set", "drop"), np_at("set", "drop"),
         (((4,), (6,), (6,)),), ("any", "start", "any")),
        ("at_set_clip", "scatter", _at("set", "clip"), np_at("set", "clip"),
         (((4,), (6,), (6,)),), ("any", "start", "any")),
        ("at_max_wrap", "scatter", _at("max", "wrap"), np_at("max", "wrap"),
         (((4, 2), (5,), (5, 2)),), ("coarse", "start", "coarse")),
    ]
    return [Case(*r) for r in rows]


def _sorted_desc(x):
    """NumPy's sort, from the largest: the ascending order reversed (NaNs first)."""
    return np.flip(np.sort(x, kind="stable"), -1)


def np_argsort_descending(x):
    """The descending order with ties in their original order (and NaNs first): a stable
    argsort of each element's rank, negated."""
    rank = np.unique(x, return_inverse=True)[1].reshape(x.shape)
    return np.argsort(-rank, axis=-1, kind="stable")


def _reverse_accumulate(ufunc, axis: int) -> Callable:
    return lambda x: np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)


def _sorting() -> list[Case]:
    stable = lambda x, **kw: np.sort(x, kind="stable", **kw)
    rows = [
        ("sort", "sort", rnp.sort, stable, (((5,),), ((2, 4),), ((0,),), ((3, 0),), ((),)),
         ("coarse",)),
        ("sort_special", "sort", rnp.sort, stable, (((6,),), ((2, 5),)), ("special",)),
        ("sort_axis0", "sort", lambda x: rnp.sort(x, axis=0), lambda x: stable(x, axis=0),
         (((3, 4),), ((0, 2),)), ("coarse",)),
        ("sort_axisNone", "sort", lambda x: rnp.sort(x, axis=None),
         lambda x: stable(x, axis=None), (((2, 3),), ((),)), ("coarse",)),
        ("sort_descending", "sort", lambda x: rnp.sort(x, descending=True), _sorted_desc,
         (((6,),), ((2, 4),), ((0,),)), ("special",)),
        ("argsort", "sort", rnp.argsort, lambda x: np.argsort(x, kind="stable"),
         (((6,),), ((3, 4),), ((0,),)), ("coarse",)),
        ("argsort_special", "sort", rnp.argsort, lambda x: np.argsort(x, kind="stable"),
         (((8,),),), ("special",)),
        ("argsort_descending", "sort", lambda x: rnp.argsort(x, descending=True),
         np_argsort_descending, (((6,),), ((3, 4),)), ("special",)),
        ("cumsum", "cumulative", rnp.cumsum, np.cumsum, U),
        ("cumsum_axis1", "cumulative", lambda x: rnp.cumsum(x, axis=1),
         lambda x: np.cumsum(x, axis=1), (((2, 3),), ((3, 0),), ((2, 4, 2),))),
        ("cumprod_axis0", "cumulative", lambda x: rnp.cumprod(x, axis=0),
         lambda x: np.cumprod(x, axis=0), (((4, 2),), ((0, 3),))),
        ("cummax", "cumulative", lambda x: accumulate("maximum", x, 0),
         lambda x: np.maximum.accumulate(x, 0), (((6,),), ((4, 3),), ((0, 2),)), ("special",)),
        ("cummin_axis1", "cumulative", lambda x: accumulate("minimum", x, 1),
         lambda x: np.minimum.accumulate(x, 1), (((3, 4),),), ("special",)),
        # the primitive itself: in the operand's dtype, and from the end
        ("cumulative_sum_reverse", "cumulative", lambda x: so.cumulative(x, 1, "sum", True),
         _reverse_accumulate(np.add, 1), (((2, 4),), ((3, 0),)), ("any",), F64, NUMERIC),
        *[(f"cumulative_{op}_reverse", "cumulative", lambda x, op=op: so.cumulative(
            x, 0, op, True), _reverse_accumulate(uf, 0), (((5,),), ((4, 2),)), ("special",))
          for op, uf in (("prod", np.multiply), ("max", np.maximum), ("min", np.minimum))],
    ]
    return [Case(*r) for r in rows]


def _dot_general_ref(a, b):
    return np.einsum("ijk,kjl->jil", a, b)


def _linalg() -> list[Case]:
    rows = [
        ("matmul", "dot_general", rnp.matmul, np.matmul,
         (((3, 4), (4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)), ((2, 0), (0, 3)),
          ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 2)))),
        ("dot", "dot_general", rnp.dot, np.dot,
         (((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (4, 2)))),
        ("dot_scalar", "mul", rnp.dot, np.dot, (((), (3,)),)),
        ("outer", "mul", rnp.outer, np.outer, (((3,), (2,)), ((2, 2), (3,)))),
        ("dot_general_batch_mid", "dot_general",
         lambda a, b: la.dot_general(a, b, ((2,), (0,)), ((1,), (1,))), _dot_general_ref,
         (((2, 3, 4), (4, 3, 5)),)),
        ("diag_solve", "diag_solve", la.diag_solve, lambda d, b: b / d,
         (((), ()), ((2, 3), (2, 3))), ("nonzero", "any"), F64, FLOATS),
        ("solve", "solve", rnp.linalg.solve, np.linalg.solve,
         (((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((2, 3, 3), (3, 2))),
         ("wellcond", "any")),
        # decompositions (ops/decomp.py; LAPACK when compiled)
        ("cholesky", "cholesky", rnp.linalg.cholesky, np.linalg.cholesky,
         (((3, 3),), ((2, 4, 4),), ((0, 0),)), ("spd",)),
        ("solve_triangular", "triangular_solve",
         lambda a, b: rsl.solve_triangular(a, b, lower=True),
         lambda a, b: np.linalg.solve(np.tril(a), b), (((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1))),
         ("wellcond", "any")),
        ("det", "lu", rnp.linalg.det, np.linalg.det, (((3, 3),), ((2, 4, 4),)), ("wellcond",)),
        ("eigvalsh", "eigh", rnp.linalg.eigvalsh, np.linalg.eigvalsh,
         (((3, 3),), ((2, 4, 4),)), ("pos",)),
        ("qr_r", "qr", lambda a: rnp.linalg.qr(a, "r"), lambda a: np.linalg.qr(a, "r"),
         (((4, 3),), ((2, 3, 4),)), ("pos",)),
        ("svd_values", "svd", lambda a: rnp.linalg.svd(a, compute_uv=False),
         lambda a: np.linalg.svd(a, compute_uv=False), (((4, 3),), ((2, 3, 4),)), ("pos",)),
        # eig's eigenvalues (in LAPACK's order, which LAPACK builds may differ in: sorted)
        ("eigvals", "eig", lambda a: rnp.sort(rnp.linalg.eigvals(a)),
         lambda a: _complex_sorted(np.linalg.eigvals(a)),
         (((3, 3),), ((2, 4, 4),)), ("any",)),
        # a decomposition on NumPy's memory of complex matrices, as compiled code runs it
        ("decomp_memory_eigvalsh", "decomp_memory", lambda x: dc.decomp_memory(
            "eigh", [x], [True], {"vectors": False})[0], lambda x: np.linalg.eigvalsh(
            np.ascontiguousarray(x).view(np.result_type(x, np.complex64))[..., 0]),
         (((3, 3, 2),), ((2, 4, 4, 2),)), ("any",), F64, (F64, F32)),
    ]
    return [Case(*r) for r in rows]


def _complex_sorted(w: np.ndarray) -> np.ndarray:
    """NumPy's eigenvalues (real when they all are) in complex of their precision, sorted."""
    return np.sort(w.astype(np.result_type(w, np.complex64)))


def _memory_ref(kind: str, n: int) -> Callable:
    """NumPy's transform, as fft_memory computes it: complex sides as their memory (a
    last axis of 2), scale 1 (the inverse unscaled: NumPy's norm="forward")."""
    def ref(x):
        if kind != "r2c":
            x = np.ascontiguousarray(x).view(np.result_type(x.dtype, np.complex64))[..., 0]
        y = {"c2c": np.fft.fft, "r2c": np.fft.rfft, "c2r": np.fft.irfft}[kind](
            x, n, norm="forward" if kind == "c2r" else "backward")
        return y.view(y.real.dtype).reshape(y.shape + (2,)) if y.dtype.kind == "c" else y
    return ref


def _fft() -> list[Case]:
    """The transforms (ops/fft.py; NumPy's pocketfft when compiled), through numpy.fft's
    functions, and fft_memory, the form compiled code computes, bound on NumPy's memory
    of complex numbers."""
    rows = [
        ("fft", "fft", rnp.fft.fft, np.fft.fft, (((5,),), ((2, 3, 4),), ((1,),))),
        ("ifft_n", "fft", lambda a: rnp.fft.ifft(a, 6, 0), lambda a: np.fft.ifft(a, 6, 0),
         (((5,),), ((3, 2),))),
        ("rfft", "fft", rnp.fft.rfft, np.fft.rfft, (((5,),), ((2, 6),))),
        ("irfft", "fft", rnp.fft.irfft, np.fft.irfft, (((5,),), ((2, 3, 4),))),
        *[(f"fft_memory_{kind}", "fft_memory", lambda x, kind=kind, n=n: ffts.fft_memory(
            x, kind, kind != "c2r", n, 1.0), _memory_ref(kind, n), shapes, (), F64, (F64, F32))
          for kind, n, shapes in (("c2c", 4, (((4, 2),), ((2, 4, 2),))),
                                  ("r2c", 5, (((5,),), ((3, 5),))),
                                  ("c2r", 6, (((4, 2),), ((2, 4, 2),))))],
    ]
    return [Case(*r) for r in rows]


def _cond_sum_or_product(p, a, b):
    return rune.cond(p, lambda x, y: x + y, lambda x, y: x * y, a, b)


def _cond_capture(p, a, b):
    return rune.cond(p, lambda x: rnp.maximum(x, b), lambda x: rnp.minimum(x, b), a)


def _running_product(c, xs, reverse=False):
    return rune.scan(lambda a, r: (a * r, a * r), c, xs, reverse=reverse)[1]


def checkpointed_product(c, xs):
    """The running product, reverse mode keeping 2 of its 4 carries (scan checkpoints=)."""
    return rune.scan(lambda a, r: (a * r, a * r), c, xs, checkpoints=2)[1]


def linearized_checkpointed_product(xs, t):
    """The linear map of checkpointed_product at c = 1.5 (what linearize stages)."""
    c = np.asarray(1.5, np.result_type(t))
    return rune.linearize(lambda c: checkpointed_product(c, xs), c)[1](t)


def np_running_product(c, xs, reverse=False):
    ys = []
    for r in (xs[::-1] if reverse else xs):
        c = c * r
        ys.append(c)
    return np.stack(ys[::-1] if reverse else ys)


def _scan_with_capture(w, c, xs):
    return rune.scan(lambda a, r: (rnp.maximum(a, r) + w, a), c, xs)[0]


def np_scan_with_capture(w, c, xs):
    for r in xs:
        c = np.maximum(c, r) + w
    return c


def _doubling(x, times):
    """x doubled `times` times by an iterate whose stop test reads a captured count."""
    def step(carry):
        n, y = carry
        return n + 1, y + y

    return rune.iterate(step, (np.int64(0), x), until=lambda c: c[0] >= times, max_steps=8)[1]


def np_doubling(x, times):
    for _ in range(int(times)):
        x = x + x
    return x


def diagonal_solve(matvec, b):
    """A user's linear solver for a diagonal A: b / diag(A), where diag(A) = A 1."""
    return b / matvec(rnp.ones_like(b))


def root_sqrt(a, linear_solver="dense", linear_solve=None):
    return rune.root(lambda x: x * x - a, lambda: rnp.sqrt(a), linear_solver=linear_solver,
                     linear_solve=linear_solve)


def _times_plus(x, y):
    return rnp.add(rnp.multiply(x, y), x)  # rune_jit's arrays, called on NumPy's too


_jvp_times_plus = rune.custom_jvp(_times_plus)
_jvp_times_plus.defjvp(lambda p, t: (_times_plus(*p), t[0] * p[1] + p[0] * t[1] + t[0]))
_vjp_times_plus = rune.custom_vjp(_times_plus)
_vjp_times_plus.defvjp(lambda x, y: (_times_plus(x, y), (x, y)),
                       lambda res, ct: (ct * res[1] + ct, ct * res[0]))
_vjp_square = rune.custom_vjp(lambda v: rnp.multiply(v, v))
_vjp_square.defvjp(lambda v: (v * v, v), lambda v, ct: (2 * v * ct,))


def _jvp_scaled(x, w):
    """A custom_jvp function that closes over w (a capture of its call)."""
    f = rune.custom_jvp(lambda v: rnp.multiply(v, w))
    f.defjvp(lambda p, t: (rnp.multiply(p[0], w), t[0] * w))
    return f(x)


def np_forward_mode_of_custom_vjp(*args):
    raise TypeError("a custom_vjp function has a reverse-mode rule only, as in JAX")


def _custom() -> list[Case]:
    same = (((), ()), ((3,), (3,)), ((2, 3), (2, 3)))  # bwd returns cotangents unbroadcast
    np_times_plus = lambda x, y: x * y + x
    rows = [
        ("custom_jvp", "custom_jvp_call", _jvp_times_plus, np_times_plus, B[:3]),
        ("custom_jvp_capture", "custom_jvp_call", _jvp_scaled, lambda x, w: x * w, B[:3]),
        ("custom_vjp", "custom_vjp_call", _vjp_times_plus, np_times_plus, same),
        # what forward mode of a custom_vjp function stages: an error when it runs
        ("jvp_of_custom_vjp", "custom_lin", lambda x: rune.jvp(_vjp_square, (x,), (x,))[1],
         np_forward_mode_of_custom_vjp, U[:2], (), F64, FLOATS),
        ("checkpoint_name", "name",
         lambda x, y: rnp.add(rune.checkpoint_name(rnp.multiply(x, y), "h"), y),
         lambda x, y: x * y + y, B[:3]),
        ("debug_callback", "debug_callback",
         lambda x, y: (rune.debug.callback(lambda a, b: None, x, y), rnp.add(x, y))[1],
         lambda x, y: x + y, B[:3]),
        ("check", "check", lambda x, y: (rune.check(rnp.all(x == x), "x = {}", x),
                                         rnp.add(x, y))[1], lambda x, y: x + y, B[:3]),
        ("pure_callback", "pure_callback", _host_add, lambda x, y: x + y, B[:3]),
        ("pure_callback_broadcast_all", "pure_callback",
         lambda x: rune.pure_callback(np.abs, x, x, vmap_method="broadcast_all"), np.abs, U),
    ]
    return [Case(*r) for r in rows]


def _host_add(x, y):
    """NumPy's add, called back once per lane under vmap."""
    out = rune.ShapeDtypeStruct(np.broadcast_shapes(x.shape, y.shape),
                                np.result_type(x.dtype, y.dtype))
    return rune.pure_callback(np.add, out, x, y, vmap_method="sequential")


def _remat(x, y):
    return rune.remat(lambda a: a * y + a)(x)


def _loops() -> list[Case]:
    rows = [
        ("scan", "scan", _running_product, np_running_product,
         (((), (4,)), ((3,), (4, 3)))),
        ("scan_reverse", "scan", lambda c, xs: _running_product(c, xs, True),
         lambda c, xs: np_running_product(c, xs, True), (((2,), (3, 2)),)),
        ("scan_capture", "scan", _scan_with_capture, np_scan_with_capture,
         (((), (), (4,)), ((3,), (3,), (2, 3)))),
        ("iterate", "iterate", _doubling, np_doubling, (((), ()), ((3,), ())),
         ("any", "count")),
        *[(f"root_{s}", "root", lambda a, s=s: root_sqrt(a, s), np.sqrt, U[:2], ("pos",))
          for s in ("dense", "diagonal")],
        ("root_linear_solve_jvp", "tangent_solve",  # d sqrt(a) along a: sqrt(a) / 2
         lambda a: rune.jvp(lambda a: root_sqrt(a, linear_solve=diagonal_solve), (a,), (a,))[1],
         lambda a: np.sqrt(a) / 2, U[:2], ("pos",), F64, FLOATS),  # (a jvp: float tangents)
        ("remat", "remat", _remat, lambda x, y: x * y + x, B[:3]),
        ("scan_checkpointed", "checkpointed", checkpointed_product, np_running_product,
         (((), (4,)), ((3,), (4, 3)))),
        ("scan_checkpointed_linearized", "checkpointed_lin", linearized_checkpointed_product,
         lambda xs, t: np_running_product(t, xs), (((4,), ()),), (), F64, FLOATS),
    ]
    return [Case(*r) for r in rows]


def _control() -> list[Case]:
    rows = [
        ("cond", "cond", _cond_sum_or_product, lambda p, a, b: np.where(p, a + b, a * b),
         (((), (), ()), ((), (3,), (3,))), ("pred",)),
        ("cond_int_pred", "cond", _cond_sum_or_product,
         lambda p, a, b: np.where(p != 0, a + b, a * b), (((), (3,), (3,)),), ("coarse",)),
        ("cond_capture", "cond", _cond_capture,
         lambda p, a, b: np.where(p, np.maximum(a, b), np.minimum(a, b)),
         (((), (2, 3), (2, 3)),), ("pred",)),
    ]
    return [Case(*r) for r in rows]


CASES = (_elementwise() + _shape_ops() + _reductions() + _indexing() + _gather_scatter()
         + _sorting() + _linalg() + _fft() + _control() + _custom() + _loops())
