"""What scan and iterate share: lanes, carry fixpoints, residual sorting, pytree checks.

A loop's step, closed, takes (captures..., laned..., carries..., rows...) and
returns (carries..., ys...):

- captures are shared by all lanes and all steps;
- a loop with *lanes* (a vmapped `iterate`, and the counted scans of its reverse
  mode) keeps its step per lane: laned operands, carries and rows lead with the
  lane axes outside the loop, and the step sees one lane's slice. Lanes stop
  on their own, so this is what lets a compiler advance a block of lanes in
  SIMD registers, each block until its own lanes are done;
- rows are the per-step inputs (scan's xs).

Reverse mode splits the step (partial evaluation) into a known step and an
unknown one, and sorts the residuals between them (rule 3):

- *forwarded*: a known capture, laned operand or row is read from there by the
  unknown loop, never saved;
- *intensive*: computed from captures and laned operands alone, it does not
  change across steps: it is computed once, before the loop (hoisted);
- *extensive*: any other residual is saved once per step, stacked like ys.

A loop with no step limit (`while_loop` without `max_steps`) has UNBOUNDED steps in
its types; its tapes, and the ys of the counted scans that read them, hold only the
rows of the steps taken (at least one), and every reader stays within the counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .. import config, eager
from ..ad_util import Zero
from .tangents import instantiate
from ..interpret import eval_region
from ..ir import UNBOUNDED, Region, Type
from ..passes.partial_eval import partial_eval_region
from ..trace import type_of_value
from .pure_callback import pure_callback_p


def rows_held(steps: int, taken: int) -> int:
    """The rows a tape (or a counted scan's ys) of `steps` rows holds once `taken` steps
    ran: all of them, unless the loop has no step limit."""
    return steps if steps < UNBOUNDED else max(taken, 1)


def fixpoint(init: Sequence[bool], step: Callable[[list[bool]], tuple[list[bool], Any]]
             ) -> tuple[list[bool], Any]:
    """The least mask above `init` closed under `step` (which carries are nonzero,
    batched, unknown): iterate until an iteration adds nothing.

    `step(mask) -> (mask, payload)`, where the payload is what `step` built to find
    its mask (a transformed step). -> (the mask, the payload of the last call, which
    was made with that mask): callers use it rather than build it again, which would
    run the rules of the loops nested in the step once more, per level of nesting."""
    mask = list(init)
    while True:
        out, payload = step(mask)
        new = [a or b for a, b in zip(mask, out)]
        if new == mask:
            return mask, payload
        mask = new


# ------------------------------------------------------------- outside jit


def native_when_eager(prim, interpret: Callable) -> Callable:
    """A loop's impl: called outside jit, the loop runs as the backend runs a program (the
    CPU backend compiles it, cached per program); `interpret` is its meaning, the NumPy
    interpreter's rule (see rune_jit.eager)."""
    def impl(*args, **params):
        return eager.loop(prim, interpret, args, params)

    return impl


# ------------------------------------------------------------- lanes


def per_lane(t: Type, lanes: tuple) -> Type:
    return t.with_shape(t.shape[len(lanes):])


def eval_lanes(region: Region, shared: list, laned: list, lanes: tuple,
               shown: tuple | None = None) -> tuple[list, list]:
    """Evaluate a per-lane region on every lane; -> (outputs, which lead with lanes).

    The lanes are flattened into one and the region is evaluated batched, so the
    interpreter runs it vectorized; an output no lane changes stays shared. A failing
    check names its lane along the loop's lane axes that `shown` marks (default: none).
    """
    from ..passes.vmap import batch_eval, naming_lanes
    from .shape import reshape

    if not lanes:
        return eval_region(region, shared + laned), [False] * len(region.outputs)
    n = math.prod(lanes)
    flat = [reshape(v, (n,) + type_of_value(v).shape[len(lanes):]) for v in laned]
    with naming_lanes(lanes, shown if shown is not None else (False,) * len(lanes)):
        outs, dims = batch_eval(region, n, shared + flat,
                                [None] * len(shared) + [0] * len(flat))
    return ([reshape(o, lanes + type_of_value(o).shape[1:]) if d is not None else o
             for o, d in zip(outs, dims)], [d is not None for d in dims])


def spread(x: Any, lanes: tuple) -> Any:
    """A shared value given the lane axes in front."""
    from .shape import broadcast_in_dim

    t = type_of_value(x)
    return broadcast_in_dim(x, lanes + t.shape, tuple(range(len(lanes), len(lanes) + t.ndim)))


def all_lanes(region: Region, caps: list, values: list, lanes: tuple,
              shown: tuple | None = None) -> list:
    """`eval_lanes`, with the outputs no lane changes spread over the lanes."""
    outs, laned = eval_lanes(region, caps, values, lanes, shown)
    return [o if w or not lanes else np.asarray(spread(o, lanes)) for o, w in zip(outs, laned)]


def add_lane_axis(size: int, caps: list, cdims: list, laned: list, ldims: list,
                  lanes: tuple) -> tuple[list[bool], list, list]:
    """vmap of a loop with lanes: the map's axis becomes the first lane axis. A batched
    capture becomes a laned operand; -> (moved mask, shared captures, laned operands)."""
    from .shape import materialize
    from .shape import broadcast_in_dim

    moved = [d is not None for d in cdims]
    laned_caps = [broadcast_in_dim(c, (size,) + lanes + type_of_value(c).shape[1:],
                                   (0,) + tuple(range(1 + len(lanes), len(lanes) + type_of_value(
                                       c).ndim))) for c in pick(caps, moved)]
    return moved, pick(caps, moved, False), laned_caps + [
        materialize(v, d, size) for v, d in zip(laned, ldims)]


def observable(regions: Sequence[Region]) -> bool:
    """Whether evaluating `regions` (a loop's step and test) at a point no running lane
    is at could be seen: they raise (a check, RUNE_JIT_DEBUG_NANS's too; an index out of
    bounds; an inner loop out of steps: every primitive with the trait "effect") or call
    Python. Then a stopped lane computes a running lane's step (`donated`); else it
    steps its own frozen carry, which no one can tell: the result is dropped, and
    compiled code raises no floating-point traps (the interpreter's NumPy may warn)."""
    def seen(r: Region) -> bool:
        return any("effect" in e.prim.traits or e.prim is pure_callback_p
                   or any(seen(inner) for inner in e.regions) for e in r.eqns)
    return config.debug_nans or any(seen(r) for r in regions)


def donated(active: Any, values: list, lanes: tuple) -> list:
    """`values` (each leading with `lanes`) where a lane that is not `active` holds the
    values of the first lane that is (its donor): the interpreter evaluates a step on
    all lanes at once, and so evaluates it only at points a running lane is at (a lane
    that stopped computes its donor's step, which `held` then discards)."""
    flat = np.reshape(np.asarray(active), -1)
    if not lanes or flat.all() or not flat.any():
        return values
    n = flat.size
    lane = np.where(flat, np.arange(n), np.argmax(flat))
    return [np.reshape(np.reshape(v, (n,) + np.shape(v)[len(lanes):])[lane], np.shape(v))
            for v in values]


def held(active: Any, new: Any, old: Any) -> Any:
    """new in the lanes that run, old in the lanes that are done (lanes lead)."""
    from .elementwise import select
    from .shape import broadcast_in_dim

    shape = type_of_value(new).shape
    mask = broadcast_in_dim(active, shape, tuple(range(type_of_value(active).ndim)))
    return select(mask, new, old)


# ------------------------------------------------------------- jvp


class LoopJvp:
    """A loop's jvp: a loop that carries the nonzero tangents along with the values.
    Which carries have a nonzero tangent is a fixpoint over the step's jvp.

        Before: step      [caps, laned, carry, rows] -> [carry, ys]
        After:  jvp step  [caps, laned, carry, rows, tcaps*, tlaned*, tcarry*, trows*]
                              -> [carry, ys, tcarry*, tys*]
                as the loop runs it (`step_fn`): laned [laned, tlaned*],
                carry [carry, tcarry*], rows [rows, trows*] -> carry [carry, tcarry*],
                ys [ys, tys*]

    (* : only the nonzero tangents.)"""

    def __init__(self, step: Region, nc: int, nz_fixed: list[bool], nz_init: list[bool],
                 nz_rows: Sequence[bool] = ()):
        from ..passes.jvp import jvp_region

        self.nc, self.ny = nc, len(step.outputs) - nc
        pad = [False] * self.ny

        def probe(mask):  # instantiated as the final step is, so the last probe is that step
            region, out_nz = jvp_region(step, nz_fixed + mask + list(nz_rows), mask + pad)
            return out_nz[:nc], (region, out_nz[nc:])

        self.nz_carry, (self.step, self.nz_ys) = fixpoint(nz_init, probe)
        self.n_tc = sum(self.nz_carry)

    def init(self, init: list, tinit: list) -> list:
        return init + [instantiate(t) for t, m in zip(tinit, self.nz_carry) if m]

    def step_fn(self, caps: list, tcaps: list, nl: int, nx: int = 0) -> Callable:
        """The step for `scan_flat` or `iterate_flat`. `tcaps` are the captures' nonzero
        tangents; `nl` and `nx` count the laned operands and rows, tangents left out."""
        nc, k, n_tc = self.nc, self.nc + self.ny, self.n_tc

        def run(lan, carry, rows=()):
            outs = eval_region(self.step, [*caps, *lan[:nl], *carry[:nc], *rows[:nx], *tcaps,
                                           *lan[nl:], *carry[nc:], *rows[nx:]])
            return outs[:nc] + outs[k:k + n_tc], outs[nc:k] + outs[k + n_tc:]
        return run

    def results(self, outs: list, out_types: list[Type], n_mid: int = 0) -> tuple[list, list]:
        """The outputs of the new loop (carries, their tangents, `n_mid` others, ys, their
        tangents) as the primal and tangent outputs of the loop it differentiates, whose
        outputs (carries, `n_mid` others, ys) have `out_types`."""
        nc, k, ny = self.nc, self.nc + self.n_tc, self.ny
        tangents = with_zeros(self.nz_carry + [False] * n_mid + self.nz_ys,
                              outs[nc:k] + outs[k + n_mid + ny:], out_types)
        return outs[:nc] + outs[k:k + n_mid + ny], tangents


# ------------------------------------------------------------- reverse mode


@dataclass
class LoopSplit:
    """A loop step split for reverse mode, its residuals sorted."""

    hoisted: Region  # (known captures, known laned) -> (intensive residuals, invariants)
    known_step: Region  # (invariants, known carries, known rows)
    #                     -> (known carries, known ys, extensive residuals)
    unknown_step: Region  # (residuals, unknown captures, unknown laned, unknown carries,
    #                        unknown rows) -> (unknown carries, unknown ys)
    kinds: list[tuple[str, int]]  # per residual: (cap|laned|row|intensive|extensive, index)
    unk_carry: list[bool]
    unk_ys: list[bool]
    num_intensive: int
    num_extensive: int


def split_loop(step: Region, num_carry: int, unk_caps: list[bool], unk_laned: list[bool],
               unk_init: list[bool], unk_xs: list[bool]) -> LoopSplit:
    """Split a step by which operands are unknown (reverse mode: the tangents).

        Before: step          [caps, laned, carry, rows] -> [carry, ys]
        After:  hoisted       [kcaps, klaned] -> [intensive..., invariants...]
                known_step    [invariants, kcarry, krows] -> [kcarry, kys, extensive...]
                unknown_step  [residuals..., ucaps, ulaned, ucarry, urows] -> [ucarry, uys]

    where a residual is a known capture, laned operand or row (forwarded), an intensive
    value (hoisted) or an extensive one (saved each step): `kinds` says which."""
    ny = len(step.outputs) - num_carry
    consts = unk_caps + unk_laned

    def pe(unk_carry):
        split = partial_eval_region(step, consts + unk_carry + unk_xs, unk_carry + [False] * ny,
                                     recompute_unsized=True)
        return split.out_unknowns[:num_carry], split

    unk_carry, split = fixpoint(unk_init, pe)
    known = split.known
    n_kcaps, n_inv = unk_caps.count(False), consts.count(False)
    n_state = n_inv + unk_carry.count(False)
    n_kout = len(known.outputs) - split.num_res
    kinds: list[tuple[str, int]] = []
    computed = []
    for j, src in enumerate(split.res_inputs):
        if src is not None and src < n_kcaps:
            kinds.append(("cap", src))
        elif src is not None and src < n_inv:
            kinds.append(("laned", src - n_kcaps))
        elif src is not None and src >= n_state:
            kinds.append(("row", src - n_state))
        else:
            kinds.append(("computed", len(computed)))
            computed.append(known.outputs[n_kout + j])
    body = Region(known.params, known.eqns, known.outputs[:n_kout] + tuple(computed))
    # which residuals vary per step: "unknown" here means "varies", so no primitive's own
    # (reverse-mode) splitting applies, only the plain one
    split2 = partial_eval_region(body, [False] * n_inv + [True] * (len(known.params) - n_inv),
                                 [True] * n_kout + [False] * len(computed), custom_rules=False)
    varies = split2.out_unknowns[n_kout:]
    where = {c: ("extensive", sum(varies[:c])) if v else ("intensive", c - sum(varies[:c]))
             for c, v in enumerate(varies)}
    kinds = [where[i] if k == "computed" else (k, i) for k, i in kinds]
    return LoopSplit(split2.known, split2.unknown, split.unknown, kinds, unk_carry,
                     split.out_unknowns[num_carry:], len(varies) - sum(varies), sum(varies))


@dataclass
class Hoisted:
    """The values computed once before the loops, each shared or per lane."""

    intensive: list
    invariants: list
    invariants_laned: list[bool]
    intensive_laned: list[bool]


def hoist(split: LoopSplit, kcaps: list, klaned: list, lanes: tuple) -> Hoisted:
    vals, laned = eval_lanes(split.hoisted, kcaps, klaned, lanes)
    n = split.num_intensive
    return Hoisted(vals[:n], vals[n:], laned[n:], laned[:n])


def residual_args(split: LoopSplit, kcaps: list, klaned_lane: list, intensive_lane: list,
                  rows: list, recomputed: dict | None = None) -> list:
    """The unknown step's residuals for one step of one lane. `intensive_lane` holds the
    intensive values as the step sees them (shared ones whole, laned ones per lane);
    `rows` holds this step's rows of the forwarded inputs, then of the tapes;
    `recomputed`, the residuals of other kinds the step computed (carry_tape.py)."""
    n_fwd = sum(1 for k, _ in split.kinds if k == "row")
    forwarded = iter(rows[:n_fwd])  # in the order of `forwarded_rows`
    pick_from = {"cap": kcaps, "laned": klaned_lane, "intensive": intensive_lane,
                 "extensive": rows[n_fwd:], **(recomputed or {})}
    return [next(forwarded) if k == "row" else pick_from[k][i] for k, i in split.kinds]


def forwarded_rows(split: LoopSplit, known_xs: list) -> list:
    return [known_xs[i] for k, i in split.kinds if k == "row"]


def pick(values: Sequence[Any], mask: Sequence[bool], want: bool = True) -> list:
    return [v for v, m in zip(values, mask) if m == want]


def with_zeros(nonzero: Sequence[bool], values: Sequence[Any], types: Sequence[Type]) -> list:
    """`values` where `nonzero`, and elsewhere the symbolic zero of that position's type."""
    it = iter(values)
    return [next(it) if nz else Zero(t) for nz, t in zip(nonzero, types)]


def merge(mask: Sequence[bool], if_true: Sequence[Any], if_false: Sequence[Any]) -> list:
    """Interleave two lists back into one by `mask`."""
    t, f = iter(if_true), iter(if_false)
    return [next(t) if m else next(f) for m in mask]


# ------------------------------------------------------------- user-facing checks


