"""The online checkpointing schedule of `iterate(..., checkpoints=k)`: for a loop whose
number of steps n is known only once it stops, in k slots (and a scratch one).

Forward (thinning): the loop keeps the carries at the multiples of a stride s, a power
of two from 1, in the first kf = k - k // 2 slots; when step kf * s comes (every slot
full), s doubles and the snapshots off the new stride are dropped, their slots freed.
When the loop stops, it holds the carries at 0, s, 2 s, ... < n, s the least power of
two with kf * s >= n.

Reverse (bisection): step i (from n - 1 down to 0) is reversed by freeing the slots of
steps above i, loading the snapshot at p, the greatest step held (<= i), and advancing
to i, keeping on the way the carries at the bisection points m1 = p + (i + 1 - p) // 2,
m2 = m1 + (i + 1 - m1) // 2, ... (those before i) in free slots while one is free. That
is a binary treeverse of each stride: reversing L steps from one snapshot costs
P(L) = sum of popcount(o) for o < L advances ((L / 2) log2 L for L a power of two),
when no bisection lacks a slot (`enough_slots`). The gradient then evaluates the step

    n + A(n, k) + n times,   A(n, k) = (n // s) P(s) + P(n % s)

(forward, advances, the reversed steps). `simulate` runs the same rules on step
numbers, the reference the compiled loops are tested against.
"""

from __future__ import annotations


def forward_slots(k: int) -> int:
    """kf: the slots the forward sweep keeps its strided snapshots in."""
    return k - k // 2


def stride(n: int, k: int) -> int:
    """s: the stride of the snapshots when a loop of n steps stops.

    >>> stride(10, 4), stride(100, 64)
    (8, 4)
    """
    s = 1
    while forward_slots(k) * s < n:
        s *= 2
    return s


def popcounts(length: int) -> int:
    """P(L) = the number of one bits in 0, 1, ..., L - 1: the advances that reverse L
    steps from one snapshot by bisection.

    >>> popcounts(8), popcounts(5)
    (12, 5)
    """
    return sum(bin(o).count("1") for o in range(length))


def advances(n: int, k: int) -> int:
    """A(n, k): the advances the reverse sweep makes when no bisection lacks a slot.

    >>> advances(100, 64), advances(1000, 8)
    (100, 3956)
    """
    s = stride(n, k)
    return (n // s) * popcounts(s) + popcounts(n % s)


def enough_slots(n: int, k: int) -> bool:
    """Whether `advances(n, k)` is exact: the k // 2 slots the forward sweep leaves
    free hold the bisection points of a stride (log2 s of them at most)."""
    return stride(n, k).bit_length() - 1 <= k // 2


def simulate(n: int, k: int) -> tuple[int, int]:
    """Both sweeps on step numbers; -> (advances, the most slots held at once). Checks
    that every load finds the carry it needs."""
    kf, pos, s = forward_slots(k), [-1] * k, 1
    held = 0
    for t in range(n):
        if t == kf * s:
            s *= 2
            pos = [p if p % s == 0 else -1 for p in pos]
        if t % s == 0:
            pos[pos.index(-1)] = t
        held = max(held, k - pos.count(-1))
    made = 0
    for i in range(n - 1, -1, -1):
        pos = [-1 if p > i else p for p in pos]
        q = max(pos)
        assert q >= 0
        nxt = q + (i + 1 - q) // 2
        while q < i:
            q, made = q + 1, made + 1
            if q == nxt:
                if q < i and -1 in pos:
                    pos[pos.index(-1)] = q
                nxt = q + (i + 1 - q) // 2
        held = max(held, k - pos.count(-1))
    return made, held
