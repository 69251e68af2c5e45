"""Custom derivatives: custom_jvp and custom_vjp, with JAX's API.

    custom_jvp(f)(*args) == f(*args)     # the meaning; its jvp is the rule given
    custom_vjp(f)(*args) == f(*args)     # the meaning; its vjp is fwd, then bwd

Each call is one structured equation. `custom_jvp_call` holds the function (`fun`:
args -> outs) and its rule (`jvp`: args, tangents -> outs, tangents of outs), both
traced once when the call is; the jvp pass evaluates the rule instead of
differentiating `fun`, so the rule holds inside loop steps and under every nesting
of transformations (grad of grad differentiates the rule's own equations).

`custom_vjp_call` holds `fun`, `fwd` (args -> outs, residuals) and `bwd` (residuals,
cotangents of outs -> cotangents of args). Its jvp computes `fwd` and stands for the
tangents with `custom_lin` (residuals, tangents of args -> tangents of outs), a
linear primitive whose only derivative is its transpose: `bwd`. So reverse mode runs
fwd forward and bwd backward, and forward mode (jvp) of a custom_vjp function is an
error, as in JAX.

Closed form: operands (captures..., args...); every region takes (captures...,
args...) first. A custom rule covers the explicit arguments only: differentiating
with respect to a value the function closes over is an error, as in JAX.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import tree
from ..ad_util import UndefinedPrimal, Zero, nonzero
from ..interpret import eval_region
from ..ir import Region, Type
from ..primitive import NOT_LINEAR, Absent, Primitive
from ..trace import bind, current, trace_flat, trace_regions, type_of_value
from .shape import materialize
from .tangents import instantiate

custom_jvp_call_p = Primitive("custom_jvp_call")
custom_vjp_call_p = Primitive("custom_vjp_call")
custom_lin_p = Primitive("custom_lin")

CLOSED_OVER = ("{kind}: differentiation with respect to a value the function closes over "
               "(not one of its arguments) is not supported, because the custom rule only "
               "says how to differentiate with respect to the arguments; pass the value "
               "as an argument instead")


# ------------------------------------------------------------- rules traced when needed


class Deferred:
    """A rule's region, traced when a pass first needs it. A custom function called in
    its own rule (`fwd` computing `f(x)`, say) is bound with its rules deferred: tracing
    them then would trace the same call again, without end. Such a rule may not close
    over traced values, since it is traced after the trace that made them."""

    def __init__(self, what: str, make: Callable[[], Region], captures: Sequence[Type] = ()):
        self.what, self.make, self.region = what, make, None
        self.captures = list(captures)  # the call's captures: leading params it ignores

    def get(self) -> Region:
        if self.region is None:
            region = self.make()
            if region.captures:
                raise TypeError(f"custom derivative: the {self.what}, needed for a call of "
                                "the function inside its own rule, closes over traced values")
            from ..ir import Var

            self.region = Region(tuple(Var(t) for t in self.captures) + region.params,
                                 region.eqns, region.outputs)
        return self.region

    def __repr__(self) -> str:
        return f"<{self.what}, traced when needed>"


def region_of(rule: Region | Deferred) -> Region:
    return rule if isinstance(rule, Region) else rule.get()


def batched(rule: Region | Deferred, size: int) -> Region | Deferred:
    """A rule's region with every param batched; a deferred one stays deferred (batching
    it now would trace it, and the rules of the calls in it, without end)."""
    from ..passes.vmap import batch_region

    def batch(region: Region) -> Region:
        return batch_region(region, size, [0] * len(region.params), True)[0]

    if isinstance(rule, Region):
        return batch(rule)
    return Deferred(rule.what, lambda: batch(rule.get()))


_tracing_rules: set = set()  # custom functions whose rules are being traced


# ------------------------------------------------------------- the user's API


class _Custom:
    """What custom_jvp and custom_vjp share: arguments split into the differentiated
    ones (flattened pytrees) and the `nondiff_argnums` ones (passed through as they
    are), and the call that binds the primitive, or runs `fun` itself eagerly."""

    kind = ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun, updated=())
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)

    def _split(self, args: tuple):
        nondiff = [args[i] for i in self.nondiff_argnums]
        diff = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)
        return nondiff, diff

    def _with(self, nondiff: list, diff: Sequence[Any]) -> list:
        it_n, it_d = iter(nondiff), iter(diff)
        n = len(nondiff) + len(diff)
        return [next(it_n) if i in self.nondiff_argnums else next(it_d) for i in range(n)]

    @contextlib.contextmanager
    def _rules_traced(self) -> Iterator[None]:
        """While this function's rules are traced: a call of it inside them defers its
        own rules (`Deferred`), else each rule's trace would trace them again."""
        _tracing_rules.add(id(self))
        try:
            yield
        finally:
            _tracing_rules.discard(id(self))

    def _in_own_rule(self) -> bool:
        return id(self) in _tracing_rules

    def _trace(self, fns: list[Callable], types: list[list[Type]], rules: list[str]):
        """(regions, captures): `fns[0]`, the function, traced now; its rules `fns[1:]`
        traced now too, closed over the captures of all, unless this is a call inside
        one of its own rules (then they are Deferred)."""
        if not self._in_own_rule():
            with self._rules_traced():
                return trace_regions(fns, types)
        (fun,), caps = trace_regions(fns[:1], types[:1])
        cap_types = [type_of_value(c) for c in caps]
        deferred = [Deferred(f"{what} of {self.__name__}", functools.partial(
            trace_flat, f, t), cap_types) for what, f, t in
            zip(rules, fns[1:], types[1:])]
        return [fun, *deferred], caps

    def __call__(self, *args: Any) -> Any:
        from ..arguments import flatten_args

        nondiff, diff = self._split(args)
        leaves, in_tree, _ = flatten_args(diff, "args")
        if current() is None:  # eager: the function itself (the rules are for traces)
            return self.fun(*args)
        return self._bind(nondiff, leaves, in_tree)


def _flat_fun(fun: Callable, nondiff: list, in_tree, box: dict, with_args: Callable):
    """`fun` as a function of flat leaves to flat output leaves (checked as outputs)."""
    from ..arguments import as_value, flatten_args

    def flat(*xs):
        out = fun(*with_args(nondiff, tree.unflatten(in_tree, xs)))
        leaves, box["out_tree"], box["paths"] = flatten_args(out, "output")
        box["out_types"] = [type_of_value(as_value(o)) for o in leaves]
        return [as_value(o) for o in leaves]
    return flat


def _check_tangents(kind: str, box: dict, t_tree, t_types: list[Type]) -> None:
    """The rule's tangents must have the outputs' structure, and each float one its
    output's type."""
    if t_tree != box["out_tree"]:
        raise TypeError(f"{kind}: the rule returns tangents of structure {t_tree}, but the "
                        f"function returns {box['out_tree']}")
    for path, out, t in zip(box["paths"], box["out_types"], t_types):
        if out.dtype.kind == "f" and t != out:
            raise TypeError(f"{kind}: the rule returns the tangent of {path} as {t}, but "
                            f"{path} is {out}")


class custom_jvp(_Custom):
    """`fun` with a derivative rule of the user's: `@custom_jvp`, then
    `@f.defjvp def rule(primals, tangents): return primals_out, tangents_out` (with
    `nondiff_argnums`, `rule(*nondiff_args, primals, tangents)`). Tangents of integer
    arguments are passed as zeros of their dtype. Calls outside any transformation run
    `fun` itself.

    >>> import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    >>> @rune.custom_jvp
    ... def log1pexp(x):
    ...     return rnp.log1p(rnp.exp(x))
    >>> @log1pexp.defjvp
    ... def _(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t / (1.0 + rnp.exp(-x))
    >>> float(rune.grad(log1pexp)(np.float64(1000.0)))  # not nan
    1.0
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.rule: Callable | None = None

    def defjvp(self, jvp: Callable) -> Callable:
        self.rule = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One function per argument, `jvp_i(tangent_i, primal_out, *primals)`; the
        tangent of the output is their sum (None: that argument is not differentiated)."""
        def rule(*args):
            nondiff, (primals, tangents) = list(args[:-2]), args[-2:]
            out = self.fun(*self._with(nondiff, primals))
            parts = [f(t, out, *primals) for f, t in zip(jvps, tangents) if f is not None]
            return out, functools.reduce(lambda a, b: tree.tree_map(lambda u, v: u + v, a, b),
                                         parts)
        self.rule = rule

    def _bind(self, nondiff: list, leaves: list, in_tree) -> Any:
        from ..arguments import as_value, flatten_args, leaf_type

        if self.rule is None:
            raise AttributeError(f"no JVP rule for the custom_jvp function {self.__name__}: "
                                 "define one with defjvp")
        types = [leaf_type(x)[0] for x in leaves]
        box: dict = {}
        fun = _flat_fun(self.fun, nondiff, in_tree, box, self._with)
        n = len(leaves)

        def rule(*xs):
            primals = tree.unflatten(in_tree, xs[:n])
            tangents = tree.unflatten(in_tree, xs[n:])
            result = self.rule(*nondiff, primals, tangents)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError("custom_jvp: the rule must return a pair (primals_out, "
                                "tangents_out)")
            outs, _, _ = flatten_args(result[0], "output")
            touts, t_tree, _ = flatten_args(result[1], "tangent")
            _check_tangents("custom_jvp", box, t_tree, [leaf_type(t)[0] for t in touts])
            return [as_value(o) for o in [*outs, *touts]]

        (f_region, j_region), caps = self._trace([fun, rule], [types, types + types],
                                                 ["jvp rule"])
        outs = bind(custom_jvp_call_p, *caps, *[as_value(x) for x in leaves], fun=f_region,
                    jvp=j_region, num_captures=len(caps))
        return tree.unflatten(box["out_tree"], outs)


class custom_vjp(_Custom):
    """`fun` with a reverse-mode rule of the user's: `f.defvjp(fwd, bwd)`, where
    `fwd(*args) -> (out, residuals)` and `bwd(residuals, ct_out) -> ` a tuple of one
    cotangent per argument (with `nondiff_argnums`: `bwd(*nondiff_args, residuals,
    ct_out)`, and no cotangents for them). Forward mode (jvp) of such a function is an
    error, as in JAX. Calls outside any transformation run `fun` itself.

    >>> import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    >>> @rune.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None),
    ...                      lambda res, g: (rnp.clip(g, -1.0, 1.0),))
    >>> rune.grad(lambda x: 5.0 * clip_gradient(x))(np.float64(2.0)).item()
    1.0
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd

    def _bind(self, nondiff: list, leaves: list, in_tree) -> Any:
        from ..arguments import as_value, flatten_args, leaf_type

        if self.fwd is None:
            raise AttributeError(f"no VJP rule for the custom_vjp function {self.__name__}: "
                                 "define one with defvjp")
        types = [leaf_type(x)[0] for x in leaves]
        box: dict = {}
        fun = _flat_fun(self.fun, nondiff, in_tree, box, self._with)

        def fwd(*xs):
            result = self.fwd(*self._with(nondiff, tree.unflatten(in_tree, xs)))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError("custom_vjp: fwd must return a pair (output, residuals)")
            outs, _, _ = flatten_args(result[0], "output")
            res, box["res_tree"], _ = flatten_args(result[1], "residuals")
            box["res_types"] = [leaf_type(r)[0] for r in res]
            return [as_value(o) for o in outs] + [as_value(r) for r in res]

        (f_region, fwd_region), caps = self._trace([fun, fwd], [types, types], ["fwd"])

        def make_bwd() -> Region:  # fwd's residuals say what bwd takes
            region_of(fwd_region)
            return self._bwd_region(nondiff, in_tree, types, box)

        if self._in_own_rule():
            bwd: Region | Deferred = Deferred(f"bwd of {self.__name__}", make_bwd)
        else:
            with self._rules_traced():  # bwd may call the function (JAX's fixed_point)
                bwd = make_bwd()
        outs = bind(custom_vjp_call_p, *caps, *[as_value(x) for x in leaves], fun=f_region,
                    fwd=fwd_region, bwd=bwd, num_captures=len(caps))
        return tree.unflatten(box["out_tree"], outs)

    def _bwd_region(self, nondiff: list, in_tree, in_types: list[Type], box: dict) -> Region:
        """bwd as a region: (residuals..., cotangents of the outputs...) -> a cotangent
        per argument leaf. It may close over nothing traced: it runs in the backward
        pass, not where the function was called."""
        from ..arguments import as_value, flatten_args

        n_res = len(box["res_types"])

        def bwd(*xs):
            res = tree.unflatten(box["res_tree"], xs[:n_res])
            cts = tree.unflatten(box["out_tree"], xs[n_res:])
            got = self.bwd(*nondiff, res, cts)
            if not isinstance(got, (tuple, list)) or len(got) != len(in_tree.children()):
                n = len(got) if isinstance(got, (tuple, list)) else "not a tuple"
                raise TypeError(f"custom_vjp: bwd must return a tuple of {len(in_tree.children())}"
                                f" cotangents, one per argument; it returned {n}")
            leaves, _, paths = flatten_args(tuple(
                _zeros_for_none(g, arg, types) for g, arg, types in
                zip(got, in_tree.children(), _per_argument(in_tree, in_types))), "bwd")
            _check_cotangents(leaves, paths, in_types)
            return [as_value(g) for g in leaves]

        region = trace_flat(bwd, box["res_types"] + box["out_types"])
        if region.captures:
            raise TypeError("custom_vjp: bwd reads a traced value it closes over; pass what "
                            "it needs through the residuals fwd returns")
        return region


def _per_argument(in_tree, types: list[Type]) -> list[list[Type]]:
    """The leaf types of each argument of the tuple `in_tree`."""
    out, at = [], 0
    for child in in_tree.children():
        out.append(types[at:at + child.num_leaves])
        at += child.num_leaves
    return out


def _zeros_for_none(g: Any, arg_tree, types: list[Type]) -> Any:
    """A cotangent of None stands for zeros of that argument (as JAX allows)."""
    if g is not None:
        return g
    return tree.unflatten(arg_tree, [np.zeros(t.shape, t.dtype) for t in types])


def _check_cotangents(leaves: list, paths: list[str], in_types: list[Type]) -> None:
    from ..arguments import leaf_type

    if len(leaves) != len(in_types):
        raise TypeError(f"custom_vjp: bwd returns {len(leaves)} cotangent leaves for "
                        f"{len(in_types)} argument leaves")
    for path, g, t in zip(paths, leaves, in_types):
        gt = leaf_type(g)[0]
        if t.dtype.kind == "f" and gt.shape != t.shape:
            raise TypeError(f"custom_vjp: bwd returns the cotangent {path} as {gt}, but "
                            f"that argument is {t}")


# ------------------------------------------------------------- custom_jvp_call


def _fun_types(*types, fun, num_captures, **_):
    if fun.in_types != list(types):
        raise TypeError("custom call: the function's params do not match the operands")
    return fun.out_types


custom_jvp_call_p.def_rule("shape", _fun_types)
custom_jvp_call_p.def_rule("impl", lambda *args, fun, jvp, num_captures: eval_region(
    fun, list(args)))
custom_jvp_call_p.def_rule("transpose", NOT_LINEAR)


def _closed_over_check(kind: str, tangents: Sequence[Any], num_captures: int) -> None:
    if any(nonzero(tangents[:num_captures])):
        raise TypeError(CLOSED_OVER.format(kind=kind))


@custom_jvp_call_p.def_rule("jvp")
def _custom_jvp_jvp(primals, tangents, *, fun, jvp, num_captures):
    _closed_over_check("custom_jvp", tangents, num_captures)
    caps, args = list(primals[:num_captures]), list(primals[num_captures:])
    tangents = [instantiate(t) for t in tangents[num_captures:]]
    touts = eval_region(region_of(jvp), caps + args + tangents)
    n = len(fun.outputs)
    return touts[:n], [t if o.dtype.kind == "f" else Zero(o) for t, o in
                       zip(touts[n:], fun.out_types)]


def _batch_all(size: int, args: list, dims: list) -> list:
    """Every operand batched (lanes first): a rule's region is batched whole."""
    return [materialize(a, d, size) for a, d in zip(args, dims)]


@custom_jvp_call_p.def_rule("batch")
def _custom_jvp_batch(size, args, dims, *, fun, jvp, num_captures):

    args = _batch_all(size, args, dims)
    outs = bind(custom_jvp_call_p, *args, fun=batched(fun, size), jvp=batched(jvp, size),
                num_captures=num_captures)
    return outs, [0] * len(outs)


# ------------------------------------------------------------- custom_vjp_call


custom_vjp_call_p.def_rule("shape", _fun_types)
custom_vjp_call_p.def_rule("impl", lambda *args, fun, num_captures, **_: eval_region(
    fun, list(args)))
custom_vjp_call_p.def_rule("transpose", NOT_LINEAR)


@custom_vjp_call_p.def_rule("jvp")
def _custom_vjp_jvp(primals, tangents, *, fun, fwd, bwd, num_captures):
    _closed_over_check("custom_vjp", tangents, num_captures)
    outs_res = eval_region(region_of(fwd), list(primals))
    n = len(fun.outputs)
    outs, res = outs_res[:n], outs_res[n:]
    arg_types = fun.in_types[num_captures:]
    touts = bind(custom_lin_p, *res, *[instantiate(t) for t in tangents[num_captures:]],
                 bwd=region_of(bwd), num_res=len(res), arg_types=tuple(arg_types),
                 out_types=tuple(fun.out_types), num_captures=0)
    return outs, [t if o.dtype.kind == "f" else Zero(o) for t, o in zip(touts, fun.out_types)]


@custom_vjp_call_p.def_rule("batch")
def _custom_vjp_batch(size, args, dims, *, fun, fwd, bwd, num_captures):
    args = _batch_all(size, args, dims)
    outs = bind(custom_vjp_call_p, *args, fun=batched(fun, size), fwd=batched(fwd, size),
                bwd=batched(bwd, size), num_captures=num_captures)
    return outs, [0] * len(outs)


# ------------------------------------------------------------- custom_lin

FORWARD = ("custom_vjp: a custom_vjp function has a reverse-mode rule only; forward mode "
           "(jvp, jacfwd, hessian's outer jacfwd) cannot use it. Use custom_jvp for a "
           "function that needs forward mode")


@custom_lin_p.def_rule("shape")
def _lin_shape(*types, bwd, num_res, arg_types, out_types, num_captures):
    return list(out_types)


def _lin_impl(*args, **params):
    raise TypeError(FORWARD)


custom_lin_p.def_rule("impl", _lin_impl)
custom_lin_p.def_rule("jvp", Absent("only its transpose exists (a custom_vjp's bwd)"))


@custom_lin_p.def_rule("transpose")
def _lin_transpose(cts, *args, bwd, num_res, arg_types, out_types, num_captures):
    res = list(args[:num_res])
    if any(isinstance(r, UndefinedPrimal) for r in res):
        raise TypeError(FORWARD)
    cts = [instantiate(c) for c in cts]
    grads = eval_region(bwd, res + cts)
    return [None] * num_res + [g if isinstance(a, UndefinedPrimal) and t.dtype.kind == "f"
                               else None for g, a, t in zip(grads, args[num_res:], arg_types)]


@custom_lin_p.def_rule("batch")
def _lin_batch(size, args, dims, *, bwd, num_res, arg_types, out_types, num_captures):
    args = _batch_all(size, args, dims)
    bbwd = batched(bwd, size)
    lane = lambda ts: tuple(t.with_shape((size,) + t.shape) for t in ts)  # noqa: E731
    outs = bind(custom_lin_p, *args, bwd=bbwd, num_res=num_res, arg_types=lane(arg_types),
                out_types=lane(out_types), num_captures=0)
    return outs, [0] * len(outs)
