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
    the check is repeatable) and compares, per float output leaf, the jvp
    along v with (f(x + eps v) - f(x - eps v)) / (2 eps); for reverse mode it
    compares <pullback(u), v> with <u, that difference> for a fixed u.

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
    floats_out = [np.asarray(o).dtype.kind == "f" for o in out_leaves]
    u = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) if fl else
         np.zeros(np.shape(o), np.asarray(o).dtype) for o, fl in zip(out_leaves, floats_out)]
    cts = None
    if "rev" in modes:
        _, pullback = vjp(lambda *a: tree.unflatten(out_tree, tree.flatten(f(*a))[0]), *args)
        cts = tree.flatten(pullback(tree.unflatten(out_tree, u)))[0]
    for i, (x, path) in enumerate(zip(leaves, paths)):
        if x.dtype.kind != "f":
            continue
        v = rng.standard_normal(x.shape).astype(x.dtype)
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
            lhs = np.vdot(np.asarray(cts[i], np.float64), v.astype(np.float64))
            rhs = sum(np.vdot(ui.astype(np.float64), np.asarray(d, np.float64))
                      for ui, d, fl in zip(u, fd, floats_out) if fl)
            _compare("vjp", "<pullback(u), v> against <u, df·v>", where, lhs, rhs, rtol, eps)


def _central_difference(f, leaves, in_tree, i, v, eps) -> list:
    def at(sign):
        moved = [y + sign * eps * v if j == i else y for j, y in enumerate(leaves)]
        return [np.asarray(o, np.float64) for o in tree.flatten(f(*tree.unflatten(
            in_tree, moved)))[0]]

    return [(a - b) / (2 * eps) for a, b in zip(at(1), at(-1))]


def _compare(mode: str, what: str, where: str, ad: Any, fd: Any, rtol: float, eps: float):
    ad, fd = np.asarray(ad, np.float64), np.asarray(fd, np.float64)
    err = np.max(np.abs(ad - fd), initial=0.0)
    scale = max(np.max(np.abs(ad), initial=0.0), np.max(np.abs(fd), initial=0.0))
    if not err <= rtol * (scale + eps):  # also fails on NaN
        raise GradCheckError(
            f"check_grads ({mode}): {what} for {where}: derivative {_show(ad)} but central "
            f"differences give {_show(fd)} (max error {err:.3g}, rtol {rtol})")


def _show(x: Any) -> str:
    return np.array2string(np.asarray(x), precision=6, threshold=8)
