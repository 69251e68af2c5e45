"""checkpointed: a loop whose reverse mode holds at most k carries (`scan(checkpoints=k)`,
`iterate(checkpoints=k)`, `while_loop(checkpoints=k)`).

    checkpointed(body)(*args) == body(*args)      # the meaning, under every transformation

`scan` with k < n steps (`iterate` with k < max_steps) binds `checkpointed`, whose body
is the loop (and, after jvp or vmap, the loop of the transformed step: each rule here
transforms the body and keeps k). Only partial evaluation, reverse mode, reads k
(checkpointed_scan.py, checkpointed_iterate.py); compiled, the body runs as it is, so a
loop nobody differentiates costs nothing more.

Closed form: operands (captures..., args...); `body` (captures..., args...) -> outputs.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ad_util import UndefinedPrimal, live, nonzero
from ..interpret import eval_region
from ..ir import Region
from . import loops
from .tangents import instantiate
from ..primitive import Primitive
from ..trace import bind, trace_closed, type_of_value

checkpointed_p = Primitive("checkpointed")


def checked_checkpoints(checkpoints: Any, name: str = "scan") -> int | None:
    """`checkpoints` as the loop `name` takes it: "all" (None: keep every carry) or an
    int >= 1.

    >>> checked_checkpoints("all"), checked_checkpoints(8)
    (None, 8)
    """
    if isinstance(checkpoints, str) and checkpoints == "all":
        return None
    if isinstance(checkpoints, (bool, np.bool_)) or not isinstance(
            checkpoints, (int, np.integer)):
        raise TypeError(f'{name}: checkpoints must be "all" or a positive int, got '
                        f"{checkpoints!r}")
    if checkpoints < 1:
        raise ValueError(f"{name}: checkpoints must be at least 1 (the carry the loop starts "
                         f"from is one), got {checkpoints}")
    return int(checkpoints)


def checkpointed(fn: Callable[..., list], args: list, checkpoints: int) -> list:
    """`fn(*args)` (a function binding one scan), bound as a `checkpointed` equation."""
    body, caps = trace_closed(fn, [type_of_value(v) for v in args])
    return bind(checkpointed_p, *caps, *args, body=body, checkpoints=checkpoints,
                num_captures=len(caps))


def _rebind(args: list, body: Region, checkpoints: int) -> list:
    return bind(checkpointed_p, *args, body=body, checkpoints=checkpoints, num_captures=0)


checkpointed_p.def_rule("shape", lambda *types, body, checkpoints, num_captures: body.out_types)
checkpointed_p.def_rule("impl", lambda *args, body, checkpoints, num_captures: eval_region(
    body, list(args)))


@checkpointed_p.def_rule("jvp")
def _jvp(primals, tangents, *, body, checkpoints, num_captures):
    from ..passes.jvp import jvp_region

    jbody, out_nz = jvp_region(body, nonzero(tangents))
    outs = _rebind(list(primals) + live(tangents), jbody, checkpoints)
    n = len(body.outputs)
    return outs[:n], loops.with_zeros(out_nz, outs[n:], body.out_types)


@checkpointed_p.def_rule("batch")
def _batch(size, args, dims, *, body, checkpoints, num_captures):
    from ..passes.vmap import batch_region

    bbody, out_dims = batch_region(body, size, dims)
    return _rebind(list(args), bbody, checkpoints), out_dims


@checkpointed_p.def_rule("transpose")
def _transpose(cts, *args, body, checkpoints, num_captures):
    """A linear body (partial evaluation leaves no `checkpointed` to transpose: this is
    `linear_transpose` of a scan of a linear step), transposed as it is."""
    from ..passes.transpose import backward_pass

    linear = [isinstance(a, UndefinedPrimal) for a in args]
    got = iter(backward_pass(body, linear, loops.pick(args, linear, False), cts))
    return [instantiate(next(got)) if lin else None for lin in linear]


def _dce(eqn, used: list[bool]):
    """Drop the outputs nobody reads, and what only they need, from the body."""
    from ..passes.simplify import dce

    body = eqn.params["body"]
    new = dce(Region(body.params, body.eqns, tuple(loops.pick(body.outputs, used))))
    return eqn.rebuilt(outputs=tuple(loops.pick(eqn.outputs, used)),
                       params={**eqn.params, "body": new})


checkpointed_p.def_rule("dce", _dce)
