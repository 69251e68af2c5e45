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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .. import tree
from ..ir import Region, Type
from ..passes.partial_eval import partial_eval_region
from ..trace import type_of_value


def fixpoint(init: Sequence[bool], step: Callable[[list[bool]], list[bool]]) -> list[bool]:
    """The least mask above `init` closed under `step` (which carries are nonzero,
    batched, unknown): iterate until an iteration adds nothing."""
    mask = list(init)
    while True:
        new = [a or b for a, b in zip(mask, step(mask))]
        if new == mask:
            return mask
        mask = new


# ------------------------------------------------------------- outside jit


def native_when_eager(prim, interpret: Callable) -> Callable:
    """A loop's impl: called outside jit, the loop runs as compiled code (cached per
    program); with RUNE_JIT_BACKEND=interpret, `interpret` runs it (the oracle)."""
    from .. import config

    def impl(*args, **params):
        if config.backend == "interpret":
            return interpret(*args, **params)
        from ..backend.runtime import run_eqn

        return run_eqn(prim, args, params)

    return impl


# ------------------------------------------------------------- lanes


def per_lane(t: Type, lanes: tuple) -> Type:
    return t.with_shape(t.shape[len(lanes):])


def eval_lanes(region: Region, shared: list, laned: list, lanes: tuple) -> tuple[list, list]:
    """Evaluate a per-lane region on every lane; -> (outputs, which lead with lanes).

    The lanes are flattened into one and the region is evaluated batched, so the
    interpreter runs it vectorized; an output no lane changes stays shared.
    """
    from ..interpret import eval_region
    from ..passes.vmap import batch_eval
    from .shape import reshape

    if not lanes:
        return eval_region(region, shared + laned), [False] * len(region.outputs)
    n = int(np.prod(lanes, dtype=np.int64))
    flat = [reshape(v, (n,) + type_of_value(v).shape[len(lanes):]) for v in laned]
    outs, dims = batch_eval(region, n, shared + flat, [None] * len(shared) + [0] * len(flat))
    return ([reshape(o, lanes + type_of_value(o).shape[1:]) if d is not None else o
             for o, d in zip(outs, dims)], [d is not None for d in dims])


def spread(x: Any, lanes: tuple) -> Any:
    """A shared value given the lane axes in front."""
    from .shape import broadcast_in_dim

    t = type_of_value(x)
    return broadcast_in_dim(x, lanes + t.shape, tuple(range(len(lanes), len(lanes) + t.ndim)))


def held(active: Any, new: Any, old: Any) -> Any:
    """new in the lanes that run, old in the lanes that are done (lanes lead)."""
    from .elementwise import select
    from .shape import broadcast_in_dim

    shape = type_of_value(new).shape
    mask = broadcast_in_dim(active, shape, tuple(range(type_of_value(active).ndim)))
    return select(mask, new, old)


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
    ny = len(step.outputs) - num_carry
    consts = unk_caps + unk_laned

    def pe(unk_carry):
        return partial_eval_region(step, consts + unk_carry + unk_xs, unk_carry + [False] * ny)

    unk_carry = fixpoint(unk_init, lambda m: pe(m).out_unknowns[:num_carry])
    split = pe(unk_carry)
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


def residual_args(split: LoopSplit, h: Hoisted, kcaps: list, klaned_lane: list,
                  intensive_lane: list, rows: list) -> list:
    """The unknown step's residuals for one step of one lane. `intensive_lane` holds the
    intensive values as the step sees them (shared ones whole, laned ones per lane);
    `rows` holds this step's rows of the forwarded inputs, then of the tapes."""
    n_fwd = sum(1 for k, _ in split.kinds if k == "row")
    forwarded = iter(rows[:n_fwd])  # in the order of `forwarded_rows`
    pick_from = {"cap": kcaps, "laned": klaned_lane, "intensive": intensive_lane,
                 "extensive": rows[n_fwd:]}
    return [next(forwarded) if k == "row" else pick_from[k][i] for k, i in split.kinds]


def forwarded_rows(split: LoopSplit, known_xs: list) -> list:
    return [known_xs[i] for k, i in split.kinds if k == "row"]


def pick(values: Sequence[Any], mask: Sequence[bool], want: bool = True) -> list:
    return [v for v, m in zip(values, mask) if m == want]


def merge(mask: Sequence[bool], if_true: Sequence[Any], if_false: Sequence[Any]) -> list:
    """Interleave two lists back into one by `mask`."""
    t, f = iter(if_true), iter(if_false)
    return [next(t) if m else next(f) for m in mask]


# ------------------------------------------------------------- user-facing checks


def check_carry(who: str, init_tree: tree.TreeDef, init_types: list[Type],
                out_tree: tree.TreeDef, out_types: list[Type]) -> None:
    """The carry a step returns must have init's structure, shapes and dtypes."""
    if out_tree != init_tree:
        raise TypeError(f"{who}: the step returns a carry of structure {out_tree}, "
                        f"but init has structure {init_tree}")
    for path, a, b in zip(tree.leaf_paths(init_tree), init_types, out_types):
        if a != b:
            raise TypeError(f"{who}: the step returns carry{path} of type {b}, but "
                            f"init{path} has type {a}")


def promotable(init_types: list[Type], weak: list[bool], out_types: list[Type]) -> bool:
    """A carry given as a Python number takes the dtype its step returns (as in JAX)."""
    return all(a == b or (w and a.shape == b.shape) for a, b, w in
               zip(init_types, out_types, weak)) and init_types != out_types


def lane_index(flat: int, lanes: tuple[int, ...]) -> tuple[int, ...] | None:
    return tuple(int(i) for i in np.unravel_index(flat, lanes)) if lanes else None
