"""Every differentiable primitive's jvp and vjp against central differences (check_grads),
in float64, at points inside its domain. Piecewise-constant primitives (sign,
comparisons, floor_divide, argmax, ...) are checked inside a piece, where their
zero derivative is the true one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.numpy.sorting import accumulate
from rune_jit._src.ops import complex_parts as cp
from rune_jit._src.ops import elementwise as ew
from rune_jit._src.ops import gather as gt
from rune_jit._src.ops import index as ix
from rune_jit._src.ops import decomp as dc
from rune_jit._src.ops import linalg as la
from rune_jit._src.ops import shape as sh
from rune_jit._src.ops import sort as so
from rune_jit._src.primitive import Primitive
from rune_jit._src.trace import bind1
from primitive_cases import (F64, UNARY, diagonal_solve, draw, linearized_checkpointed_product,
                             prims_in, root_sqrt)


@dataclass(frozen=True)
class Grad:
    id: str
    fn: Callable
    args: Callable  # rng -> arguments
    modes: tuple = ("fwd", "rev")  # a custom_vjp function has no forward mode


def _draw(*specs) -> Callable:
    """Arguments from (shape, domain) pairs; float64 unless the domain fixes the dtype."""
    return lambda rng: [draw(rng, shape, F64, domain) for shape, domain in specs]


def _fixed(*arrays) -> Callable:
    return lambda rng: [np.asarray(a, F64) for a in arrays]


def _given(*arrays) -> Callable:
    """These arguments, in their own dtypes (indices stay integers)."""
    return lambda rng: [np.asarray(a) for a in arrays]


ANY, POS, NONZERO = ((3,), "any"), ((3,), "pos"), ((3,), "nonzero")
DOMAIN = {"any": "any", "pos": "pos", "small": "small", "special": "any", "coarse": "any",
          "above1": "above1"}
PIECEWISE = {  # names whose derivative is zero inside a piece: checked on a smooth product
    "sign": lambda x: rnp.sign(x) * x * x,
    "isnan": lambda x: rnp.where(rnp.isnan(x), 0.0, x * x),
    "isfinite": lambda x: rnp.where(rnp.isfinite(x), x * x, 0.0),
    "logical_not": lambda x: rnp.where(rnp.logical_not(x > 0), x, 2 * x),
    "invert": lambda x: x * rnp.astype(rnp.invert(rnp.astype(x * 4, np.int64)), F64),
    "bitwise_count": lambda x: x * rnp.bitwise_count(rnp.astype(x * 4, np.int64)),
}


def _unary() -> list[Grad]:
    rows = []
    for name, (_, domain) in UNARY.items():
        fn = PIECEWISE.get(name, getattr(rnp, name))
        dom = "nonzero" if name in ("sign", "abs") else DOMAIN[domain]
        rows.append(Grad(name, fn, _draw(((2, 3), dom))))
    return rows


def _compare(op):
    return lambda x, y: rnp.where(op(x, y), x * y, x + y)


def _bits(op):
    """x * y times an integer function of both: derivatives of the product inside a piece."""
    def f(x, y):
        bits = op(rnp.astype(x * 4, np.int64) & 15, rnp.astype(y * 2, np.int64) & 3)
        return x * y * rnp.astype(bits, F64)

    return f


def _logical(op):
    return lambda x, y: rnp.where(op(x > 0, y > 0), x * y, x - y)


ELEMENTWISE = [
    ("add", rnp.add, (ANY, ANY)),
    ("add_broadcast", rnp.add, (((2, 3), "any"), ANY)),
    ("multiply", rnp.multiply, (ANY, ANY)),
    ("multiply_scalar", rnp.multiply, (ANY, ((), "any"))),
    ("subtract_broadcast", rnp.subtract, (((2, 1), "any"), ANY)),
    ("maximum", rnp.maximum, (ANY, ANY)),
    ("minimum", rnp.minimum, (ANY, ANY)),
    ("power", rnp.power, (POS, ((3,), "exponent"))),
    ("power_scalar_exponent", lambda x: rnp.power(x, 3.0), (ANY,)),
    ("divide", rnp.divide, (ANY, NONZERO)),
    ("arctan2", rnp.arctan2, (NONZERO, NONZERO)),
    ("remainder", rnp.remainder, (ANY, NONZERO)),
    ("floor_divide", lambda x, y: rnp.floor_divide(x, y) * x * y, (ANY, NONZERO)),
    *[(n, _compare(getattr(rnp, n)), (ANY, ANY))
      for n in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")],
    *[(n, _logical(getattr(rnp, n)), (ANY, ANY))
      for n in ("logical_and", "logical_or", "logical_xor")],
    ("where", rnp.where, (((2, 3), "pred"), ((2, 3), "any"), ANY)),
    *[(n, _bits(getattr(rnp, n)), (ANY, ANY))
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")],
    ("fma", ew.fma, (ANY, ANY, ANY)),
    ("fma_scalar_b", ew.fma, (ANY, ((), "any"), ANY)),
    ("erf", ew.erf, (ANY,)),
    ("erfc", ew.erfc, (ANY,)),
    ("hypot", rnp.hypot, (NONZERO, NONZERO)),
    ("copysign", rnp.copysign, (NONZERO, NONZERO)),
    ("fmod", rnp.fmod, (ANY, NONZERO)),
    ("erfinv", ew.erfinv, (((3,), "small"),)),
    ("bitcast_convert", lambda x: x * rnp.astype(  # the exponent bits: a step function
        rnp.right_shift(ew.bitcast_convert(x, np.uint64), 52), F64), (ANY,)),
]


def _iota_times(x):
    return x * sh.iota(x.shape, 1, F64)


def _pad(x):
    return bind1(sh.pad_p, x, shape=(3, 7), starts=(1, 1), strides=(1, 2))


SHAPES = [
    ("astype_f32", lambda x: rnp.astype(rnp.astype(x, np.float32) * 2, F64), (ANY,)),
    ("astype_int", lambda x: rnp.astype(x * 3, np.int64) * x, (ANY,)),
    ("broadcast_to", lambda x: rnp.broadcast_to(x, (2, 3)) * 2.0, (ANY,)),
    ("reshape", lambda x: rnp.reshape(x, (3, 2)), (((2, 3), "any"),)),
    ("transpose", lambda x: rnp.transpose(x, (2, 0, 1)), (((2, 3, 4), "any"),)),
    ("moveaxis", lambda x: rnp.moveaxis(x, 0, -1), (((2, 3, 4), "any"),)),
    ("reverse", lambda x: x[::-1, ::2], (((3, 4), "any"),)),
    ("slice", lambda x: x[1:3, 2], (((4, 3), "any"),)),
    ("index_none", lambda x: x[None, ..., 0], (((2, 3), "any"),)),
    ("pad", _pad, (((2, 3), "any"),)),
    ("concatenate", lambda a, b: rnp.concatenate([a, b], axis=1), (((2, 3), "any"),
                                                                   ((2, 1), "any"))),
    ("stack", lambda a, b: rnp.stack([a, b], axis=-1), (ANY, ANY)),
    ("squeeze_expand", lambda x: rnp.expand_dims(rnp.squeeze(x), 1), (((3, 1), "any"),)),
    ("iota", _iota_times, (((2, 3), "any"),)),
]


def _reductions() -> list:
    rows = []
    for name in ("sum", "prod", "max", "min", "mean"):
        for axis, keep in ((None, False), (1, True), ((0, 2), False)):
            rows.append((f"{name}_axis{axis}_keep{keep}".replace(" ", ""),
                         lambda x, n=name, a=axis, k=keep: getattr(rnp, n)(x, axis=a, keepdims=k),
                         (((2, 3, 4), "any"),)))
    return rows


ZEROS = [[1.5, 0.0, -2.0], [0.5, 0.0, 0.0], [0.5, 3.0, 2.0]]  # one zero, two, none
REDUCTIONS = _reductions() + [
    ("prod_zeros_axis1", lambda x: rnp.prod(x, axis=1), _fixed(ZEROS)),
    ("prod_zeros_all", lambda x: rnp.prod(x), _fixed([2.0, 0.0, -1.5])),
    ("prod_two_zeros_all", lambda x: rnp.prod(x), _fixed([2.0, 0.0, 0.0, 3.0])),
    ("argmax", lambda x: x[rnp.argmax(x)] * x, (ANY,)),
    ("argmin", lambda x: x * rnp.argmin(x, axis=1)[:, None], (((2, 3), "any"),)),
]

INDEXING = [
    ("index_traced", lambda x, i: x[i], (((5,), "any"), ((), "index"))),
    ("index_traced_rows", lambda x, i: x[i] * 2, (((4, 3), "any"), ((), "index"))),
    ("dynamic_slice", lambda x, i, j: ix.dynamic_slice(x, [i, j], (2, 2)),
     (((4, 5), "any"), ((), "start"), ((), "start"))),
    ("dynamic_update_slice", lambda x, u, i: ix.dynamic_update_slice(x, u * u, [i]),
     (((5,), "any"), ((2,), "any"), ((), "start"))),
    ("take", lambda x, i: rnp.take(x, i, axis=0), (((5, 2), "any"), ((6,), "index"))),
    ("take_along_axis", lambda x, i: rnp.take_along_axis(x, i, 1),
     (((2, 4), "any"), ((2, 3), "index"))),
    ("gather_fill", lambda x, i: gt.gather(x, [i], "fill", 1.5) * x[0], (((4,), "any"),
                                                                          ((6,), "start"))),
    ("at_set", lambda x, i, u: rnp.at(x)[i].set(u * u),  # repeated: the last update wins
     (((4,), "any"), ((6,), "index"), ((6,), "any"))),
    ("at_add_drop", lambda x, i, u: rnp.at(x)[i].add(rnp.sin(u), mode="drop"),
     (((4, 2), "any"), ((5,), "start"), ((5, 2), "any"))),
    ("at_multiply", lambda x, i, u: rnp.at(x)[i].multiply(u),
     (((4,), "any"), ((6,), "index"), ((6,), "any"))),
    ("at_multiply_zeros", lambda x, i, u: rnp.at(x)[i].multiply(u),  # one zero at 0, two at 1
     _given([1.5, -2.0, 0.5, 0.0], [0, 0, 1, 1, 1, 3], [0.0, 2.0, 0.0, -1.5, 0.0, 3.0])),
    *[(f"at_{op}", lambda x, i, u, op=op: getattr(rnp.at(x)[i], op)(u),
       (((4,), "distinct"), ((6,), "index"), ((6,), "distinct"))) for op in ("min", "max")],
]

SORTING = [
    ("sort", lambda x: rnp.sort(x, axis=0), (((4, 3), "distinct"),)),
    ("sort_descending", lambda x: rnp.sort(x, descending=True), (((2, 5), "distinct"),)),
    ("argsort", lambda x: x * rnp.argsort(x), (((5,), "distinct"),)),
    ("cumsum", lambda x: rnp.cumsum(x, axis=1), (((2, 4), "any"),)),
    ("cumsum_reverse", lambda x: so.cumulative(x, 0, "sum", True), (((4, 2), "any"),)),
    ("cumprod", lambda x: rnp.cumprod(x, axis=0), (((4, 2), "any"),)),
    ("cumprod_zeros", lambda x: rnp.cumprod(x, axis=1), _fixed(ZEROS)),
    ("cumprod_reverse", lambda x: so.cumulative(x, 1, "prod", True), (((2, 4), "any"),)),
    ("cummax", lambda x: accumulate("maximum", x, 1), (((2, 6), "distinct"),)),
    ("cummin_reverse", lambda x: so.cumulative(x, 0, "min", True), (((6, 2), "distinct"),)),
]

LINALG = [
    ("matmul", rnp.matmul, (((2, 3), "any"), ((3, 4), "any"))),
    ("matmul_batched", rnp.matmul, (((2, 3, 4), "any"), ((2, 4, 2), "any"))),
    ("matmul_broadcast_batch", rnp.matmul, (((2, 3, 4), "any"), ((4, 2), "any"))),
    ("matmul_vector_matrix", rnp.matmul, (((3,), "any"), ((3, 2), "any"))),
    ("dot_vectors", rnp.dot, (ANY, ANY)),
    ("dot_matrix_vector", rnp.dot, (((2, 3), "any"), ANY)),
    ("outer", rnp.outer, (ANY, ((2,), "any"))),
    ("dot_general_batch_mid", lambda a, b: la.dot_general(a, b, ((2,), (0,)), ((1,), (1,))),
     (((2, 3, 4), "any"), ((4, 3, 5), "any"))),
    ("diag_solve", la.diag_solve, (NONZERO, ANY)),
    ("solve", rnp.linalg.solve, (((3, 3), "wellcond"), ANY)),
    ("solve_matrix_rhs", rnp.linalg.solve, (((3, 3), "wellcond"), ((3, 2), "any"))),
    ("solve_batched", rnp.linalg.solve, (((2, 3, 3), "wellcond"), ((2, 3, 2), "any"))),
    # decompositions (ops/decomp.py); more cases in tests/numpy_api/test_linalg.py
    ("cholesky", rnp.linalg.cholesky, (((2, 3, 3), "spd"),)),
    ("triangular_solve", lambda a, b: dc.triangular_solve(a, b, lower=False, transpose_a=True),
     (((3, 3), "wellcond"), ((3, 2), "any"))),
    ("lu_det", rnp.linalg.det, (((2, 3, 3), "wellcond"),)),
    ("eigh", lambda a: [x ** 2 for x in rnp.linalg.eigh(a)],
     _fixed([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.5, 1.0, 5.0]])),
    ("eigvalsh", rnp.linalg.eigvalsh, (((2, 3, 3), "any"),)),
    ("qr", lambda a: list(rnp.linalg.qr(a)), (((4, 3), "any"),)),
    ("svd", lambda a: [x ** 2 for x in rnp.linalg.svd(a, full_matrices=False)],
     _fixed([[3.0, 1.0], [1.0, 2.0], [0.5, -1.0]])),
    ("eig", lambda a: list(rnp.linalg.eig(a)),
     _fixed([[1.0, -2.0, 0.0], [1.0, 1.5, 0.5], [0.3, 0.0, 3.0]])),  # components apart
]


def _cond(p, x, y):
    return rune.cond(p, lambda a, b: rnp.sin(a) * b, lambda a, b: a / (1 + b * b), x, y)


def _cond_capture(p, x, y):
    return rune.cond(p, lambda: x * y, lambda: rnp.exp(x) - y)


def _cond_on_value(x):
    return rune.cond(rnp.sum(x) > 0, lambda a: a * a, lambda a: -a, x)


CONTROL = [
    *[(f"cond_{b}", lambda x, y, b=b: _cond(np.bool_(b), x, y), (ANY, ANY)) for b in (1, 0)],
    *[(f"cond_capture_{b}", lambda x, y, b=b: _cond_capture(np.bool_(b), x, y), (ANY, ANY))
      for b in (1, 0)],
    ("cond_on_value", _cond_on_value, (ANY,)),
    ("scan", lambda c, xs: rune.scan(lambda a, r: (a * r, a * r), c, xs),
     (ANY, ((4, 3), "any"))),
    ("scan_checkpointed", lambda c, xs: rune.scan(
        lambda a, r: (rnp.sin(a) * r, a * r), c, xs, checkpoints=2), (ANY, ((4, 3), "any"))),
    ("scan_checkpointed_linearized", lambda xs, t: linearized_checkpointed_product(xs, t),
     (((4,), "any"), ((), "any"))),
    ("scan_capture", lambda w, c, xs: rune.scan(lambda a, r: (rnp.sin(a) * w + r, a), c, xs),
     (ANY, ANY, ((4, 3), "any"))),
    ("iterate", lambda x, n: rune.iterate(
        lambda c: (c[0] + 1, rnp.sin(c[1]) + c[1]), (np.int64(0), x),
        until=lambda c: c[0] >= n, max_steps=6)[1], (ANY, ((), "count"))),
    *[(f"root_{s}", lambda a, s=s: root_sqrt(a, s), (POS,)) for s in ("dense", "diagonal")],
    ("root_linear_solve", lambda a: root_sqrt(a, linear_solve=diagonal_solve), (POS,)),
    ("root_linear_solve_jvp", lambda a: rune.jvp(  # second derivatives: tangent_solve's jvp
        lambda a: root_sqrt(a, linear_solve=diagonal_solve), (a,), (a,))[1], (POS,)),
    ("remat", lambda x, y: rune.remat(lambda a: rnp.sin(a) * y)(x), (ANY, ANY)),
    ("checkpoint_name", lambda x, y: rune.checkpoint_name(rnp.sin(x) * y, "h") * x, (ANY, ANY)),
    ("debug_callback", lambda x, y: (rune.debug.callback(lambda a: None, x), rnp.sin(x) * y)[1],
     (ANY, ANY)),
    ("check", lambda x, y: (rune.check(rnp.all(rnp.isfinite(x)), "x = {}", x),
                           rnp.sin(x) * y)[1], (ANY, ANY)),
    ("custom_jvp", lambda x: _log1pexp(x) * x, (((3,), "any"),)),
    ("custom_jvp_in_scan", lambda c, xs: rune.scan(lambda a, r: (_log1pexp(a * r), a), c, xs),
     (ANY, ((3, 3), "small"))),
]


@rune.custom_jvp
def _log1pexp(x):
    return rnp.log1p(rnp.exp(x))


@_log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):  # the derivative, by another formula than autodiff's
    (x,), (t,) = primals, tangents
    return _log1pexp(x), t / (1.0 + rnp.exp(-x))


@rune.custom_vjp
def _sin_times(x, y):
    return rnp.sin(x) * y


_sin_times.defvjp(lambda x, y: (rnp.sin(x) * y, (rnp.cos(x), rnp.sin(x), y)),
                  lambda res, ct: (res[0] * res[2] * ct, res[1] * ct))

# the complex parts (more in tests/primitives/test_complex_grads.py): real functions of a
# complex z and complex functions of real parts, along real and imaginary directions
Z3 = np.array([0.5 - 1.2j, 2.0 + 0.3j, -0.7 + 0.9j])
COMPLEX_PARTS = [
    Grad("real_imag", lambda z: cp.real(z) * cp.imag(z) ** 2, _given(Z3)),
    Grad("conj", lambda z: cp.real(cp.conj(z) * z * (1 + 2j)) + cp.imag(cp.conj(z)),
         _given(Z3)),
    Grad("complex", lambda x, y: cp.complex_(x, y) * cp.complex_(y, x), _draw(ANY, ANY)),
]

# the FFT (more in tests/numpy_api/test_fft.py): each kind, complex and real inputs
FFT = [
    Grad("fft", lambda z: rnp.fft.fft(z * z, n=5, norm="ortho"), _given(Z3)),
    Grad("rfft_irfft", lambda x: rnp.fft.irfft(rnp.fft.rfft(x * x) * (1 + 2j), n=5),
         _draw(ANY)),
]

REVERSE_ONLY = [  # forward mode of a custom_vjp function is an error (tests/transforms/test_custom.py)
    Grad("custom_vjp", lambda x, y: _sin_times(x, y) * x, _draw(ANY, ANY), ("rev",)),
]

GRADS = _unary() + [Grad(i, f, a if callable(a) else _draw(*a)) for i, f, a in
                    ELEMENTWISE + SHAPES + REDUCTIONS + INDEXING + SORTING + LINALG + CONTROL
                    ] + COMPLEX_PARTS + FFT + REVERSE_ONLY
EXACT_ZERO = {"stop_gradient": "its derivative is zero by definition, not by differences"}


@pytest.mark.parametrize("case", GRADS, ids=lambda c: c.id)
def test_check_grads(case, rng):
    with np.errstate(all="ignore"):  # the unselected side of a where may overflow
        rune.check_grads(case.fn, *case.args(rng), modes=case.modes)


def test_every_differentiable_primitive_is_checked(rng):
    checked = set().union(*(prims_in(rune.make_ir(c.fn)(*c.args(rng))) for c in GRADS))
    with_jvp = {n for n, p in Primitive.registry.items() if p.has_rule("jvp")}
    missing = with_jvp - checked - set(EXACT_ZERO)
    assert not missing, f"no check_grads case stages {sorted(missing)}"


def test_stop_gradient_has_zero_derivative():
    x = np.array([1.0, -2.0, 3.0])
    g = rune.grad(lambda x: rnp.sum(rune.stop_gradient(x) * x))(x)
    np.testing.assert_array_equal(g, x)
    _, t = rune.jvp(rune.stop_gradient, (x,), (np.ones(3),))
    np.testing.assert_array_equal(t, np.zeros(3))


def test_check_grads_catches_a_wrong_derivative():
    """The table above would pass vacuously if check_grads could not fail."""
    with pytest.raises(rune.GradCheckError):
        rune.check_grads(lambda x: rune.stop_gradient(x) * x, np.array([1.0, 2.0]))
