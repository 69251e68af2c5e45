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

from typing import Any, Callable, Sequence


from ..ad_util import UndefinedPrimal, Zero, nonzero
from ..interpret import eval_region
from ..ir import Region, Type
from ..primitive import NOT_LINEAR, Absent, Primitive
from ..trace import bind
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


# ------------------------------------------------------------- the user's API


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
    return touts[:n], [t if o.dtype.kind in "fc" else Zero(o) for t, o in
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
    return outs, [t if o.dtype.kind in "fc" else Zero(o) for t, o in zip(touts, fun.out_types)]


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
    return [None] * num_res + [g if isinstance(a, UndefinedPrimal) and t.dtype.kind in "fc"
                               else None for g, a, t in zip(grads, args[num_res:], arg_types)]


@custom_lin_p.def_rule("batch")
def _lin_batch(size, args, dims, *, bwd, num_res, arg_types, out_types, num_captures):
    args = _batch_all(size, args, dims)
    bbwd = batched(bwd, size)
    lane = lambda ts: tuple(t.with_shape((size,) + t.shape) for t in ts)  # noqa: E731
    outs = bind(custom_lin_p, *args, bwd=bbwd, num_res=num_res, arg_types=lane(arg_types),
                out_types=lane(out_types), num_captures=0)
    return outs, [0] * len(outs)
