"""The transformations users call: grad, vjp, jvp, vmap, jacobians, make_ir.

Each one traces the function into a closed region (captured outer values
become leading inputs, never differentiated or mapped), transforms the
region, and evaluates the result: with NumPy when called on arrays, staged
into the enclosing trace when called on traced values.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from . import tree
from .call import code_digest
from .ad_util import Zero
from .dtypes import is_inexact
from .ops.tangents import instantiate, zeros
from .interpret import eval_region
from .ir import Region, Type
from .passes.jvp import jvp_eval, jvp_region
from .passes.partial_eval import partial_eval_region
from .passes.simplify import dce, simplify
from .passes.transpose import transpose_region
from .ops.shape import materialize
from .passes.vmap import batch_eval
from .call.arguments import (Transformed, as_argnums, check_leaf, checked_argnums,
                             flatten_args, leaf_type, transformation)
from .call.tracing import trace_fn, with_args
from .values import as_value, is_python_scalar
from .trace import current, type_of_value
from .tracebacks import api_boundary

# a transformed function's digest (saved programs): the transformation and what it got
code_digest.register_class(Transformed, lambda d, t: (
    d.put("transformation", t.transformation[0].__name__),
    d.walk((t.transformation[1], t.transformation[2], tuple(sorted(t.transformation[3].items()))))))


# ------------------------------------------------------------- arguments and tracing


def finish(x: Any, inputs: Sequence[Any] = ()) -> Any:
    """Results are fresh, writable NumPy arrays: never an input, nor a view of one, nor a
    read-only broadcast (the interpreter's reshapes and transposes make views)."""
    if isinstance(x, np.ndarray) and (not x.flags.writeable or not x.flags.owndata
                                      or any(x is i for i in inputs)):
        return x.copy()
    return x


def finish_tree(t: Any, inputs: Sequence[Any] = ()) -> Any:
    return tree.tree_map(lambda x: finish(x, inputs), t)


# ------------------------------------------------------------- jvp


@api_boundary
def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """(f(*primals), the derivative of f at primals along tangents).

    >>> rune.jvp(lambda x: x * x, (3.0,), (1.0,))
    (array(9.), array(6.))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists")
    leaves, in_tree, paths = flatten_args(tuple(primals), "primals")
    t_leaves, t_tree, t_paths = flatten_args(tuple(tangents), "tangents")
    if t_tree != in_tree:
        raise TypeError(f"jvp: tangents have structure {t_tree} but primals have {in_tree}")
    tr = trace_fn(f, leaves, in_tree)
    tr.check(leaves)
    ts = [Zero(c.type) for c in tr.captures]
    for x, t, path in zip(leaves, t_leaves, t_paths):
        ts.append(_tangent_for(x, t, path))
    outs, touts = jvp_eval(tr.region, tr.captures + [as_value(x) for x in leaves], ts)
    given = leaves + t_leaves
    return (finish_tree(tree.unflatten(tr.out_tree, outs), given),
            finish_tree(tree.unflatten(tr.out_tree, [instantiate(t) for t in touts]), given))


def _tangent_for(x: Any, t: Any, path: str) -> Any:
    xt, _ = leaf_type(x)
    if not is_inexact(xt.dtype):
        return Zero(xt)
    tt = type_of_value(as_value(t)) if is_python_scalar(t) else type_of_value(t)
    if tt.shape != xt.shape:
        raise ValueError(f"jvp: {path} has shape {tt.shape} but its primal has {xt.shape}")
    if is_python_scalar(t):
        return np.asarray(t, xt.dtype)
    if tt.dtype != xt.dtype:
        raise TypeError(f"jvp: {path} has dtype {tt.dtype} but its primal has {xt.dtype}")
    return t


# ------------------------------------------------------------- reverse mode


class Linearized(NamedTuple):
    known: Region  # (captures, primals) -> (outputs, residuals)
    transposed: Region  # (residuals, cts of nonzero outputs) -> cts of nonzero inputs
    out_nonzero: list[bool]
    in_nonzero: list[bool]  # per primal leaf
    num_res: int


def linearized(region: Region, num_caps: int) -> Linearized:
    """jvp, then partial evaluation with tangents unknown, then transposition."""
    diff = [False] * num_caps + [is_inexact(p.type.dtype) for p in region.params[num_caps:]]
    jreg, out_nz = jvp_region(region, diff)
    n_p, n_t, n_out = len(region.params), sum(diff), len(region.outputs)
    split = partial_eval_region(jreg, [False] * n_p + [True] * n_t,
                                [False] * n_out + [True] * sum(out_nz))
    assert not any(split.out_unknowns[:n_out]), "a primal output came out unknown"
    transposed, t_nz = transpose_region(split.unknown, [False] * split.num_res + [True] * n_t,
                                        instantiate_out=False)
    it = iter(t_nz)
    in_nz = [next(it) if d else False for d in diff[num_caps:]]
    # called eagerly, the two regions run as they are: simplify them (CSE, dead code);
    # inside a trace (jit) they are inlined, and the compiler simplifies the whole
    tidy = simplify if current() is None else dce
    return Linearized(tidy(split.known), tidy(transposed), out_nz, in_nz, split.num_res)


@api_boundary
def vjp(f: Callable, *primals: Any, has_aux: bool = False):
    """(f(*primals), pullback) or, with has_aux, (out, pullback, aux).

    >>> out, pullback = rune.vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
    >>> pullback(np.array([1.0, 10.0]))
    (array([ 2., 20.]),)
    """
    leaves, in_tree, _ = flatten_args(primals, "primals")
    tr = trace_fn(_pair_with_aux(f, has_aux), leaves, in_tree, has_pair=True)
    tr.check(leaves)
    main_tree, aux_tree = tr.out_tree.children()
    n_main = main_tree.num_leaves
    lin = linearized(tr.region, len(tr.captures))
    n_out = len(tr.region.outputs)
    outs_res = eval_region(lin.known, tr.captures + [as_value(x) for x in leaves])
    outs, res = outs_res[:n_out], outs_res[n_out:]
    out_types = tr.region.out_types
    in_types = [leaf_type(x)[0] for x in leaves]

    @api_boundary
    def pullback(ct: Any) -> tuple:
        ct_leaves = _cotangents(ct, main_tree, out_types[:n_main])
        ct_leaves += [zeros(t) for t in out_types[n_main:]]  # aux is not differentiated
        cts = iter(eval_region(lin.transposed, list(res) + [
            c for c, nz in zip(ct_leaves, lin.out_nonzero) if nz]))
        grads = [next(cts) if nz else zeros(t) for nz, t in zip(lin.in_nonzero, in_types)]
        return finish_tree(tree.unflatten(in_tree, grads))

    out = finish_tree(tree.unflatten(main_tree, outs[:n_main]), leaves)
    if has_aux:
        return out, pullback, finish_tree(tree.unflatten(aux_tree, outs[n_main:]), leaves)
    return out, pullback


def _pair_with_aux(f: Callable, has_aux: bool) -> Callable:
    """f as a function returning (output, aux); aux is None without has_aux."""
    def fn(*args):
        result = f(*args)
        if not has_aux:
            return result, None
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError("has_aux=True: the function must return a pair (output, aux)")
        return result

    return fn


def _cotangents(ct: Any, out_tree: tree.TreeDef, out_types: list[Type]) -> list:
    flat, ct_tree = tree.flatten(ct)
    if ct_tree != out_tree:
        raise TypeError(f"pullback: cotangent has structure {ct_tree}, output has {out_tree}")
    return [_ct_leaf(x, t, p) for p, x, t in zip(tree.leaf_paths(ct_tree), flat, out_types)]


def _ct_leaf(x: Any, t: Type, path: str) -> Any:
    x = check_leaf(x, f"cotangent{path}")
    if is_python_scalar(x):
        x = np.asarray(x, t.dtype)
    xt = type_of_value(x)
    if xt.shape != t.shape or (is_inexact(t.dtype) and xt.dtype != t.dtype):
        raise TypeError(f"pullback: cotangent{path} is {xt} but the output is {t}")
    return x


def _diff_args(args: tuple, nums: tuple[int, ...], who: str, holomorphic: bool = False,
               kinds: str = "fc") -> list:
    """The arguments differentiated, checked as JAX checks them: of `kinds` (complex
    ones only with holomorphic=True)."""
    for i in nums:
        flat, treedef = tree.flatten(args[i])
        for path, x in zip(tree.leaf_paths(treedef), flat):
            dt = leaf_type(check_leaf(x, f"argument {i}{path}"))[0].dtype
            if holomorphic and dt.kind != "c":
                raise TypeError(f"{who} with holomorphic=True requires complex inputs, but "
                                f"argument {i}{path} has dtype {dt}")
            if not holomorphic and dt.kind not in kinds:
                wanted = "float or complex" if "c" in kinds else "float"
                hint = ("; for holomorphic differentiation pass holomorphic=True"
                        if dt.kind == "c" else "")
                raise TypeError(f"{who} requires {wanted} inputs, but argument {i}{path} "
                                f"has dtype {dt}{hint}; differentiate with respect to "
                                f"{wanted} arguments only (use argnums to choose them)")
    return [args[i] for i in nums]


def _check_output(ot: Type, holomorphic: bool, who: str) -> None:
    """JAX's rule for the outputs of grad and jacrev: real, or complex with holomorphic."""
    if holomorphic and ot.dtype.kind != "c":
        raise TypeError(f"{who} with holomorphic=True requires complex outputs, got dtype "
                        f"{ot.dtype}")
    if not holomorphic and ot.dtype.kind == "c":
        raise TypeError(f"{who} requires real-valued outputs, got dtype {ot.dtype}; for "
                        "holomorphic differentiation pass holomorphic=True, and for a "
                        "function of complex outputs that is not holomorphic use vjp")


@transformation
def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False):
    """(f(*args), the gradient of f's scalar float output with respect to args[argnums]).
    Of a complex argument z = x + iy, the gradient of a real f is df/dx - i df/dy (JAX's
    convention); with holomorphic=True, f is complex and holomorphic and this is f'(z).

    >>> rune.value_and_grad(lambda x: x ** 2)(3.0)
    (array(9.), array(6.))
    >>> rune.value_and_grad(lambda z: z ** 2, holomorphic=True)(1j)
    (array(-1.+0.j), array(0.+2.j))
    """

    def vg(*args, **kwargs):
        nums = checked_argnums(argnums, len(args), "grad")
        diff = _diff_args(args, nums, "grad", holomorphic)
        result = vjp(with_args(f, args, nums, kwargs), *diff, has_aux=has_aux)
        out, pullback = result[0], result[1]
        ot = leaf_type(out)[0] if not isinstance(out, (tuple, list, dict)) else None
        if ot is None or ot.shape != () or not is_inexact(ot.dtype):
            shown = f"shape {ot.shape} and dtype {ot.dtype}" if ot else type(out).__name__
            raise TypeError(f"grad requires a scalar float output, got {shown}; "
                            "use vjp or jacrev for other outputs")
        _check_output(ot, holomorphic, "grad")
        g = pullback(np.ones((), ot.dtype))
        g = g[0] if isinstance(argnums, int) else g
        return ((out, result[2]), g) if has_aux else (out, g)

    vg.argnums = argnums  # what an eager call traces (arguments.Transformed)
    return vg


@transformation
def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False):
    """The gradient of f's scalar float output with respect to args[argnums].

    >>> rune.grad(lambda x: rnp.sum(x ** 3))(np.array([1.0, 2.0]))
    array([ 3., 12.])
    """
    # value_and_grad's own function, not a transformed function: grad's is the one
    # called by the user (and cached, eagerly), and making it is the cost of grad(f)
    vg = value_and_grad.__wrapped__(f, argnums, has_aux, holomorphic)

    def g(*args, **kwargs):
        (value, grads) = vg(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    g.argnums = argnums  # what an eager call traces (arguments.Transformed)
    return g


# ------------------------------------------------------------- vmap


@transformation
def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None) -> Callable:
    """Map f over an axis of its inputs, as JAX's vmap does: `in_axes` (an int, None, or
    a pytree prefix of the arguments) says which axis of each argument is mapped,
    `out_axes` where the mapped axis goes in each output; `axis_size` gives the number of
    lanes when no argument is mapped (and must agree with them when some are).

    >>> import numpy as np, rune_jit as rune
    >>> rune.vmap(lambda x, y: x * y, in_axes=(0, None))(np.arange(3.0), 2.0).tolist()
    [0.0, 2.0, 4.0]
    """

    def vf(*args):
        leaves, in_tree, paths = flatten_args(args, "args")
        prefix = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        if isinstance(prefix, tuple) and len(prefix) != len(args):
            raise ValueError(f"vmap: in_axes has {len(prefix)} entries for {len(args)} "
                             "positional arguments")
        axes = tree.broadcast_prefix(prefix, in_tree, "vmap in_axes")
        axes = [_check_axis(a, x, p) for a, x, p in zip(axes, leaves, paths)]
        size = _axis_size(leaves, axes, paths, axis_size)
        moved = [_moveaxis(as_value(x), a, 0) if a is not None else x
                 for x, a in zip(leaves, axes)]
        types = [_unmapped_type(x, a) for x, a in zip(leaves, axes)]
        tr = trace_fn(f, leaves, in_tree, types)
        tr.check(leaves)
        dims = [None] * len(tr.captures) + [0 if a is not None else None for a in axes]
        outs, odims = batch_eval(tr.region, size, tr.captures + [as_value(m) for m in moved],
                                 dims)
        return finish_tree(tree.unflatten(tr.out_tree, _place_outputs(
            outs, odims, out_axes, tr.out_tree, size)), leaves)

    return vf


def _check_axis(axis: Any, x: Any, path: str) -> int | None:
    if axis is None:
        return None
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"vmap: in_axes for {path} must be an int or None, got {axis!r}")
    ndim = leaf_type(x)[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap: in_axes {axis} is out of range for {path} of "
                         f"{ndim} dimensions (shape {leaf_type(x)[0].shape})")
    return axis % ndim


def _axis_size(leaves: list, axes: list, paths: list[str], given: int | None) -> int:
    sizes = {p: leaf_type(x)[0].shape[a] for x, a, p in zip(leaves, axes, paths)
             if a is not None}
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given < 1:
            raise ValueError(f"vmap: axis_size must be a positive int, got {given!r}")
        sizes["axis_size"] = int(given)
    if not sizes:
        raise ValueError("vmap: no argument is mapped (every in_axes is None); give "
                         "axis_size= for a map with no mapped input")
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{p} has size {n}" for p, n in sizes.items())
        raise ValueError(f"vmap: mapped axes have different sizes: {shown}")
    return next(iter(sizes.values()))


def _unmapped_type(x: Any, axis: int | None) -> Type:
    t = leaf_type(x)[0]
    if axis is None:
        return t
    return t.with_shape(t.shape[:axis] + t.shape[axis + 1:])


def _moveaxis(x: Any, src: int, dst: int) -> Any:
    from .ops.shape import moveaxis

    return moveaxis(x, src, dst)


def _place_outputs(outs, odims, out_axes, out_tree, size) -> list:
    placed = []
    oaxes = tree.broadcast_prefix(out_axes, out_tree, "vmap out_axes")
    for path, o, d, oa in zip(tree.leaf_paths(out_tree), outs, odims, oaxes):
        if oa is None:
            if d is not None:
                raise ValueError(f"vmap: output{path} is mapped but its out_axes is None")
            placed.append(o)
            continue
        o = materialize(o, d, size)
        nd = type_of_value(o).ndim
        if not -nd <= oa < nd:
            raise ValueError(f"vmap: out_axes {oa} is out of range for output{path} "
                             f"of {nd} dimensions")
        placed.append(_moveaxis(o, 0, oa % nd))
    return placed


# ------------------------------------------------------------- jacobians


def _split_flat(vec: Any, types: list[Type]) -> list:
    """A flat vector cut into pieces shaped and typed like `types`."""
    from .numpy import astype, reshape

    out, offset = [], 0
    for t in types:
        out.append(astype(reshape(vec[offset:offset + t.size], t.shape), t.dtype))
        offset += t.size
    return out


def _join_flat(leaves: list) -> Any:
    from .numpy import concatenate, reshape

    return concatenate([reshape(x, (-1,)) for x in leaves])


def _join_rows(parts: list[tuple[Any, int]], n: int) -> Any:
    from .numpy import concatenate, reshape

    return concatenate([reshape(c, (rows, n)) for c, rows in parts], axis=0)


def _blocks(jac: Any, o_types: list[Type], o_tree, in_types: list[Type], in_tree,
            argnums) -> Any:
    """Cut the [outputs, inputs] matrix of flattened leaves into out.shape + in.shape blocks."""
    from .numpy import astype, reshape

    per_out, row = [], 0
    for ot in o_types:
        col, blocks = 0, []
        for t in in_types:
            piece = jac[row:row + ot.size, col:col + t.size]
            # a real output of complex inputs has complex derivatives (jacrev's)
            dtype = np.result_type(ot.dtype, t.dtype) if t.dtype.kind == "c" else ot.dtype
            blocks.append(finish(astype(reshape(piece, ot.shape + t.shape), dtype)))
            col += t.size
        args_tree = tree.unflatten(in_tree, blocks)
        per_out.append(args_tree[0] if isinstance(argnums, int) else args_tree)
        row += ot.size
    return tree.unflatten(o_tree, per_out)


def _jacobian_setup(f, args, argnums, who, holomorphic=False, kinds="fc"):
    nums = checked_argnums(argnums, len(args), who)
    diff = tuple(_diff_args(args, nums, who, holomorphic, kinds))
    leaves, in_tree, _ = flatten_args(diff, "args")
    return diff, in_tree, [leaf_type(x)[0] for x in leaves], with_args(f, args, nums, {})


@transformation
def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, holomorphic: bool = False
           ) -> Callable:
    """The Jacobian by forward mode: one jvp per input element, vectorized. Inputs are
    real, or complex with holomorphic=True (then the Jacobian is f'(z)), as in JAX.

    >>> rune.jacfwd(lambda x: x * x[::-1])(np.array([1.0, 2.0]))
    array([[2., 1.],
           [2., 1.]])
    """

    def jf(*args):
        diff, in_tree, in_types, g = _jacobian_setup(f, args, argnums, "jacfwd",
                                                     holomorphic, "f")
        n = sum(t.size for t in in_types)

        def push(vec):
            return jvp(g, diff, tree.unflatten(in_tree, _split_flat(vec, in_types)))[1]

        cols, o_tree = tree.flatten(vmap(push, out_axes=-1)(np.eye(n)))
        o_types = [leaf_type(c)[0].with_shape(leaf_type(c)[0].shape[:-1]) for c in cols]
        jac = _join_rows([(c, t.size) for c, t in zip(cols, o_types)], n)
        return _blocks(jac, o_types, o_tree, in_types, in_tree, argnums)

    jf.argnums = argnums  # what an eager call traces (arguments.Transformed)
    return jf


@transformation
def jacrev(f: Callable, argnums: int | Sequence[int] = 0, holomorphic: bool = False
           ) -> Callable:
    """The Jacobian by reverse mode: one pullback per output element, vectorized. Outputs
    are real, or complex with holomorphic=True, as in JAX.

    >>> rune.jacrev(lambda x: x * x[::-1])(np.array([1.0, 2.0]))
    array([[2., 1.],
           [2., 1.]])
    """

    def jr(*args):
        diff, in_tree, in_types, g = _jacobian_setup(f, args, argnums, "jacrev",
                                                     holomorphic)
        out, pullback = vjp(g, *diff)
        o_leaves, o_tree = tree.flatten(out)
        o_types = [leaf_type(o)[0] for o in o_leaves]
        for t in o_types:
            _check_output(t, holomorphic, "jacrev")

        def pull(vec):
            return _join_flat(tree.flatten(pullback(tree.unflatten(
                o_tree, _split_flat(vec, o_types))))[0])

        m = sum(t.size for t in o_types)
        return _blocks(vmap(pull)(np.eye(m)), o_types, o_tree, in_types, in_tree, argnums)

    jr.argnums = argnums  # what an eager call traces (arguments.Transformed)
    return jr


@transformation
def hessian(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The matrix of second derivatives: jacfwd of jacrev.

    >>> rune.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 3.0]))
    array([[6., 2.],
           [2., 0.]])
    """
    return jacfwd(jacrev(f, argnums), argnums)


# ------------------------------------------------------------- make_ir


def make_ir(f: Callable, static_argnums: int | Sequence[int] = ()) -> Callable[..., Region]:
    """A function that traces f on given arguments and returns its typed IR.

    >>> print(rune.make_ir(lambda x: rnp.sin(x) * 2.0)(np.ones(3)))
    { lambda a:float64[3] .
      b:float64[3] = sin a
      c:float64[3] = mul b 2.0:float64
      in (c) }
    """
    statics = as_argnums(static_argnums)

    @api_boundary
    def make(*args):
        dyn = tuple(i for i in range(len(args)) if i not in statics)
        for i in dyn:  # checked here so that paths count every argument
            flatten_args(args[i], f"args[{i}]")
        leaves, in_tree, _ = flatten_args(tuple(args[i] for i in dyn), "args")
        g = with_args(f, args, dyn, {})
        return trace_fn(g, leaves, in_tree).region

    return make
