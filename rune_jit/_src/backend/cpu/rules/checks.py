"""Checks in compiled code: a failing `check` returns the "check" status from the call
(a compare, and a branch weighted unlikely: nothing else runs when it holds), and the
runtime names the failure by running the call again in the NumPy interpreter, which
raises the check's CheckError with its values, lane and loop steps (`replay`). So the
message of a compiled call is, by construction, the eager one; the price is the time of
an interpreted run of the call, paid once it has failed. Debug callbacks do not run
again in the replay (eager.replaying)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .... import eager
from ....errors import CheckError
from ....interpret import eval_region
from ....ir import Region
from ....ops.check import check_p, checking
from ..codegen.lower import lowering


class CheckFailed(CheckError):
    """Compiled code failed a check (at `source`): the runtime replays the call to name
    the failure. Seen by a user only for code with no program to replay."""

    def __init__(self, source: str | None):
        self.source = source
        super().__init__(f"a rune_jit.check failed{' at ' + source if source else ''}")


def present(sites: Sequence) -> bool:
    """Whether a program with these failure sites has checks (its calls may replay)."""
    return any(kind == "check" for kind, _ in sites)


@lowering(check_p)
def _check(lw, args, out_types, *, msg, tree, axes):
    pred = args[0]  # the values of the message are the replay's business
    site = lw.errors.add("check")
    if pred.type.shape == ():
        holds = lw.scalar(pred)  # in a block of lanes, one per lane
    else:
        (holds,) = lw.fold(pred.type.shape, [lw.const(np.dtype(bool), True)],
                           lambda idx, v: [lw.b.and_(v[0], lw.load(pred, idx))])
    failed = lw.b.not_(holds)
    if lw.running is not None and isinstance(failed.type, type(lw.running.type)):
        failed = lw.b.and_(failed, lw.running)  # a lane that stopped checks nothing
    lw.fail_if_any(failed, "check", site)
    return []


def replay(region: Region, values: Sequence, failed: CheckFailed) -> list[np.ndarray]:
    """The CheckError of a compiled call of `region` on `values` that failed a check, from
    the interpreter; with checks off (checkify's second run), the interpreter's results."""
    with eager.replaying():
        outs = eval_region(region, list(values))
    if not checking():
        return [np.array(o) for o in outs]
    raise CheckError(f"{failed} in compiled code, but held when the interpreter ran the "
                     f"call again (the compiled code's rounding differs)")
