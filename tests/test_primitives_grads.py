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
from rune_jit.ops import index as ix
from rune_jit.ops import linalg as la
from rune_jit.ops import shape as sh
from rune_jit.primitive import Primitive
from rune_jit.trace import bind1
from primitive_cases import F64, UNARY, draw, prims_in


@dataclass(frozen=True)
class Grad:
    id: str
    fn: Callable
    args: Callable  # rng -> arguments


def _draw(*specs) -> Callable:
    """Arguments from (shape, domain) pairs; float64 unless the domain fixes the dtype."""
    return lambda rng: [draw(rng, shape, F64, domain) for shape, domain in specs]


def _fixed(*arrays) -> Callable:
    return lambda rng: [np.asarray(a, F64) for a in arrays]


ANY, POS, NONZERO = ((3,), "any"), ((3,), "pos"), ((3,), "nonzero")
DOMAIN = {"any": "any", "pos": "pos", "small": "small", "special": "any", "coarse": "any"}
PIECEWISE = {  # names whose derivative is zero inside a piece: checked on a smooth product
    "sign": lambda x: rnp.sign(x) * x * x,
    "isnan": lambda x: rnp.where(rnp.isnan(x), 0.0, x * x),
    "isfinite": lambda x: rnp.where(rnp.isfinite(x), x * x, 0.0),
    "logical_not": lambda x: rnp.where(rnp.logical_not(x > 0), x, 2 * x),
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
    ("scan_capture", lambda w, c, xs: rune.scan(lambda a, r: (rnp.sin(a) * w + r, a), c, xs),
     (ANY, ANY, ((4, 3), "any"))),
    ("iterate", lambda x, n: rune.iterate(
        lambda c: (c[0] + 1, rnp.sin(c[1]) + c[1]), (np.int64(0), x),
        until=lambda c: c[0] >= n, max_steps=6)[1], (ANY, ((), "count"))),
    *[(f"root_{s}", lambda a, s=s: rune.root(lambda x: x * x - a, lambda: rnp.sqrt(a),
                                             linear_solver=s), (POS,))
      for s in ("dense", "diagonal")],
    ("remat", lambda x, y: rune.remat(lambda a: rnp.sin(a) * y)(x), (ANY, ANY)),
]

GRADS = _unary() + [Grad(i, f, a if callable(a) else _draw(*a))
                    for i, f, a in ELEMENTWISE + SHAPES + REDUCTIONS + INDEXING + LINALG + CONTROL]
EXACT_ZERO = {"stop_gradient": "its derivative is zero by definition, not by differences"}


@pytest.mark.parametrize("case", GRADS, ids=lambda c: c.id)
def test_check_grads(case, rng):
    with np.errstate(all="ignore"):  # the unselected side of a where may overflow
        rune.check_grads(case.fn, *case.args(rng), modes=("fwd", "rev"))


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
