"""The binomial checkpointing schedule (Revolve: Griewank & Walther 2000), as tables.

Reversing n steps of a loop while holding at most k carries at once (snapshots),
the fewest evaluations of the step that reach every step's carry again, in reverse
order, is (Griewank 1992)

    t(n, k) = r n - C(k + r, k + 1),   r the least integer with C(k + r, k) >= n,

counting the *advances* (evaluations whose carry is kept) and not the n evaluations
that each reverse step makes of its own step. The schedule comes from the recursion:
to reverse steps [a, b) from the carry at a, in a snapshot, with c snapshots, advance to
an optimal m and keep the carry at m in a free snapshot, reverse [m, b) with c - 1, then
[a, m) with c; with one snapshot, advance from a to each step in turn.

The schedule is computed here, in Python, once per trace; loops in the program run it
from `Schedule`'s tables. Its first sweep (from step 0 forward, keeping snapshots on the
way, to step n - 1) is the forward pass of the loop itself, so the reverse pass makes
t(n, k) - (n - 1) advances, and n evaluations of a step to reverse it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np


def repetitions(n: int, k: int) -> int:
    """The least r with C(k + r, k) >= n: how often the most-advanced step is advanced."""
    r = 0
    while math.comb(k + r, k) < n:
        r += 1
    return r


def advances(n: int, k: int) -> int:
    """t(n, k): the fewest advances that reverse n steps with k snapshots (k >= 1).

    >>> advances(10, 1), advances(10, 2), advances(10, 9)
    (45, 20, 9)
    """
    if k == 1:  # r = n - 1: a closed form, not a loop of n
        return n * (n - 1) // 2
    r = repetitions(n, k)
    return r * n - math.comb(k + r, k + 1)


@functools.lru_cache(maxsize=None)
def split(n: int, k: int) -> int:
    """The offset m (0 < m < n) at which reversing n steps with k >= 2 snapshots keeps its
    next snapshot: one minimizing m + t(m, k) + t(n - m, k - 1), a convex function of m,
    so a binary search finds where it stops decreasing."""
    cost = lambda m: m + advances(m, k) + advances(n - m, k - 1)  # noqa: E731
    lo, hi = 1, n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cost(mid + 1) < cost(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


@dataclass
class Schedule:
    """The tables of a schedule of n steps and k snapshots in k + 1 slots (slot k: the
    scratch slot, which every advance that keeps nothing writes).

    forward[i]: the slot the forward pass writes the carry at step i to.
    The reverse pass reverses step i (from n - 1 down to 0) by: loading slot `load[i]`,
    the carry at step `start[i]`; advancing to step i, and each time the carry reaches
    step `stored_at[j]` (j from `first_store[i]` on), writing it to slot `stored_in[j]`;
    then evaluating step i and its transpose. (`stored_at` ends with -1, reached by no
    step.)"""

    n: int
    k: int
    forward: np.ndarray
    load: np.ndarray
    start: np.ndarray
    first_store: np.ndarray
    stored_at: np.ndarray
    stored_in: np.ndarray

    def reverse_advances(self) -> int:
        """The advances the reverse pass makes: t(n, k) - (n - 1)."""
        return int(np.sum(np.arange(self.n) - self.start))


def schedule(n: int, k: int) -> Schedule:
    """The binomial schedule of n >= 1 steps with 1 <= k snapshots.

    >>> s = schedule(4, 2)
    >>> s.forward.tolist(), s.start.tolist(), s.reverse_advances() == advances(4, 2) - 3
    ([0, 1, 2, 2], [0, 1, 1, 3], True)
    """
    if not 1 <= k < n:
        raise ValueError(f"schedule: needs 1 <= k < n, got n = {n}, k = {k}")
    forward = np.full(n, k, np.int64)
    forward[0] = 0
    load, start, first = (np.zeros(n, np.int64) for _ in range(3))
    stores: list[tuple[int, int]] = []
    turns: list[int] = []  # the steps reversed so far, in order
    group = {"load": 0, "start": 0, "first": 0}

    def begin(slot: int, at: int) -> None:
        group.update(load=slot, start=at, first=len(stores))

    def turn(i: int) -> None:
        if not turns:  # the forward pass's own sweep: it keeps the carry at n - 1
            group.update(load=forward[i], start=i, first=len(stores))
        load[i], start[i], first[i] = group["load"], group["start"], group["first"]
        turns.append(i)

    def store(at: int, slot: int) -> None:
        if turns:
            stores.append((at, slot))
        else:
            forward[at] = slot

    def linear(a: int, b: int, slot: int, current: bool) -> None:
        # one snapshot: from the carry at a to each step in turn, the last first
        for i in range(b - 1, a - 1, -1):
            if not current:
                begin(slot, a)
            turn(i)
            current = False

    # the recursion, with a stack of its own (k levels deep): ("reverse", a, b, c, slot,
    # current) reverses steps [a, b) from the carry at a, in `slot` (and in hand if
    # `current`), with c snapshots; ("free", s) gives slot s back
    free = list(range(k - 1, 0, -1))
    tasks: list[tuple] = [("reverse", 0, n, k, 0, True)]
    while tasks:
        task = tasks.pop()
        if task[0] == "free":
            free.append(task[1])
            continue
        _, a, b, c, slot, current = task
        if b - a == 1 or c == 1:
            linear(a, b, slot, current)
            continue
        m = a + split(b - a, c)
        if not current:
            begin(slot, a)
        s = free.pop()
        store(m, s)
        tasks += [("reverse", a, m, c, slot, False), ("free", s),
                  ("reverse", m, b, c - 1, s, True)]
    stores.append((-1, k))
    at, slots = (np.array(v, np.int64) for v in zip(*stores))
    return Schedule(n, k, forward, load, start, first, at, slots)
