"""Failures in compiled code: what each status a function returns means (`ErrorSites`,
with the user's line), and the Lowerer's methods that return one (`Failures`)."""

from __future__ import annotations

import llvmlite.ir as ir

from ....ir import Region
from ..runtime import interrupt
from . import arith, emit
from .emit import I64


class ErrorSites:
    """What each failure status of a compiled function means (iterate sites, ...), with
    the user's line of the equation that can fail there."""

    def __init__(self):
        self.sites: list[tuple[str, dict]] = []
        self.source = None  # of the equation being lowered

    def add(self, kind: str, **info) -> int:
        where = str(self.source) if self.source is not None else None
        self.sites.append((kind, {**info, "source": where}))
        return len(self.sites) - 1


class Failures:
    """The Lowerer's (lower.py) returns of a failure status: a condition in any lane, and
    Ctrl-C polled in loops."""

    def fail_if_any(self, condition: ir.Value, kind: str, site: int | None = None,
                    lane: ir.Value | None = None) -> None:
        """Return a failure status from the function if `condition` holds (in any lane);
        `site` (default: a new one) says where and what."""
        b = self.b
        site = self.errors.add(kind) if site is None else site
        condition = self.any_lane(condition)
        status = ir.Constant(I64, emit.KINDS[kind] | site << 8)
        if lane is not None:
            status = b.or_(status, b.shl(lane, self.i64(32)))
        self.fn.fail(condition, status)

    def any_lane(self, condition: ir.Value) -> ir.Value:
        """Whether `condition` holds in some lane (a scalar holds in its only one)."""
        if isinstance(condition.type, ir.VectorType):
            return arith.intrinsic(self.b, "vector.reduce.or", condition, ret=emit.I1)
        return condition

    def poll_interrupt(self, step: ir.Value, region: Region) -> None:
        """Every few steps of a loop whose step is `region` (interrupt.interval): return
        the "interrupt" status if a SIGINT came since the call began."""
        b = self.b
        every = interrupt.interval(region)
        due = b.icmp_unsigned("==", b.and_(step, self.i64(every - 1)), self.i64(0))
        with b.if_then(due, likely=False):
            now = b.load_atomic(self.fn.global_i64(interrupt.SYMBOL), "monotonic", 8, typ=I64)
            if self.fn.interrupt_site is None:
                self.fn.interrupt_site = self.errors.add("interrupt")
            self.fail_if_any(b.icmp_unsigned("!=", now, self.fn.signals_at_start()),
                             "interrupt", self.fn.interrupt_site)
