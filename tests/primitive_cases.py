"""The primitive test tables: one row per operation, shared by the value and vmap tests.

A row pairs a function written with rune_jit (through rune_jit.numpy where it
offers the operation, else the IR-level op) with the same function in NumPy,
the argument shapes to try (each variant a tuple of shapes, one per argument)
and each argument's domain (how its values are drawn).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit.api import as_value
from rune_jit.interpret import eval_region
from rune_jit.ir import Region
from rune_jit.numpy.indexing import getitem
from rune_jit.ops import elementwise as ew
from rune_jit.ops import index as ix
from rune_jit.ops import linalg as la
from rune_jit.ops import shape as sh
from rune_jit.trace import bind1

F64, F32, I64, I32, BOOL = (np.dtype(t) for t in ("float64", "float32", "int64", "int32", "bool"))
DTYPES = (F64, F32, I64, I32, BOOL)
FLOATS, INTS = (F64, F32), (I64, I32)
NUMERIC = FLOATS + INTS


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

# Each domain draws (float values, integer values); bools are random where a domain
# allows False and all True where it needs nonzero values.
DOMAINS = {
    "any": (lambda r, s: r.standard_normal(s), lambda r, s: r.integers(-5, 6, s)),
    "coarse": (lambda r, s: r.integers(-2, 3, s), lambda r, s: r.integers(-2, 3, s)),  # ties
    "pos": (lambda r, s: r.uniform(0.5, 2.5, s), lambda r, s: r.integers(1, 6, s)),
    "nonzero": (lambda r, s: r.choice([-1, 1], s) * r.uniform(0.5, 2.5, s),
                lambda r, s: r.choice([-1, 1], s) * r.integers(1, 6, s)),
    "exponent": (lambda r, s: r.uniform(-2, 2, s), lambda r, s: r.integers(0, 4, s)),
    "small": (lambda r, s: r.uniform(-1, 1, s), lambda r, s: r.integers(-1, 2, s)),
    "special": (lambda r, s: r.choice([0.5, -1.0, np.nan, np.inf, -np.inf], s),
                lambda r, s: r.integers(-5, 6, s)),
}
RANDOM_BOOLS = ("any", "coarse", "exponent", "small", "special")
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
    if dtype.kind == "b":
        random = domain in RANDOM_BOOLS
        return np.asarray(rng.random(shape) < 0.5) if random else np.ones(shape, bool)
    floats, ints = DOMAINS[domain]
    return np.asarray((floats if dtype.kind == "f" else ints)(rng, shape), dtype)


def _well_conditioned(rng, shape: tuple, dtype: np.dtype) -> np.ndarray:
    n = shape[-1]
    if dtype.kind == "b":
        return np.broadcast_to(np.eye(n, dtype=bool), shape).copy()
    noise = rng.integers(-2, 3, shape) if dtype.kind == "i" else rng.uniform(-1, 1, shape)
    return np.asarray(noise + 3 * n * np.eye(n), dtype)


# ------------------------------------------------------------- what NumPy says

def expected(ref: Callable, args: list):
    """NumPy's result; or the error class NumPy raises (TypeError or ValueError), and
    TypeError where NumPy gives a dtype rune_jit lacks. rune_jit has no float16: where
    NumPy makes float16 of bools, it uses float64."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty axis
            out = np.asarray(ref(*args))
            if out.dtype == np.float16:
                out = np.asarray(ref(*map(_bool_as_float, args)))
    except (TypeError, ValueError) as err:
        return TypeError if isinstance(err, TypeError) else ValueError
    return out if out.dtype in DTYPES else TypeError


def _bool_as_float(a):
    if isinstance(a, bool):
        return float(a)
    return a.astype(F64) if isinstance(a, np.ndarray) and a.dtype == BOOL else a


def is_error(want) -> bool:
    return isinstance(want, type) and issubclass(want, Exception)


def assert_outcome(run: Callable, args: list, want) -> None:
    """run(*args) gives what NumPy gives, or raises the error class NumPy raises."""
    if is_error(want):
        with pytest.raises(want):
            run(*args)
    else:
        assert_matches(run(*args), want)


TOL = {F64: dict(rtol=1e-12, atol=1e-12), F32: dict(rtol=2e-6, atol=1e-6)}


def assert_matches(got, want: np.ndarray) -> None:
    assert isinstance(got, np.ndarray), f"result is a {type(got).__name__}, not an ndarray"
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (
        f"got {got.dtype}{list(got.shape)}, NumPy gives {want.dtype}{list(want.shape)}")
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, equal_nan=True, **TOL[want.dtype])
    else:
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------- the staged path

def staged(f: Callable) -> Callable:
    """f traced to IR, then run by the reference interpreter (one result)."""

    def run(*args):
        (out,) = eval_region(rune.make_ir(f)(*args), [as_value(a) for a in args])
        return out

    return run


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
}
BINARY = {  # rune_jit.numpy name: (primitive, domains)
    "add": ("add", ()), "multiply": ("mul", ()), "subtract": ("sub", ()),
    "maximum": ("max", ("coarse", "coarse")), "minimum": ("min", ("coarse", "coarse")),
    "power": ("pow", ("pos", "exponent")), "divide": ("div", ("any", "nonzero")),
    "floor_divide": ("floor_divide", ("any", "nonzero")),
    "remainder": ("remainder", ("any", "nonzero")), "arctan2": ("arctan2", ()),
    "less": ("lt", ("coarse", "coarse")), "less_equal": ("le", ("coarse", "coarse")),
    "greater": ("gt", ("coarse", "coarse")), "greater_equal": ("ge", ("coarse", "coarse")),
    "equal": ("eq", ("coarse", "coarse")), "not_equal": ("ne", ("coarse", "coarse")),
    "logical_and": ("logical_and", ("coarse", "coarse")),
    "logical_or": ("logical_or", ("coarse", "coarse")),
    "logical_xor": ("logical_xor", ("coarse", "coarse")),
}
LOGICAL = ("logical_not", "logical_and", "logical_or", "logical_xor")


def _elementwise() -> list[Case]:
    cases = [Case(n, p, getattr(rnp, n), getattr(np, n), U, (d,),
                  BOOL if n in LOGICAL else F64) for n, (p, d) in UNARY.items()]
    cases += [Case(n, p, getattr(rnp, n), getattr(np, n), B, d,
                   BOOL if n in LOGICAL else F64) for n, (p, d) in BINARY.items()]
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
    ]
    return [Case(*r) for r in rows]


def _cond_sum_or_product(p, a, b):
    return rune.cond(p, lambda x, y: x + y, lambda x, y: x * y, a, b)


def _cond_capture(p, a, b):
    return rune.cond(p, lambda x: rnp.maximum(x, b), lambda x: rnp.minimum(x, b), a)


def _running_product(c, xs, reverse=False):
    return rune.scan(lambda a, r: (a * r, a * r), c, xs, reverse=reverse)[1]


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


def _root_sqrt(a, linear_solver):
    return rune.root(lambda x: x * x - a, lambda: rnp.sqrt(a), linear_solver=linear_solver)


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
        *[(f"root_{s}", "root", lambda a, s=s: _root_sqrt(a, s), np.sqrt, U[:2], ("pos",))
          for s in ("dense", "diagonal")],
        ("remat", "remat", _remat, lambda x, y: x * y + x, B[:3]),
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


CASES = (_elementwise() + _shape_ops() + _reductions() + _indexing() + _linalg() + _control()
         + _loops())
