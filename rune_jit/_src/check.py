"""check_grads: derivatives against central differences along fixed directions."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import tree
from .api import jvp, vjp
from .call.arguments import as_value, flatten_args
from .errors import GradCheckError
from .trace import Tracer
from .tracebacks import api_boundary


@api_boundary
def check_grads(f: Callable, *args: Any, eps: float = 1e-4, rtol: float = 1e-2,
                modes: Sequence[str] = ("fwd", "rev")) -> None:
    """Raise GradCheckError unless jvp and vjp of f agree with finite differences.

    For every float leaf of the arguments it draws one direction v (seeded, so
    the check is repeatable; a complex leaf has two, along its real and its imaginary
    parts) and compares, per float output leaf, the jvp
    along v with (f(x + eps v) - f(x - eps v)) / (2 eps); for reverse mode it
    compares <pullback(u), v> with <u, that difference> for a fixed u, where
    <a, b> = Re(sum(a * b)) (JAX's convention for complex values: docs/semantics.md).

    >>> rune.check_grads(lambda x: rnp.sin(x) * x, np.array([0.5, 1.0]))  # passes: None
    >>> rune.check_grads(lambda x: rune.stop_gradient(x) * x, np.array([0.5, 1.0]))
    Traceback (most recent call last):
    ...
    rune_jit.errors.GradCheckError: ...
    """
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and 'rev'")
    leaves, in_tree, paths = flatten_args(args, "args")
    if any(isinstance(x, Tracer) for x in leaves):
        raise TypeError("check_grads needs concrete arguments, not traced values")
    leaves = [np.asarray(as_value(x)) for x in leaves]
    rng = np.random.default_rng(0)
    out_leaves, out_tree = tree.flatten(f(*tree.unflatten(in_tree, leaves)))
    out_paths = tree.leaf_paths(out_tree)
    floats_out = [np.asarray(o).dtype.kind in "fc" for o in out_leaves]
    u = [_draw(rng, np.asarray(o)) if fl else np.zeros(np.shape(o), np.asarray(o).dtype)
         for o, fl in zip(out_leaves, floats_out)]
    cts = None
    if "rev" in modes:
        _, pullback = vjp(lambda *a: tree.unflatten(out_tree, tree.flatten(f(*a))[0]), *args)
        cts = tree.flatten(pullback(tree.unflatten(out_tree, u)))[0]
    for i, (x, path) in enumerate(zip(leaves, paths)):
        for v in _directions(rng, x):
            fd = _central_difference(f, leaves, in_tree, i, v, eps)
            where = f"argument {path}, direction v = {_show(v)}"
            if "fwd" in modes:
                tangents = [v if j == i else np.zeros_like(y) for j, y in enumerate(leaves)]
                _, tan = jvp(f, tuple(tree.unflatten(in_tree, leaves)),
                             tuple(tree.unflatten(in_tree, tangents)))
                for op, a, b, fl in zip(out_paths, tree.flatten(tan)[0], fd, floats_out):
                    if fl:
                        _compare("jvp", f"output{op}", where, a, b, rtol, eps)
            if "rev" in modes:
                lhs = _pairing(cts[i], v)
                rhs = sum(_pairing(ui, d) for ui, d, fl in zip(u, fd, floats_out) if fl)
                _compare("vjp", "<pullback(u), v> against <u, df·v>", where, lhs, rhs, rtol,
                         eps)


def _draw(rng: np.random.Generator, like: np.ndarray) -> np.ndarray:
    """A seeded random array of `like`'s shape and dtype (complex: both parts random)."""
    v = rng.standard_normal(like.shape)
    if like.dtype.kind == "c":
        v = v + 1j * rng.standard_normal(like.shape)
    return v.astype(like.dtype)


def _directions(rng: np.random.Generator, x: np.ndarray) -> list[np.ndarray]:
    """The directions x is checked along: one for a float x; for a complex x one along
    the real parts and one along the imaginary parts (a function of z that is not
    holomorphic differs along them); none for an integer or bool x."""
    if x.dtype.kind == "f":
        return [rng.standard_normal(x.shape).astype(x.dtype)]
    if x.dtype.kind == "c":
        return [(rng.standard_normal(x.shape) * k).astype(x.dtype) for k in (1, 1j)]
    return []


def _wide(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _pairing(a: Any, b: Any) -> float:
    """Re(sum(a * b)): the pairing under which rune_jit's (and JAX's) pullback is the
    transpose of the jvp, complex values included (no conjugation)."""
    return float(np.real(np.sum(_wide(a) * _wide(b))))


def _central_difference(f, leaves, in_tree, i, v, eps) -> list:
    def at(sign):
        moved = [y + sign * eps * v if j == i else y for j, y in enumerate(leaves)]
        return [_wide(o) for o in tree.flatten(f(*tree.unflatten(in_tree, moved)))[0]]

    return [(a - b) / (2 * eps) for a, b in zip(at(1), at(-1))]


def _compare(mode: str, what: str, where: str, ad: Any, fd: Any, rtol: float, eps: float):
    ad, fd = _wide(ad), _wide(fd)
    err = np.max(np.abs(ad - fd), initial=0.0)
    scale = max(np.max(np.abs(ad), initial=0.0), np.max(np.abs(fd), initial=0.0))
    if not err <= rtol * (scale + eps):  # also fails on NaN
        raise GradCheckError(
            f"check_grads ({mode}): {what} for {where}: derivative {_show(ad)} but central "
            f"differences give {_show(fd)} (max error {err:.3g}, rtol {rtol})")


def _show(x: Any) -> str:
    return np.array2string(np.asarray(x), precision=6, threshold=8)
