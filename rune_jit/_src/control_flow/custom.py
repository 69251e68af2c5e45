"""The user's custom_jvp and custom_vjp, with JAX's API: arguments as pytrees (and
`nondiff_argnums`), the rules traced and checked, bound as the custom call primitives
(ops/custom.py)."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import tree
from ..call.arguments import as_value, flatten_args, leaf_type
from ..ir import Region, Type
from ..ops.custom import Deferred, custom_jvp_call_p, custom_vjp_call_p, region_of
from ..trace import Tracer, bind, current, trace_flat, trace_regions, type_of_value


_tracing_rules: set = set()  # custom functions whose rules are being traced


class _Custom:
    """What custom_jvp and custom_vjp share: arguments split into the differentiated
    ones (flattened pytrees) and the `nondiff_argnums` ones (passed through as they
    are), and the call that binds the primitive, or runs `fun` itself eagerly."""
    kind = ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun, updated=())
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)
        self.rules_when_needed = False  # see `rules_when_needed`

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

    def _trace(self, fns: list[Callable], types: list[list[Type]], rules: list[str],
               nondiff: list):
        """(regions, captures): `fns[0]`, the function, traced now; its rules `fns[1:]`
        traced now too, closed over the captures of all, unless this is a call inside
        one of its own rules, or they are traced when needed and no traced value is
        passed to them (then they are Deferred)."""
        lazy = self.rules_when_needed and not any(
            isinstance(x, Tracer) for x in tree.leaves(nondiff))
        if not self._in_own_rule() and not lazy:
            with self._rules_traced():
                return trace_regions(fns, types)
        (fun,), caps = trace_regions(fns[:1], types[:1])
        cap_types = [type_of_value(c) for c in caps]
        deferred = [Deferred(f"{what} of {self.__name__}", functools.partial(
            trace_flat, f, t), cap_types) for what, f, t in
            zip(rules, fns[1:], types[1:])]
        return [fun, *deferred], caps

    def __call__(self, *args: Any) -> Any:
        nondiff, diff = self._split(args)
        leaves, in_tree, _ = flatten_args(diff, "args")
        if current() is None:  # eager: the function itself (the rules are for traces)
            return self.fun(*args)
        return self._bind(nondiff, leaves, in_tree)

    def _flat(self, nondiff: list, leaves: list, in_tree) -> tuple[list, dict, Callable]:
        """The leaves' types, the box `fun` puts its output tree in, and `fun` on flat
        leaves (the common start of both kinds' `_bind`)."""
        box: dict = {}
        return ([leaf_type(x)[0] for x in leaves], box,
                _flat_fun(self.fun, nondiff, in_tree, box, self._with))


def _flat_fun(fun: Callable, nondiff: list, in_tree, box: dict, with_args: Callable):
    """`fun` as a function of flat leaves to flat output leaves (checked as outputs)."""

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
        if out.dtype.kind in "fc" and t != out:
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
        if self.rule is None:
            raise AttributeError(f"no JVP rule for the custom_jvp function {self.__name__}: "
                                 "define one with defjvp")
        types, box, fun = self._flat(nondiff, leaves, in_tree)
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
                                                 ["jvp rule"], nondiff)
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
        if self.fwd is None:
            raise AttributeError(f"no VJP rule for the custom_vjp function {self.__name__}: "
                                 "define one with defvjp")
        types, box, fun = self._flat(nondiff, leaves, in_tree)

        def fwd(*xs):
            result = self.fwd(*self._with(nondiff, tree.unflatten(in_tree, xs)))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError("custom_vjp: fwd must return a pair (output, residuals)")
            outs, _, _ = flatten_args(result[0], "output")
            res, box["res_tree"], _ = flatten_args(result[1], "residuals")
            box["res_types"] = [leaf_type(r)[0] for r in res]
            return [as_value(o) for o in outs] + [as_value(r) for r in res]

        (f_region, fwd_region), caps = self._trace([fun, fwd], [types, types], ["fwd"],
                                                   nondiff)

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
    if len(leaves) != len(in_types):
        raise TypeError(f"custom_vjp: bwd returns {len(leaves)} cotangent leaves for "
                        f"{len(in_types)} argument leaves")
    for path, g, t in zip(paths, leaves, in_types):
        gt = leaf_type(g)[0]
        if t.dtype.kind in "fc" and gt.shape != t.shape:
            raise TypeError(f"custom_vjp: bwd returns the cotangent {path} as {gt}, but "
                            f"that argument is {t}")


def rules_when_needed(f: _Custom) -> _Custom:
    """`f` (the library's own, closing over no traced value) with its rules traced when a
    pass first needs them, not at each call: a jit of gammaln, which no one
    differentiates, then traces gammaln once, not also its jvp rule (gammaln again, and
    digamma). Calls given a traced `nondiff_argnums` argument trace their rules at once
    still (a rule traced later may not close over traced values: ops/custom.Deferred)."""
    f.rules_when_needed = True
    return f

