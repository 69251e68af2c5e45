"""What scan and iterate share: carry fixpoints, residual sorting, pytree checks.

A loop's step, closed, takes (captures..., [active], carries..., rows...) and
returns (carries..., ys...). Captures are loop-invariant; `active` is the
per-lane mask of a counted scan (see ops/scan.py); rows are per-step inputs.

Reverse mode splits the step (partial evaluation) into a known step and an
unknown one, and sorts the residuals that pass between them (rule 3):

- *forwarded*: a residual that is a known capture or a known row is read from
  there by the unknown loop and never saved;
- *intensive*: a residual computed from captures alone does not change across
  steps: it is computed once, before the loop (hoisted);
- *extensive*: any other residual is saved once per step, stacked like ys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .. import tree
from ..ir import Region, Type
from ..passes.partial_eval import partial_eval_region


def fixpoint(init: Sequence[bool], step: Callable[[list[bool]], list[bool]]) -> list[bool]:
    """The least mask above `init` closed under `step` (which carries are nonzero,
    batched, unknown): iterate until an iteration adds nothing."""
    mask = list(init)
    while True:
        new = [a or b for a, b in zip(mask, step(mask))]
        if new == mask:
            return mask
        mask = new


@dataclass
class LoopSplit:
    """A loop step split for reverse mode, its residuals sorted."""

    hoisted: Region  # known captures -> (intensive residuals, loop-invariant values)
    known_step: Region  # (invariants, [active], known carries, known rows)
    #                     -> (known carries, known ys, extensive residuals)
    unknown_step: Region  # (residuals, unknown captures, [active], unknown carries,
    #                        unknown rows) -> (unknown carries, unknown ys)
    kinds: list[tuple[str, int]]  # per residual: ("cap"|"row"|"intensive"|"extensive", index)
    unk_carry: list[bool]
    unk_ys: list[bool]
    num_intensive: int
    num_extensive: int


def split_loop(step: Region, n_caps: int, n_active: int, num_carry: int,
               unk_caps: list[bool], unk_init: list[bool], unk_xs: list[bool]) -> LoopSplit:
    ny = len(step.outputs) - num_carry
    active = [False] * n_active

    def pe(unk_carry):
        return partial_eval_region(step, unk_caps + active + unk_carry + unk_xs,
                                   unk_carry + [False] * ny)

    unk_carry = fixpoint(unk_init, lambda m: pe(m).out_unknowns[:num_carry])
    split = pe(unk_carry)
    known = split.known
    n_kcaps = unk_caps.count(False)
    n_kstate = n_kcaps + n_active + unk_carry.count(False)
    n_kout = len(known.outputs) - split.num_res
    kinds: list[tuple[str, int]] = []
    computed = []
    for j, src in enumerate(split.res_inputs):
        if src is not None and src < n_kcaps:
            kinds.append(("cap", src))
        elif src is not None and src >= n_kstate:
            kinds.append(("row", src - n_kstate))
        elif src is not None and src < n_kcaps + n_active:
            kinds.append(("active", 0))
        else:
            kinds.append(("computed", len(computed)))
            computed.append(known.outputs[n_kout + j])
    body = Region(known.params, known.eqns, known.outputs[:n_kout] + tuple(computed))
    n_loop = len(known.params) - n_kcaps
    split2 = partial_eval_region(body, [False] * n_kcaps + [True] * n_loop,
                                 [True] * n_kout + [False] * len(computed))
    varies = split2.out_unknowns[n_kout:]
    where = {}
    for c, v in enumerate(varies):
        where[c] = ("extensive" if v else "intensive",
                    sum(varies[:c]) if v else c - sum(varies[:c]))
    kinds = [where[i] if k == "computed" else (k, i) for k, i in kinds]
    return LoopSplit(split2.known, split2.unknown, split.unknown, kinds, unk_carry,
                     split.out_unknowns[num_carry:], len(varies) - sum(varies), sum(varies))


def residual_args(split: LoopSplit, known_caps: list, intensive: list, active: Any,
                  rows: list) -> list:
    """The unknown step's residual arguments for one step; `rows` holds this step's
    rows of the forwarded inputs and then of the extensive tapes."""
    n_fwd = sum(1 for k, _ in split.kinds if k == "row")
    fwd, ext = rows[:n_fwd], rows[n_fwd:]
    pick = {"cap": known_caps, "intensive": intensive, "row": fwd, "extensive": ext}
    return [active if k == "active" else pick[k][i] for k, i in split.kinds]


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
    paths = [p for p, _ in tree.flatten_with_path(tree.unflatten(init_tree, init_types))[0]]
    for path, a, b in zip(paths, init_types, out_types):
        if a != b:
            raise TypeError(f"{who}: the step returns carry{path} of type {b}, but "
                            f"init{path} has type {a}")


def promotable(init_types: list[Type], weak: list[bool], out_types: list[Type]) -> bool:
    """A carry given as a Python number takes the dtype its step returns (as in JAX)."""
    return all(a == b or (w and a.shape == b.shape) for a, b, w in
               zip(init_types, out_types, weak)) and init_types != out_types


def lane_index(flat: int, lanes: tuple[int, ...]) -> tuple[int, ...] | None:
    return tuple(int(i) for i in np.unravel_index(flat, lanes)) if lanes else None
