"""What the loop tests share: queries on the IR, plain Python reference loops, and the
three paths a program runs on.

The references run on NumPy alone, one step at a time, so that they are
independent of rune_jit's tracing, transformations and interpreter.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit import tree
from rune_jit._src.ir import Eqn, Region

# the NumPy interpreter, eager calls (loops compiled one by one), and jit
PATHS = ["interpret", "eager", "jit"]


def on(path: str, f: Callable, monkeypatch) -> Callable:
    """`f` as `path` runs it."""
    if path == "interpret":
        monkeypatch.setattr(config, "backend", "interpret")
    return rune.jit(f) if path == "jit" else f


# ------------------------------------------------------------- the IR


def walk(region: Region) -> Iterator[Eqn]:
    """Every equation of `region` and of the regions nested in it."""
    for eqn in region.eqns:
        yield eqn
        for r in eqn.regions:
            yield from walk(r)


def top(region: Region, prim: str) -> list[Eqn]:
    """The equations of `region` itself (not nested) that apply `prim`."""
    return [e for e in region.eqns if e.prim.name == prim]


def prims(region: Region) -> set[str]:
    return {e.prim.name for e in walk(region)}


def scan_parts(eqn: Eqn) -> tuple[list, list]:
    """A scan's (init, xs) operands as written (captures are not operands)."""
    lead = int(eqn.params["counted"])
    nc = eqn.params["num_carry"]
    return list(eqn.inputs[lead:lead + nc]), list(eqn.inputs[lead + nc:])


def scan_ys(eqn: Eqn) -> list:
    return list(eqn.outputs[eqn.params["num_carry"]:])


def forward_and_reverse(region: Region) -> tuple[Eqn, Eqn]:
    """The two top-level scans of a gradient: the forward loop, then its transpose."""
    scans = top(region, "scan")
    assert len(scans) == 2, f"expected a forward and a reverse scan:\n{region}"
    return scans[0], scans[1]


# ------------------------------------------------------------- reference loops


def np_scan(step: Callable, init: Any, xs: Any, length: int | None = None,
            reverse: bool = False) -> tuple[Any, Any]:
    """scan's meaning as a Python loop over pytrees; ys of no rows is None."""
    leaves, treedef = tree.flatten(xs)
    if length is None:
        length = len(leaves[0])
    carry, ys = init, [None] * length
    for i in (reversed(range(length)) if reverse else range(length)):
        carry, ys[i] = step(carry, tree.unflatten(treedef, [x[i] for x in leaves]))
    return carry, stack(ys)


def stack(trees: list) -> Any:
    """A list of equally shaped pytrees as one pytree of stacked leaves."""
    if not trees:
        return None
    return tree.tree_map(lambda *leaves: np.stack(leaves), *trees)


def np_iterate(step: Callable, init: Any, until: Callable, max_steps: int) -> tuple[Any, int]:
    """iterate's meaning: (final carry, steps taken); None steps if it runs out."""
    carry, n = init, 0
    while not until(carry):
        if n == max_steps:
            return carry, None
        carry, n = step(carry), n + 1
    return carry, n


def lanes(f: Callable, *batched: Any) -> Any:
    """f applied lane by lane to the leading axis of every (pytree) argument, results
    stacked: what vmap(f) means."""
    flat = [tree.flatten(b) for b in batched]
    size = len(flat[0][0][0])
    per_lane = [f(*[tree.unflatten(td, [x[i] for x in leaves]) for leaves, td in flat])
                for i in range(size)]
    return stack(per_lane)


def assert_trees_close(got: Any, want: Any, rtol: float = 1e-12, atol: float = 0.0) -> None:
    """Same structure, same dtypes and shapes, values within rtol."""
    g_leaves, g_tree = tree.flatten(got)
    w_leaves, w_tree = tree.flatten(want)
    assert g_tree == w_tree, f"structure {g_tree}, expected {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (
            f"{g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}")
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def central_difference(f: Callable, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """The Jacobian of f at x by central differences, one column per element of x."""
    x = np.asarray(x, np.float64)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x)) + x.shape)


def cg(matvec, b, tol=1e-26):
    """Conjugate gradients written with iterate (a user's linear solver for root's
    linear_solve); x and the number of steps it took."""
    def step(c):
        x, r, p, rr, k = c
        ap = matvec(p)
        alpha = rr / rnp.vdot(p, ap)
        x, r = x + alpha * p, r - alpha * ap
        rr_new = rnp.vdot(r, r)
        return x, r, r + (rr_new / rr) * p, rr_new, k + 1

    init = (rnp.zeros_like(b), b, b, rnp.vdot(b, b), 0)
    x, _, _, _, k = rune.iterate(step, init, until=lambda c: c[3] < tol, max_steps=50)
    return x, k


def cg_x(matvec, b):
    return cg(matvec, b)[0]


def richardson(matvec, b):
    """x += (b - A x) / 4 until A x = b: any A with eigenvalues in (0, 8)."""
    return rune.iterate(lambda x: x + 0.25 * (b - matvec(x)), rnp.zeros_like(b),
                        until=lambda x: rnp.max(rnp.abs(matvec(x) - b)) < 1e-14,
                        max_steps=500)


def float_bytes(region: Region) -> list[int]:
    """The size of every float array an IR program (and the loops in it) makes."""
    sizes = []
    for eqn in region.eqns:
        sizes += [o.type.nbytes for o in eqn.outputs if o.type.dtype.kind == "f"]
        for r in eqn.regions:
            sizes += float_bytes(r)
    return sizes


@rune.custom_vjp
def squash(x):
    """tanh, with a custom vjp that saves its result: for custom_vjp in loop steps."""
    return rnp.tanh(x)


squash.defvjp(lambda x: (rnp.tanh(x), rnp.tanh(x)), lambda t, g: (g * (1.0 - t * t),))
