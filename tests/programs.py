"""Random straight-line programs as data, for the property tests.

A `Program` is a list of `Op`s over numbered values (the inputs first, then one
value per op). The same data runs on NumPy itself (the reference) and on
`rune_jit.numpy` inside rune_jit's transformations: every op is written once
as `apply(xp, *operands, **params)` with `xp` the module it runs on.

The op table `FAMILIES` is data: a row names the op, says how to pick operands of
compatible shapes among the values made so far and draw its static params, how
large its result can get, and where it stops being smooth. Extending the
generator (loops that run a sub-program as their step, for instance) means
adding rows.

Values stay bounded so that float64 comparisons and central differences mean
something: inputs lie in [-1, 1], each row bounds |result| from the bounds of
its operands, and an op whose bound would exceed `LIMIT` is not generated.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

Shape = tuple[int, ...]

LIMIT = 1e3
MAX_SIZE = 24
MAX_NDIM = 3
INPUT_SHAPES: list[Shape] = [(), (3,), (2, 3), (1, 3), (2, 1), (3, 2), (2, 2, 3), (3, 1, 2)]
CONSTANTS = [0.5, -1.5, 2.0, -0.25, 3.0]


@dataclass(frozen=True)
class Op:
    name: str
    args: tuple[int, ...]
    params: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        parts = [f"v{a}" for a in self.args] + [f"{k}={show(v)}" for k, v in self.params]
        return f"{self.name}({', '.join(parts)})"


def show(v: Any) -> str:
    """Params as they would be written in an index or a call (slices as a:b:c)."""
    if isinstance(v, slice):
        return ":".join("" if p is None else str(p) for p in (v.start, v.stop, v.step))
    if v is Ellipsis:
        return "..."
    if isinstance(v, tuple):
        inner = ", ".join(show(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return repr(v)


@dataclass(frozen=True)
class Program:
    input_shapes: tuple[Shape, ...]
    ops: tuple[Op, ...]
    shapes: tuple[Shape, ...]  # of every value: inputs, then one per op
    bounds: tuple[float, ...]  # |value| <= bound whenever the inputs lie in [-1, 1]

    @property
    def num_inputs(self) -> int:
        return len(self.input_shapes)

    @functools.cached_property
    def sinks(self) -> tuple[int, ...]:
        """Op results no later op reads: summing them makes every op reach the scalar."""
        used = {a for op in self.ops for a in op.args}
        return tuple(i for i in range(self.num_inputs, len(self.shapes)) if i not in used)

    def run(self, xp: Any, inputs: Any) -> list:
        env = list(inputs)
        for op in self.ops:
            env.append(OPS_BY_NAME[op.name].apply(xp, *[env[a] for a in op.args],
                                                  **dict(op.params)))
        return env

    def values(self, xp: Any) -> Callable:
        """f(*inputs) -> the result of every op, run with `xp`."""
        return lambda *inputs: self.run(xp, inputs)[self.num_inputs:]

    def scalar(self, xp: Any) -> Callable:
        """f(*inputs) -> the sum of every element of the sinks, run with `xp`."""
        def f(*inputs):
            env = self.run(xp, inputs)
            return functools.reduce(lambda a, b: a + b, [xp.sum(env[i]) for i in self.sinks])

        return f

    def kink_distance(self, inputs: Any) -> float:
        """How close NumPy's run at `inputs` comes to a point where an op is not smooth.

        The distance is relative to the op's operand bound. Exact ties (distance 0)
        do not count: they come from operands that are the same function (a value
        broadcast against itself), where every tie rule gives the same derivative
        and both runs compare the same bits.
        """
        env = self.run(np, inputs)
        nearest = math.inf
        for op in self.ops:
            spec = OPS_BY_NAME[op.name]
            if spec.kink is None:
                continue
            gaps = np.abs(np.asarray(spec.kink(*[env[a] for a in op.args], **dict(op.params))))
            scale = max(1.0, *(self.bounds[a] for a in op.args))
            gaps = gaps[gaps > 0]
            if gaps.size:
                nearest = min(nearest, float(gaps.min()) / scale)
        return nearest

    def __repr__(self) -> str:
        lines = ["Program("]
        for i, s in enumerate(self.input_shapes):
            lines.append(f"  v{i} = input{list(s)}")
        for i, op in enumerate(self.ops, self.num_inputs):
            lines.append(f"  v{i} = {op}".ljust(56) + f"# {list(self.shapes[i])}")
        lines.append("  scalar = " + " + ".join(f"sum(v{i})" for i in self.sinks))
        lines.append(")")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):
        # Hypothesis prints falsifying examples with this rather than field by field.
        printer.text(repr(self))


def make_inputs(prog: Program, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.asarray(rng.uniform(-1.0, 1.0, s)) for s in prog.input_shapes]


# ------------------------------------------------------------- operand pickers
#
# A picker is `pick(draw, shapes) -> (operand indices, params) | None`, None when
# no value made so far fits. Params are a dict of static, printable values.


def out_shape(apply: Callable, shapes: list[Shape], params: dict) -> Shape | None:
    """The result shape NumPy gives, or None where NumPy rejects the operands."""
    try:
        return np.shape(apply(np, *[np.zeros(s) for s in shapes], **params))
    except (ValueError, IndexError):
        return None


def no_params(draw, shape) -> dict:
    return {}


def unary(params: Callable = no_params, accepts: Callable = lambda s: True) -> Callable:
    def pick(draw, shapes):
        fits = [i for i, s in enumerate(shapes) if accepts(s)]
        if not fits:
            return None
        i = draw(st.sampled_from(fits))
        return (i,), params(draw, shapes[i])

    return pick


def broadcasts(a: Shape, b: Shape) -> Shape | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def broadcasting(n: int) -> Callable:
    """n operands whose shapes broadcast together (NumPy broadcasting of mixed shapes)."""
    def pick(draw, shapes):
        args = [draw(st.integers(0, len(shapes) - 1))]
        common = shapes[args[0]]
        for _ in range(n - 1):
            fits = [j for j, s in enumerate(shapes) if broadcasts(common, s) is not None]
            args.append(draw(st.sampled_from(fits)))
            common = broadcasts(common, shapes[args[-1]])
        return tuple(args), {}

    return pick


def pair(apply: Callable) -> Callable:
    """Two operands NumPy accepts for `apply` (matmul and dot)."""
    def pick(draw, shapes):
        i = draw(st.integers(0, len(shapes) - 1))
        fits = [j for j, s in enumerate(shapes)
                if out_shape(apply, [shapes[i], s], {}) is not None]
        if not fits:
            return None
        return (i, draw(st.sampled_from(fits))), {}

    return pick


def joining(stacked: bool) -> Callable:
    """2-3 operands for concatenate (equal but for the axis) or stack (equal shapes)."""
    def pick(draw, shapes):
        fits = [i for i, s in enumerate(shapes) if stacked or len(s) >= 1]
        if not fits:
            return None
        i = draw(st.sampled_from(fits))
        ndim = len(shapes[i]) + stacked
        axis = draw(st.integers(-ndim, ndim - 1))
        ax = axis % ndim

        def same(s):
            return s == shapes[i] if stacked else (
                len(s) == len(shapes[i]) and all(
                    a == b for k, (a, b) in enumerate(zip(s, shapes[i])) if k != ax))

        partners = [j for j, s in enumerate(shapes) if same(s)]
        rest = draw(st.lists(st.sampled_from(partners), min_size=1, max_size=2))
        return (i, *rest), {"axis": axis}

    return pick


def two_any(draw, shapes):
    """Operands of any shapes (dynamic indexing reads one and indexes another)."""
    fits = [i for i, s in enumerate(shapes) if len(s) >= 1]
    if not fits:
        return None
    return (draw(st.sampled_from(fits)), draw(st.integers(0, len(shapes) - 1))), {}


# ------------------------------------------------------------- params


def shapes_of_size(size: int) -> list[Shape]:
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    out = [()] if size == 1 else []
    for ndim in range(1, MAX_NDIM + 1):
        out += [s for s in itertools.product(divisors, repeat=ndim) if math.prod(s) == size]
    return out


def reshape_params(draw, shape) -> dict:
    new = list(draw(st.sampled_from(shapes_of_size(math.prod(shape)))))
    if new and draw(st.booleans()):
        new[draw(st.integers(0, len(new) - 1))] = -1
    return {"shape": tuple(new)}


def transpose_params(draw, shape) -> dict:
    if draw(st.booleans()):
        return {"axes": None}
    axes = draw(st.permutations(range(len(shape))))
    return {"axes": tuple(a - len(shape) if draw(st.booleans()) else a for a in axes)}


def broadcast_params(draw, shape) -> dict:
    lead = draw(st.lists(st.sampled_from([1, 2, 3]), max_size=MAX_NDIM - len(shape)))
    grown = [draw(st.sampled_from([1, 2, 3])) if n == 1 else n for n in shape]
    return {"shape": tuple(lead + grown)}


def moveaxis_params(draw, shape) -> dict:
    axis = st.integers(-len(shape), len(shape) - 1)
    return {"source": draw(axis), "destination": draw(axis)}


def expand_params(draw, shape) -> dict:
    return {"axis": draw(st.integers(-len(shape) - 1, len(shape)))}


def squeeze_params(draw, shape) -> dict:
    ones = [k for k, n in enumerate(shape) if n == 1]
    return {"axis": draw(st.one_of(st.none(), st.sampled_from(ones)))}


def axis_params(draw, shape) -> dict:
    ndim = len(shape)
    choices = [st.none(), st.just(())]
    if ndim:
        one = st.integers(-ndim, ndim - 1)
        choices += [one, st.lists(one, max_size=ndim).filter(
            lambda axes: len({a % ndim for a in axes}) == len(axes)).map(tuple)]
    return {"axis": draw(st.one_of(*choices)), "keepdims": draw(st.booleans())}


def index_params(draw, shape) -> dict:
    """A key of ints, nonempty slices (negative steps too), None and Ellipsis."""
    n_real = len(shape) - draw(st.integers(0, len(shape)))
    key: list[Any] = []
    for n in shape[:n_real]:
        if draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
            continue
        step = draw(st.sampled_from([None, 1, 2, -1, -2]))
        bounds = st.one_of(st.none(), st.integers(-n, n))
        s = slice(draw(bounds), draw(bounds), step)
        key.append(s if len(range(*s.indices(n))) else slice(None, None, step))
    if n_real < len(shape) and draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    return {"key": tuple(key)}


def scalar_param(draw, shape) -> dict:
    return {"c": draw(st.sampled_from(CONSTANTS))}


# ------------------------------------------------------------- bounds


def same_bound(bs, shapes, **p) -> float:
    return max(bs)


def sum_bound(bs, shapes, **p) -> float:
    return sum(bs)


def reduced_count(shape: Shape, axis: Any) -> int:
    return math.prod(shape) // max(1, math.prod(np.shape(np.sum(np.zeros(shape), axis=axis))))


# ------------------------------------------------------------- kinks


def top_two_gap(x: np.ndarray, axis: Any = None, **p) -> np.ndarray:
    """Distance from the maximum to the next smaller element, per reduced slot."""
    x = np.asarray(x)
    top = np.max(x, axis=axis, keepdims=True)
    second = np.max(np.where(x < top, x, -np.inf), axis=axis, keepdims=True)
    return top - second


# ------------------------------------------------------------- the table


@dataclass(frozen=True)
class OpSpec:
    name: str
    pick: Callable  # (draw, shapes) -> (operand indices, params) | None
    apply: Callable  # (xp, *operands, **params) -> value
    bound: Callable = same_bound  # (operand bounds, operand shapes, **params) -> bound
    kink: Callable | None = None  # (*NumPy operands, **params) -> distances to a kink


def smooth_unary(name: str, apply: Callable, bound: Callable) -> OpSpec:
    return OpSpec(name, unary(), apply, lambda bs, shapes: bound(bs[0]))


# Families are drawn first, then an op of the family, so that the long lists of
# elementwise ops do not crowd out indexing, joins and products.
FAMILIES: dict[str, list[OpSpec]] = {
    "unary": [
        smooth_unary("sin", lambda xp, a: xp.sin(a), lambda b: min(b, 1.0)),
        smooth_unary("cos", lambda xp, a: xp.cos(a), lambda b: 1.0),
        smooth_unary("tanh", lambda xp, a: xp.tanh(a), lambda b: min(b, 1.0)),
        smooth_unary("exp", lambda xp, a: xp.exp(a), lambda b: math.exp(min(b, 50.0))),
        smooth_unary("log1p_sq", lambda xp, a: xp.log(1 + a * a),
                     lambda b: math.log1p(b * b)),
        smooth_unary("sqrt1p_sq", lambda xp, a: xp.sqrt(1.0 + xp.square(a)),
                     lambda b: math.sqrt(1 + b * b)),
        smooth_unary("square", lambda xp, a: xp.square(a), lambda b: b * b),
        smooth_unary("negative", lambda xp, a: -a, lambda b: b),
        # NumPy's own function on a traced value goes through __array_ufunc__.
        smooth_unary("np.cos", lambda xp, a: np.cos(a), lambda b: 1.0),
        OpSpec("scale", unary(scalar_param), lambda xp, a, c: a * c,
               lambda bs, shapes, c: bs[0] * abs(c)),
        OpSpec("rsub", unary(scalar_param), lambda xp, a, c: c - a,
               lambda bs, shapes, c: bs[0] + abs(c)),
    ],
    "binary": [
        OpSpec("add", broadcasting(2), lambda xp, a, b: xp.add(a, b), sum_bound),
        OpSpec("sub", broadcasting(2), lambda xp, a, b: a - b, sum_bound),
        OpSpec("mul", broadcasting(2), lambda xp, a, b: a * b,
               lambda bs, shapes: bs[0] * bs[1]),
        OpSpec("div_1p_sq", broadcasting(2), lambda xp, a, b: xp.divide(a, 1.0 + b ** 2),
               lambda bs, shapes: bs[0]),
        OpSpec("maximum", broadcasting(2), lambda xp, a, b: xp.maximum(a, b),
               kink=lambda a, b: a - b),
        OpSpec("where_gt", broadcasting(4), lambda xp, a, b, c, d: xp.where(a > b, c, d),
               lambda bs, shapes: max(bs[2:]), kink=lambda a, b, c, d: a - b),
    ],
    "shape": [
        OpSpec("reshape", unary(reshape_params), lambda xp, a, shape: xp.reshape(a, shape)),
        OpSpec("transpose", unary(transpose_params),
               lambda xp, a, axes: xp.transpose(a, axes)),
        OpSpec(".T", unary(), lambda xp, a: a.T),
        OpSpec("moveaxis", unary(moveaxis_params, lambda s: len(s) >= 1),
               lambda xp, a, source, destination: xp.moveaxis(a, source, destination)),
        OpSpec("broadcast_to", unary(broadcast_params),
               lambda xp, a, shape: xp.broadcast_to(a, shape)),
        OpSpec("expand_dims", unary(expand_params, lambda s: len(s) < MAX_NDIM),
               lambda xp, a, axis: xp.expand_dims(a, axis)),
        OpSpec("squeeze", unary(squeeze_params, lambda s: 1 in s),
               lambda xp, a, axis: xp.squeeze(a, axis)),
    ],
    "reduce": [
        OpSpec("sum", unary(axis_params),
               lambda xp, a, axis, keepdims: xp.sum(a, axis=axis, keepdims=keepdims),
               lambda bs, shapes, axis, keepdims: bs[0] * reduced_count(shapes[0], axis)),
        OpSpec("mean", unary(axis_params),
               lambda xp, a, axis, keepdims: xp.mean(a, axis=axis, keepdims=keepdims)),
        OpSpec("max", unary(axis_params),
               lambda xp, a, axis, keepdims: xp.max(a, axis=axis, keepdims=keepdims),
               kink=lambda a, axis, keepdims: top_two_gap(a, axis)),
        # NumPy's own function on a traced value goes through __array_function__.
        OpSpec("np.sum", unary(axis_params),
               lambda xp, a, axis, keepdims: np.sum(a, axis=axis, keepdims=keepdims),
               lambda bs, shapes, axis, keepdims: bs[0] * reduced_count(shapes[0], axis)),
    ],
    "index": [
        OpSpec("index", unary(index_params), lambda xp, a, key: a[key]),
        # A traced integer index: the position of b's maximum, folded into a's first axis.
        OpSpec("take_argmax", two_any,
               lambda xp, a, b: a[xp.argmax(b) % a.shape[0]],
               lambda bs, shapes: bs[0], kink=lambda a, b: top_two_gap(b)),
    ],
    "join": [
        OpSpec("concatenate", joining(stacked=False),
               lambda xp, *xs, axis: xp.concatenate(list(xs), axis=axis)),
        OpSpec("stack", joining(stacked=True),
               lambda xp, *xs, axis: xp.stack(list(xs), axis=axis)),
    ],
    "product": [
        OpSpec("matmul", pair(lambda xp, a, b: a @ b), lambda xp, a, b: xp.matmul(a, b),
               lambda bs, shapes: bs[0] * bs[1] * shapes[0][-1]),
        OpSpec("dot", pair(lambda xp, a, b: xp.dot(a, b)), lambda xp, a, b: xp.dot(a, b),
               lambda bs, shapes: bs[0] * bs[1] * (
                   shapes[0][-1] if shapes[0] and shapes[1] else 1)),
    ],
}
OPS: list[OpSpec] = [spec for family in FAMILIES.values() for spec in family]
OPS_BY_NAME = {spec.name: spec for spec in OPS}


@st.composite
def programs(draw, min_ops: int = 15, max_ops: int = 30, max_inputs: int = 3,
             families: tuple[tuple[OpSpec, ...], ...] = tuple(map(tuple, FAMILIES.values()))
             ) -> Program:
    input_shapes = tuple(draw(st.lists(st.sampled_from(INPUT_SHAPES), min_size=1,
                                       max_size=max_inputs)))
    shapes, bounds, ops = list(input_shapes), [1.0] * len(input_shapes), []
    length = draw(st.integers(min_ops, max_ops))
    while len(ops) < length:
        spec = draw(st.sampled_from(draw(st.sampled_from(families))))
        picked = spec.pick(draw, shapes)
        if picked is None:
            continue
        args, params = picked
        shape = out_shape(spec.apply, [shapes[a] for a in args], params)
        if shape is None or math.prod(shape) > MAX_SIZE or len(shape) > MAX_NDIM:
            continue
        bound = spec.bound([bounds[a] for a in args], [shapes[a] for a in args], **params)
        if bound > LIMIT:
            continue
        ops.append(Op(spec.name, args, tuple(params.items())))
        shapes.append(shape)
        bounds.append(bound)
    return Program(input_shapes, tuple(ops), tuple(shapes), tuple(bounds))
