"""More of JAX's transformations: linearize, linear_transpose, eval_shape, and
print_saved_residuals (what reverse mode keeps, and which line made it)."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from . import tree
from .api import finish_tree, trace_fn
from .call.arguments import as_value, flatten_args, is_python_scalar, leaf_type
from .interpret import eval_region
from .ir import Type, Var
from .passes.jvp import jvp_region
from .passes.partial_eval import partial_eval_region
from .passes.transpose import transpose_region
from .tracebacks import api_boundary


class ShapeDtypeStruct:
    """An array's shape and dtype, without its data (what eval_shape returns, and what it
    takes in place of arrays). A pytree leaf."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Any, dtype: Any):
        self.shape, self.dtype = tuple(int(n) for n in shape), np.dtype(dtype)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype)
                == (other.shape, other.dtype))

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def _stand_in(x: Any) -> Any:
    """A zero array standing for a ShapeDtypeStruct (eval_shape never computes)."""
    if isinstance(x, ShapeDtypeStruct):
        return np.zeros(x.shape, x.dtype)
    return x


@api_boundary
def eval_shape(f: Callable, *args: Any) -> Any:
    """The shapes and dtypes of `f(*args)`, as ShapeDtypeStructs in its output's
    structure: `f` is traced, never run or compiled. Arguments may be arrays or
    ShapeDtypeStructs.

    >>> import numpy as np, rune_jit as rune
    >>> rune.eval_shape(lambda x: x.sum(axis=0), rune.ShapeDtypeStruct((3, 4), np.float32))
    ShapeDtypeStruct(shape=(4,), dtype=float32)
    """
    args = tree.tree_map(_stand_in, args)
    leaves, in_tree, _ = flatten_args(args, "args")
    tr = trace_fn(lambda *a: f(*a), leaves, in_tree)
    return tree.unflatten(tr.out_tree, [ShapeDtypeStruct(t.shape, t.dtype)
                                        for t in tr.region.out_types])


@api_boundary
def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """(f(*primals), f_jvp) where `f_jvp(*tangents)` is the jvp of f at primals: the
    linear part, computed once from what the primal evaluation saved.

    >>> import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    >>> y, f_jvp = rune.linearize(rnp.sin, np.float64(0.0))
    >>> float(y), float(f_jvp(np.float64(2.0)))
    (0.0, 2.0)
    """
    leaves, in_tree, _ = flatten_args(primals, "primals")
    tr = trace_fn(f, leaves, in_tree)
    tr.check(leaves)
    k = len(tr.captures)
    diff = [False] * k + [leaf_type(x)[0].dtype.kind in "fc" for x in leaves]
    jreg, out_nz = jvp_region(tr.region, diff, instantiate_out=True)
    n_p, n_t, n_out = len(tr.region.params), sum(diff), len(tr.region.outputs)
    split = partial_eval_region(jreg, [False] * n_p + [True] * n_t,
                                [False] * n_out + [True] * n_out)
    outs_res = eval_region(split.known, tr.captures + [as_value(x) for x in leaves])
    outs, res = outs_res[:n_out], outs_res[n_out:]

    @api_boundary
    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree, paths = flatten_args(tangents, "tangents")
        if t_tree != in_tree:
            raise TypeError(f"linearize: tangents have structure {t_tree}, the primals "
                            f"{in_tree}")
        ts = [_tangent(t, x, path) for t, x, path, d in zip(t_leaves, leaves, paths, diff[k:])
              if d]
        return finish_tree(tree.unflatten(tr.out_tree, eval_region(split.unknown, res + ts)))

    return finish_tree(tree.unflatten(tr.out_tree, outs)), f_jvp


def _tangent(t: Any, primal: Any, path: str) -> Any:
    """`t` as the tangent of `primal`: the same shape and dtype (a Python number takes the
    primal's dtype), else a TypeError naming both."""
    tt, xt = leaf_type(t)[0], leaf_type(primal)[0]
    if is_python_scalar(t) and tt.shape == xt.shape:
        return np.asarray(t, xt.dtype)
    if tt != xt:
        raise TypeError(f"linearize: {path} has type {tt}, but the primal there has type "
                        f"{xt}: a tangent has its primal's shape and dtype")
    return as_value(t)


@api_boundary
def linear_transpose(f: Callable, *primals: Any) -> Callable:
    """The transpose of the linear function `f`, at arguments shaped like `primals`:
    `f_t(ct)` returns a tuple of one cotangent per argument.

    >>> import numpy as np, rune_jit as rune
    >>> f_t = rune.linear_transpose(lambda x: 3.0 * x, np.float64(1.0))
    >>> float(f_t(np.float64(2.0))[0])
    6.0
    """
    leaves, in_tree, _ = flatten_args(primals, "primals")
    tr = trace_fn(f, leaves, in_tree)
    k = len(tr.captures)
    transposed, _ = transpose_region(tr.region, [False] * k + [True] * len(leaves))
    out_types = tr.region.out_types

    @api_boundary
    def f_transpose(ct: Any) -> tuple:
        cts, ct_tree, paths = flatten_args(ct, "cotangent")
        if ct_tree != tr.out_tree:
            raise TypeError(f"linear_transpose: the cotangent has structure {ct_tree}, the "
                            f"output {tr.out_tree}")
        for c, t, p in zip(cts, out_types, paths):
            if leaf_type(c)[0].shape != t.shape:
                raise TypeError(f"linear_transpose: {p} is {leaf_type(c)[0]}, the output {t}")
        grads = eval_region(transposed, tr.captures + [as_value(c) for c in cts])
        return finish_tree(tree.unflatten(in_tree, grads))

    return f_transpose


class Residual(NamedTuple):
    type: Type
    made_by: str  # the primitive, or "an argument"
    source: Any  # source_info.SourceInfo of the equation that made it, if known


@api_boundary
def saved_residuals(f: Callable, *args: Any) -> list[Residual]:
    """What reverse mode of `f` at `args` keeps between its forward and backward passes:
    each residual's type, what made it and the user's line.

    >>> [str(r.type) for r in rune.saved_residuals(lambda x: rnp.sum(rnp.exp(x)), np.ones(2))]
    ['float64[2]']
    """
    from .api import linearized

    leaves, in_tree, _ = flatten_args(args, "args")
    tr = trace_fn(f, leaves, in_tree)
    lin = linearized(tr.region, len(tr.captures))
    known = lin.known
    made = {v: e for e in known.eqns for v in e.outputs}
    out = []
    for r in known.outputs[len(known.outputs) - lin.num_res:]:
        eqn = made.get(r) if isinstance(r, Var) else None
        out.append(Residual(r.type, eqn.prim.name if eqn else "an argument",
                            eqn.source if eqn else None))
    return out


def print_saved_residuals(f: Callable, *args: Any) -> None:
    """Print what reverse mode of `f` keeps (see saved_residuals), one residual a line.

    >>> import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    >>> rune.print_saved_residuals(lambda x: rnp.sum(rnp.sin(x) * x), np.ones(3))
    float64[3] from cos at <doctest rune_jit._src.transforms.print_saved_residuals[1]>:1 (<lambda>)
    float64[3] from an argument
    float64[3] from sin at <doctest rune_jit._src.transforms.print_saved_residuals[1]>:1 (<lambda>)
    """
    for r in saved_residuals(f, *args):
        where = f" at {r.source}" if r.source is not None else ""
        print(f"{r.type} from {r.made_by}{where}")
