"""Every registered primitive: its rule slots, the dtypes it accepts, and that each
transpose it has is the adjoint of a map that really is linear."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.ad_util import UndefinedPrimal, Zero
from rune_jit._src.ir import Literal, Var, type_of
from rune_jit._src.ops import complex_parts as cp
from rune_jit._src.ops import elementwise as ew
from rune_jit._src.ops import fft as ffts
from rune_jit._src.ops import gather as gt
from rune_jit._src.ops import index as ix
from rune_jit._src.ops import decomp as dc
from rune_jit._src.ops import linalg as la
from rune_jit._src.ops import shape as sh
from rune_jit._src.ops import sort as so
from rune_jit._src.primitive import SLOTS, Absent, Primitive
from rune_jit._src.trace import bind, bind1
from primitive_cases import (BOOL, DTYPES, F16, F32, F64, FLOATS, I16, I32, I64, INTS, NUMERIC,
                             SIGNED, U16, U32, UNARY, checkpointed_product, diagonal_solve,
                             draw, linearized_checkpointed_product, prims_in)

C128 = np.dtype(np.complex128)

MEANING = ("shape", "impl")  # a primitive may lack a derivative, never a type or a value
PRIMITIVES = sorted(Primitive.registry)


@pytest.mark.parametrize("name", PRIMITIVES)
def test_every_slot_is_filled_or_marked_absent(name):
    rules = Primitive.registry[name].rules
    for slot in SLOTS:
        rule = rules.get(slot)
        assert callable(rule) or (isinstance(rule, Absent) and rule.reason), (
            f"{name}: slot {slot} holds {rule!r}, neither a rule nor Absent(reason)")
    for slot in MEANING:
        assert callable(rules[slot]), f"{name} has no {slot} rule"


# ------------------------------------------------------------- dtypes, at the primitive

# Operand codes: x is a [3] array of the dtype under test, s a scalar of it, m a [3,3]
# of it; p a bool [3]; i an int64 scalar; f a float64 [3].
OPERANDS = {"x": ((3,), None), "s": ((), None), "m": ((3, 3), None), "p": ((3,), BOOL),
            "i": ((), I64), "f": ((3,), F64)}
ALL = DTYPES


@dataclass(frozen=True)
class Strict:
    prim: str
    operands: str
    accepts: tuple
    call: Callable | None = None  # default: bind the primitive with `params`
    params: tuple = ()

    def run(self, *args):
        if self.call is not None:
            return self.call(*args)
        return bind1(Primitive.registry[self.prim], *args, **dict(self.params))


UNARY_FLOAT = [p for p, _ in UNARY.values() if p not in
               ("neg", "abs", "sign", "isnan", "isfinite", "logical_not", "bitwise_not",
                "bitwise_count")]
STRICT = [
    *[Strict(p, "x", FLOATS) for p in UNARY_FLOAT + ["isnan", "isfinite", "div", "arctan2"]],
    *[Strict(p, "x", NUMERIC) for p in ("neg", "abs", "sign")],
    *[Strict(p, "xx", ALL) for p in ("add", "mul", "max", "min", "lt", "le", "gt", "ge", "eq",
                                     "ne")],
    *[Strict(p, "xx", NUMERIC) for p in ("sub", "pow", "floor_divide", "remainder")],
    *[Strict(p, "xx", (BOOL,)) for p in ("logical_and", "logical_or", "logical_xor")],
    Strict("logical_not", "x", (BOOL,)),
    *[Strict(p, "xx", INTS) for p in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
                                      "shift_right")],
    *[Strict(p, "x", INTS) for p in ("bitwise_not", "bitwise_count")],
    *[Strict(p, "x", FLOATS) for p in ("erf", "erfinv", "erfc")],
    *[Strict(p, "xx", FLOATS) for p in ("hypot", "copysign")],
    Strict("fmod", "xx", NUMERIC),
    Strict("bitcast_convert", "x", (F32, I32, U32), params=(("dtype", U32),)),
    Strict("bitcast_convert", "x", (F16, I16, U16), params=(("dtype", F16),)),
    Strict("select", "pxx", ALL),
    Strict("select", "xff", (BOOL,), lambda p, a, b: ew.select(p, a, b)),
    Strict("convert", "x", ALL, params=(("dtype", F64),)),
    Strict("broadcast_in_dim", "x", ALL, params=(("shape", (2, 3)), ("broadcast_dims", (1,)))),
    Strict("reshape", "m", ALL, params=(("shape", (9,)),)),
    Strict("transpose", "m", ALL, params=(("perm", (1, 0)),)),
    Strict("rev", "x", ALL, params=(("axes", (0,)),)),
    Strict("slice", "x", ALL, params=(("starts", (1,)), ("limits", (3,)), ("strides", (1,)))),
    Strict("pad", "x", ALL, params=(("shape", (5,)), ("starts", (1,)), ("strides", (1,)))),
    Strict("concatenate", "xx", ALL, params=(("axis", 0),)),
    Strict("iota", "s", NUMERIC, lambda s: sh.iota((3,), 0, s.dtype)),
    Strict("stop_gradient", "x", ALL),
    Strict("dynamic_slice", "xi", ALL, lambda x, i: ix.dynamic_slice(x, [i], (2,))),
    Strict("dynamic_slice", "fs", SIGNED, lambda f, s: ix.dynamic_slice(f, [s], (2,))),
    Strict("dynamic_update_slice", "xxi", ALL,
           lambda x, u, i: ix.dynamic_update_slice(x, u, [i])),
    Strict("dynamic_update_slice", "ffs", SIGNED,
           lambda x, u, s: ix.dynamic_update_slice(x, u, [s])),
    Strict("gather", "xi", ALL, lambda x, i: gt.gather(x, [i])),
    Strict("gather", "fx", INTS, lambda f, x: gt.gather(f, [x], "clip")),  # the indices
    *[Strict("scatter", "xis", ALL, lambda x, i, s, op=op: gt.scatter(x, [i], s, op))
      for op in gt.SCATTER_OPS],
    Strict("scatter", "fxf", INTS, lambda f, x, u: gt.scatter(f, [x], u, "add", "drop")),
    Strict("index_check", "x", INTS, lambda i: gt.index_check(i, 9, 0)),
    Strict("sort", "x", ALL, lambda x: so.sort(x)[0]),
    Strict("sort", "m", ALL, lambda m: so.sort(m, descending=True)[1]),
    Strict("cumulative", "m", NUMERIC, params=(("axis", 1), ("op", "sum"), ("reverse", False))),
    *[Strict("cumulative", "m", ALL, params=(("axis", 0), ("op", op), ("reverse", True)))
      for op in ("prod", "max", "min")],
    Strict("fma", "xxx", FLOATS),
    Strict("fma", "sxs", FLOATS),
    Strict("dot_general", "mx", ALL, lambda m, x: la.dot_general(m, x, ((1,), (0,)))),
    Strict("solve", "mm", (F64, F32)),  # as numpy.linalg: no float16
    # decompositions: LAPACK's real dtypes (float32, float64)
    Strict("cholesky", "m", (F64, F32)),
    Strict("triangular_solve", "mm", (F64, F32),
           lambda a, b: dc.triangular_solve(a, b, lower=True)),
    Strict("lu", "m", (F64, F32), lambda m: dc.lu(m)[0]),
    Strict("eigh", "m", (F64, F32), lambda m: dc.eigh(m)[1]),
    Strict("qr", "m", (F64, F32), lambda m: dc.qr(m)[1]),
    Strict("svd", "m", (F64, F32), lambda m: dc.svd(m)[1]),
    Strict("eig", "m", (F64, F32), lambda m: dc.eig(m)[0]),
    # (and complex64, complex128: tests/numpy_api/test_linalg_complex.py); decomp_memory
    # takes a decomposition's operands as they are, complex ones as NumPy's memory
    Strict("decomp_memory", "m", (F64, F32),
           lambda m: dc.decomp_memory("lu", [m], [False], {})[0]),
    Strict("diag_solve", "xx", FLOATS),
    # complex parts: real, imag and conj take complex values only (tests/primitives/
    # test_complex.py), complex two floats
    *[Strict(p, "x", ()) for p in ("real", "imag", "conj")],
    Strict("complex", "xx", FLOATS),
    # the FFT: c2c and c2r transform complex values only, r2c floats, as fft_memory does
    # (tests/numpy_api/test_fft.py)
    Strict("fft", "x", (), params=(("kind", "c2c"), ("forward", True), ("n", 3),
                                   ("scale", 1.0))),
    Strict("fft", "x", (F64, F32), params=(("kind", "r2c"), ("forward", True), ("n", 3),
                                           ("scale", 1.0))),
    Strict("fft_memory", "x", (F64, F32), lambda x: ffts.fft_memory(x, "r2c", True, 3, 1.0)),
    *[Strict(p, "m", ALL, params=(("axes", (0,)),))
      for p in ("reduce_prod", "reduce_max", "reduce_min")],
    Strict("reduce_sum", "m", NUMERIC, params=(("axes", (0,)),)),
    *[Strict(p, "m", ALL, params=(("axis", 1), ("index_dtype", I64)))
      for p in ("argmax", "argmin")],
    # structured primitives: their params are regions, so they are made by the public calls
    Strict("cond", "x", ALL,
           lambda x: rune.cond(np.bool_(True), lambda v: v, lambda v: v[::-1], x)),
    Strict("scan", "sx", ALL, lambda s, x: rune.scan(lambda c, r: (r, c), s, x)),
    Strict("checkpointed", "sx", ALL,
           lambda s, x: rune.scan(lambda c, r: (r, c), s, x, checkpoints=1)),
    Strict("checkpointed_lin", "x", FLOATS, lambda x: _linearized_at_float(x)),
    Strict("iterate", "x", ALL, lambda x: rune.iterate(
        lambda c: c, x, until=lambda c: rnp.all(c == c), max_steps=2)),
    Strict("root", "x", FLOATS, lambda x: rune.root(lambda y: y - x, lambda: x)),
    Strict("tangent_solve", "x", FLOATS, lambda x: rune.jvp(
        lambda a: rune.root(lambda y: y - a, lambda: a, linear_solve=diagonal_solve),
        (x,), (x,))[1]),
    Strict("remat", "x", ALL, lambda x: rune.remat(lambda v: v)(x)),
    Strict("name", "x", ALL, lambda x: rune.checkpoint_name(x, "n")),
    Strict("debug_callback", "x", ALL, lambda x: (rune.debug.callback(lambda v: None, x), x)[1]),
    Strict("check", "x", ALL, lambda x: (rune.check(rnp.all(x == x), "x = {}", x), x)[1]),
    Strict("pure_callback", "x", ALL, lambda x: rune.pure_callback(lambda v: v, x, x)),
    Strict("custom_jvp_call", "x", ALL, lambda x: _custom_identity()[0](x)),
    Strict("custom_vjp_call", "x", ALL, lambda x: _custom_identity()[1](x)),
    Strict("custom_lin", "x", ALL, lambda x: _custom_lin(x)),
]


def _linearized_at_float(x):
    """The linear map of a checkpointed scan at a float primal, applied to x's first
    element: a tangent of an integer or bool dtype is refused (TypeError)."""
    c = np.asarray(1.5, x.dtype if x.dtype.kind == "f" else np.float64)
    return rune.linearize(lambda c: checkpointed_product(c, x), c)[1](x[0])


def _custom_identity():
    f = rune.custom_jvp(lambda v: v)
    f.defjvp(lambda p, t: (p[0], t[0]))
    g = rune.custom_vjp(lambda v: v)
    g.defvjp(lambda v: (v, ()), lambda res, ct: (ct,))
    return f, g


def _custom_lin(x):
    """What the jvp of a custom_vjp function stages: here with an identity bwd."""
    from rune_jit._src.ops.custom import custom_lin_p
    from rune_jit._src.trace import trace_flat, type_of_value

    t = type_of_value(x)
    bwd = trace_flat(lambda ct: [ct], [t])
    return bind1(custom_lin_p, x, bwd=bwd, num_res=0, arg_types=(t,), out_types=(t,),
                 num_captures=0)


def test_every_primitive_has_a_dtype_row():
    missing = set(Primitive.registry) - {row.prim for row in STRICT}
    assert not missing, f"primitives with no row in STRICT: {sorted(missing)}"


def _operand(rng, code: str, dtype: np.dtype) -> np.ndarray:
    shape, fixed = OPERANDS[code]
    return draw(rng, shape, fixed or dtype, "pos")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("row", STRICT, ids=lambda r: f"{r.prim}-{r.operands}")
def test_primitive_accepts_exactly_its_dtypes(row, dtype, rng):
    args = [_operand(rng, c, dtype) for c in row.operands]
    if dtype in row.accepts:
        assert row.prim in prims_in(rune.make_ir(row.run)(*args))
    else:
        with pytest.raises(TypeError):
            rune.make_ir(row.run)(*args)


# ------------------------------------------------------------- transposes are adjoints


@dataclass(frozen=True)
class Linear:
    id: str
    prim: str
    fn: Callable
    args: tuple  # (shape, domain[, dtype]) per argument
    linear: tuple  # the arguments the primitive is linear in, jointly

    def draw(self, rng) -> list:
        return [draw(rng, a[0], a[2] if len(a) > 2 else F64, a[1]) for a in self.args]


V3, S, P3 = ((3,), "any"), ((), "any"), ((3,), "pred")


def _sin_times(w, a):
    return ew.mul(ew.sin(w), a)


LINEAR = [
    Linear("neg", "neg", ew.neg, (V3,), (0,)),
    Linear("add", "add", ew.add, (V3, V3), (0, 1)),
    Linear("add_scalar", "add", ew.add, (V3, S), (0, 1)),
    Linear("sub", "sub", ew.sub, (S, V3), (0, 1)),
    Linear("mul_lhs", "mul", ew.mul, (V3, V3), (0,)),
    Linear("mul_scalar_rhs", "mul", ew.mul, (V3, S), (1,)),
    Linear("div_numerator", "div", ew.div, (V3, ((3,), "nonzero")), (0,)),
    Linear("div_scalar_numerator", "div", ew.div, (S, ((3,), "nonzero")), (0,)),
    Linear("select", "select", ew.select, (P3, V3, V3), (1, 2)),
    Linear("convert_f64_f32", "convert", lambda x: ew.convert(x, F32), (V3,), (0,)),
    Linear("convert_f32_f64", "convert", lambda x: ew.convert(x, F64), (((3,), "any", F32),),
           (0,)),
    Linear("broadcast_in_dim", "broadcast_in_dim",
           lambda x: sh.broadcast_in_dim(x, (2, 3, 4), (1,)), (V3,), (0,)),
    Linear("broadcast_stretch", "broadcast_in_dim",
           lambda x: sh.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (((1, 4), "any"),), (0,)),
    Linear("reshape", "reshape", lambda x: sh.reshape(x, (3, 2)), (((2, 3), "any"),), (0,)),
    Linear("transpose", "transpose", lambda x: sh.transpose(x, (2, 0, 1)),
           (((2, 3, 4), "any"),), (0,)),
    Linear("rev", "rev", lambda x: sh.rev(x, (0, 1)), (((3, 4), "any"),), (0,)),
    Linear("slice", "slice", lambda x: sh.slice_op(x, (1, 0), (5, 4), (2, 3)),
           (((5, 4), "any"),), (0,)),
    Linear("pad", "pad", lambda x: bind1(sh.pad_p, x, shape=(7,), starts=(1,), strides=(2,)),
           (V3,), (0,)),
    Linear("concatenate", "concatenate", lambda a, b: sh.concatenate([a, b], 1),
           (((2, 3), "any"), ((2, 2), "any")), (0, 1)),
    Linear("concatenate_second", "concatenate", lambda a, b: sh.concatenate([a, b], 0),
           (V3, V3), (1,)),
    Linear("reduce_sum", "reduce_sum", lambda x: bind1(Primitive.registry["reduce_sum"], x,
                                                       axes=(0, 2)),
           (((2, 3, 4), "any"),), (0,)),
    Linear("dynamic_slice", "dynamic_slice", lambda x, i, j: ix.dynamic_slice(x, [i, j], (2, 2)),
           (((4, 3), "any"), ((), "start"), ((), "start")), (0,)),
    Linear("dynamic_update_slice", "dynamic_update_slice",
           lambda x, u, i: ix.dynamic_update_slice(x, u, [i]),
           (((5,), "any"), ((2,), "any"), ((), "start")), (0, 1)),
    Linear("dynamic_update_slice_update", "dynamic_update_slice",
           lambda x, u, i: ix.dynamic_update_slice(x, u, [i]),
           (((5,), "any"), ((2,), "any"), ((), "start")), (1,)),
    Linear("gather", "gather", lambda x, i: gt.gather(x, [i]),
           (((5, 2), "any"), ((6,), "index")), (0,)),  # repeated indices among the 6
    *[Linear(f"gather_{m}", "gather", lambda x, i, j, m=m: gt.gather(x, [i, j], m, 2.5),
             (((4, 3), "any"), ((2, 3), "start"), ((2, 3), "start")), (0,))
      for m in ("clip", "wrap", "fill")],  # "fill": affine, 2.5 out of bounds
    # set and add are linear in (x, updates); the 6 indices repeat positions of the 4
    *[Linear(f"scatter_{op}_{m}", "scatter",
             lambda x, i, u, op=op, m=m: gt.scatter(x, [i], u, op, m),
             (((4, 2), "any"), ((6,), "index" if m == "raise" else "start"), ((6, 2), "any")),
             (0, 2))
      for op in ("set", "add") for m in ("raise", "drop", "clip", "wrap")],
    *[Linear(f"scatter_set_{which}", "scatter", lambda x, i, u: gt.scatter(x, [i], u, "set"),
             (((4, 2), "any"), ((6,), "index"), ((6, 2), "any")), lin)
      for which, lin in (("x", (0,)), ("updates", (2,)))],
    Linear("cumulative_sum", "cumulative", lambda x: so.cumulative(x, 1, "sum"),
           (((2, 5), "any"),), (0,)),
    Linear("cumulative_sum_reverse", "cumulative", lambda x: so.cumulative(x, 0, "sum", True),
           (((4, 3), "any"),), (0,)),
    Linear("fma_a", "fma", ew.fma, (V3, V3, V3), (0,)),
    Linear("fma_b", "fma", ew.fma, (V3, V3, V3), (1,)),
    Linear("fma_a_c", "fma", ew.fma, (V3, V3, V3), (0, 2)),
    Linear("fma_scalar_b_c", "fma", ew.fma, (V3, S, S), (1,)),
    Linear("fma_scalar_c", "fma", ew.fma, (V3, V3, S), (0, 2)),
    Linear("dot_general_lhs", "dot_general", lambda a, b: la.dot_general(a, b, ((1,), (0,))),
           (((2, 3), "any"), ((3, 4), "any")), (0,)),
    Linear("dot_general_rhs", "dot_general", lambda a, b: la.dot_general(a, b, ((1,), (0,))),
           (((2, 3), "any"), ((3, 4), "any")), (1,)),
    *[Linear(f"dot_general_batch_mid_{k}", "dot_general",
             lambda a, b: la.dot_general(a, b, ((2,), (0,)), ((1,), (1,))),
             (((2, 3, 4), "any"), ((4, 3, 5), "any")), (k,)) for k in (0, 1)],
    Linear("solve", "solve", la.solve, (((3, 3), "wellcond"), ((3, 2), "any")), (1,)),
    *[Linear(f"triangular_solve_{lo}_{tr}_{ud}", "triangular_solve",
             lambda a, b, lo=lo, tr=tr, ud=ud: dc.triangular_solve(
                 a, b, lower=lo, transpose_a=tr, unit_diagonal=ud),
             (((2, 3, 3), "wellcond"), ((2, 3, 2), "any")), (1,))
      for lo, tr, ud in ((True, False, False), (False, True, False), (True, True, True))],
    Linear("diag_solve", "diag_solve", la.diag_solve, (((3,), "nonzero"), V3), (1,)),
    *[Linear(p, p, getattr(cp, p), (((3,), "any", C128),), (0,))
      for p in ("real", "imag", "conj")],
    Linear("complex", "complex", cp.complex_, (V3, V3), (0, 1)),
    *[Linear(f"fft_{kind}_{n}", "fft", lambda x, kind=kind, fw=fw, n=n: ffts.fft(
        x, kind, fw, n, 0.5), (((2, ffts.in_length(kind, n)), "any", dt),), (0,))
      for kind, fw, n, dt in (("c2c", True, 5, C128), ("c2c", False, 4, C128),
                              ("r2c", True, 6, F64), ("r2c", True, 5, F64),
                              ("c2r", False, 6, C128), ("c2r", False, 5, C128))],
    Linear("mul_complex", "mul", ew.mul, (((3,), "any", C128), ((3,), "any", C128)), (0,)),
    Linear("cond", "cond",
           lambda w, p, x: rune.cond(p, lambda v: v * w, lambda v: -v[::-1], x),
           (V3, ((), "pred"), V3), (2,)),
    Linear("cond_linear_capture", "cond",
           lambda w, p, x: rune.cond(p, lambda: x * w, lambda: x + x),
           (V3, ((), "pred"), V3), (2,)),
    Linear("scan", "scan",
           lambda w, c, xs: rune.scan(lambda a, r: (a * w + r, a - r), c, xs),
           (V3, V3, ((4, 3), "any")), (1, 2)),
    Linear("checkpointed", "checkpointed", lambda c, xs: checkpointed_product(c, xs),
           (S, ((4,), "any")), (0,)),
    Linear("checkpointed_lin", "checkpointed_lin", linearized_checkpointed_product,
           (((4,), "any"), S), (1,)),
    Linear("remat", "remat", lambda w, x: rune.remat(lambda a: _sin_times(w, a))(x),
           (V3, V3), (1,)),
    Linear("name", "name", lambda x: rune.checkpoint_name(x, "n"), (V3,), (0,)),
    Linear("tangent_solve", "tangent_solve", lambda w, x, b: _tangent_solve(w, x, b),
           (((3,), "pos"), V3, V3), (2,)),
]


def _tangent_solve(w, x, b):
    """The user's exact solve with A = ∂r/∂x, r(y) = w y + 0.1 y roll(y): A is not
    symmetric, so the transpose really solves with Aᵀ."""
    from rune_jit._src.control_flow.linear_solve import TangentSolve, trace_solves
    from rune_jit._src.ops.tangent_solve import solve_tangents
    from rune_jit._src.call.arguments import flatten_args
    from rune_jit._src.trace import close_together, type_of_value

    exact = lambda mv, b: rnp.linalg.solve(rune.jacfwd(mv)(b), b)  # noqa: E731
    residual = lambda y: w * y + 0.1 * y * rnp.roll(y, 1)  # noqa: E731
    x_tree = flatten_args(x, "x")[1]
    regions, caps = close_together(
        trace_solves(TangentSolve(exact, exact), residual, x_tree, [type_of_value(x)]))
    return solve_tangents(caps + [x], [b], solves=tuple(regions), missing="")[0]
# A custom_vjp's tangent has a transpose (its bwd) and no forward meaning to compare it
# with: tests/transforms/test_custom.py checks it against autodiff of the same function.
TRANSPOSE_ONLY = {"custom_lin"}


def test_every_transpose_has_a_dot_product_case():
    with_transpose = {n for n, p in Primitive.registry.items() if p.has_rule("transpose")}
    assert with_transpose - TRANSPOSE_ONLY == {c.prim for c in LINEAR}, (
        "add a LINEAR row for each primitive with a transpose rule (and only for those)")


class Equation:
    """The equation of case.prim in case.fn's IR at drawn arguments, seen as a map of
    the operands it is linear in (the others held at their values)."""

    def __init__(self, case: Linear, rng):
        args = case.draw(rng)
        region = rune.make_ir(case.fn)(*args)
        env = dict(zip(region.params, args))
        lin_vars = {region.params[i] for i in case.linear}
        eqn = next(e for e in region.eqns if e.prim.name == case.prim)
        for e in region.eqns[:region.eqns.index(eqn)]:  # what feeds it
            ins, params = e.closed
            env.update(zip(e.outputs, bind(e.prim, *[_read(a, env) for a in ins], **params)))
        ins, self.params = eqn.closed
        self.prim, self.vals = eqn.prim, [_read(a, env) for a in ins]
        self.linear = [isinstance(a, Var) and a in lin_vars for a in ins]
        assert sum(self.linear) == len(case.linear), f"{case.prim} does not read the args"
        # Held operands may enter additively (concatenate, dynamic_update_slice): the
        # linear map is what the linear operands add.
        self.offset = self._affine([np.zeros_like(v) for v in self.lin_vals])

    @property
    def lin_vals(self) -> list:
        return [v for v, lin in zip(self.vals, self.linear) if lin]

    def _with(self, ts, held: Callable) -> list:
        it = iter(ts)
        return [next(it) if lin else held(v) for v, lin in zip(self.vals, self.linear)]

    def _affine(self, ts) -> list:
        outs = self.prim.impl(*self._with(ts, lambda v: v), **self.params)
        return [np.asarray(o) for o in outs]

    def apply(self, ts) -> list:
        return [o - z for o, z in zip(self._affine(ts), self.offset)]

    def jvp(self, ts) -> list:
        zero = lambda v: Zero(type_of(np.asarray(v)))  # noqa: E731
        _, outs = self.prim.rule("jvp")(self.vals, self._with(ts, zero), **self.params)
        return [_dense(o, like) for o, like in zip(outs, self.apply(ts))]

    def transpose(self, cts) -> list:
        undefined = [UndefinedPrimal(type_of(np.asarray(v))) if lin else v
                     for v, lin in zip(self.vals, self.linear)]
        outs = self.prim.rule("transpose")(cts, *undefined, **self.params)
        return [_dense(c, v) for c, v, lin in zip(outs, self.vals, self.linear) if lin]


def _read(atom, env):
    return atom.value if isinstance(atom, Literal) else env[atom]


def _dense(x, like) -> np.ndarray:
    return np.zeros(like.shape, like.dtype) if x is None or isinstance(x, Zero) else np.asarray(x)


def _like(rng, v) -> np.ndarray:
    dtype = np.asarray(v).dtype
    if dtype.kind == "c":
        return np.asarray(rng.standard_normal(np.shape(v)) + 1j * rng.standard_normal(
            np.shape(v)), dtype)
    return np.asarray(rng.standard_normal(np.shape(v)), dtype)


def _tol(arrays) -> float:
    return 1e-5 if any(np.asarray(a).dtype == F32 for a in arrays) else 1e-11


def _vdot(xs, ys) -> float:
    """sum Re(x * y): the pairing transposes are taken under, complex values included
    (JAX's: no conjugate)."""
    return sum(float(np.real(np.sum(np.asarray(x, C128) * np.asarray(y, C128))))
               for x, y in zip(xs, ys))


@pytest.mark.parametrize("case", LINEAR, ids=lambda c: c.id)
def test_the_map_is_linear(case, rng):
    eq = Equation(case, rng)
    t1, t2 = ([_like(rng, v) for v in eq.lin_vals] for _ in range(2))
    a, b = eq.apply(t1), eq.apply(t2)
    tol = _tol(a + t1)
    for got, x, y in zip(eq.apply([2 * u - 3 * v for u, v in zip(t1, t2)]), a, b):
        np.testing.assert_allclose(got, 2 * x - 3 * y, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", LINEAR, ids=lambda c: c.id)
def test_jvp_of_a_linear_map_is_the_map(case, rng):
    eq = Equation(case, rng)
    ts = [_like(rng, v) for v in eq.lin_vals]
    want = eq.apply(ts)
    for got, w in zip(eq.jvp(ts), want):
        np.testing.assert_allclose(got, w, rtol=_tol(want + ts), atol=_tol(want + ts))


@pytest.mark.parametrize("case", LINEAR, ids=lambda c: c.id)
def test_transpose_is_the_adjoint(case, rng):
    """The dot-product test: <transpose(ct), t> = <ct, f(t)>."""
    eq = Equation(case, rng)
    ts = [_like(rng, v) for v in eq.lin_vals]
    outs = eq.apply(ts)
    cts = [_like(rng, o) for o in outs]
    back = eq.transpose(cts)
    assert [type_of(c) for c in back] == [type_of(np.asarray(v)) for v in eq.lin_vals]
    lhs, rhs = _vdot(back, ts), _vdot(cts, outs)
    assert abs(lhs - rhs) <= _tol(outs + ts) * (1 + abs(lhs) + abs(rhs)), (
        f"<transpose(ct), t> = {lhs} but <ct, f(t)> = {rhs}")
