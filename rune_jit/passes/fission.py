"""Scan fission: the part of a step that does not read the carry leaves the loop.

In `c' = c * 0.999999 + sin(x)` only the multiply-add is a recurrence; `sin(x)`
can be computed for every row at once, vectorized, before the loop. Fission
splits each scan's step by partial evaluation with the carries unknown: the
known part (captures and rows only) runs as a map over all rows (the step's
vmap along the scan axis), and the loop keeps the rest, reading the map's
results as rows. Results are the same values computed in another order (a
transcendental may round differently vectorized: see docs/accuracy.md).
"""

from __future__ import annotations

from ..interpret import eval_region
from ..ir import Literal, Region, map_regions
from ..trace import bind, trace_flat
from .partial_eval import partial_eval_region
from .vmap import batch_eval, materialize

# Work worth a map: a loop overlaps cheap arithmetic that does not read the carry with
# the recurrence for free, but a transcendental call or a product is best vectorized.
COSTLY = frozenset({"sin", "cos", "tan", "exp", "expm1", "log", "log1p", "tanh", "sinh",
                    "cosh", "arctan", "arctan2", "pow", "dot_general", "solve", "reduce_sum",
                    "reduce_prod", "reduce_max", "reduce_min"})


def fission(region: Region) -> Region:
    """`region` (closed) with every scan in it, nested ones too, split where it pays."""
    return trace_flat(lambda *args: _run(region, list(args)), region.in_types)


def _run(region: Region, args: list) -> list:
    from ..ops.scan import scan_p

    env = dict(zip(region.params, args))

    def read(a):
        return a.value if isinstance(a, Literal) else env[a]

    for eqn in region.eqns:
        ins, params = eqn.closed
        vals = [read(a) for a in ins]
        params = map_regions(params, fission)
        if eqn.prim is scan_p and not params["counted"] and params["length"] > 0:
            outs = _split_scan(vals, params)
        else:
            outs = bind(eqn.prim, *vals, **params)
        env.update(zip(eqn.outputs, outs))
    return [read(o) for o in region.outputs]


def _worth_it(step: Region, known: Region) -> bool:
    """Costly work to map, in a step that does not recompute on purpose (remat)."""
    return (any(e.prim.name in COSTLY for e in known.eqns)
            and not any(e.prim.name == "remat" for e in step.eqns))


def _split_scan(vals: list, params: dict) -> list:
    from ..ops.loops import merge, pick
    from ..ops.scan import Layout, scan_flat, scan_p

    lay = Layout(len(vals), params)
    caps, _, _, init, xs = lay.operands(vals)
    step, nc, n = params["step"], lay.nc, params["length"]
    ny = len(step.outputs) - nc
    # loop-invariant code motion: what the step computes from captures alone is computed
    # once, here, and the loop captures the results instead
    hoist = partial_eval_region(step, [False] * lay.k + [True] * (nc + lay.nx), True,
                                custom_rules=False)
    if hoist.known.eqns:
        caps, step = eval_region(hoist.known, caps), hoist.unknown
        params = {**params, "step": step, "num_captures": len(caps)}
        vals = caps + init + xs
    split = partial_eval_region(step, [False] * len(caps) + [True] * nc + [False] * lay.nx,
                                [True] * nc + [False] * ny, custom_rules=False)
    if not _worth_it(step, split.known):
        return bind(scan_p, *vals, **params)
    mapped, dims = batch_eval(split.known, n, caps + xs, [None] * len(caps) + [0] * lay.nx)
    n_known = len(split.known.outputs) - split.num_res
    known_ys = [materialize(v, d, n) for v, d in zip(mapped[:n_known], dims[:n_known])]
    res, res_dims = mapped[n_known:], dims[n_known:]
    per_row = [d is not None for d in res_dims]
    invariant = pick(res, per_row, False)

    def step_fn(lan, carry, rows):
        outs = eval_region(split.unknown, merge(per_row, rows, invariant) + carry)
        return outs[:nc], outs[nc:]

    outs = scan_flat(step_fn, init, pick(res, per_row), length=n, reverse=params["reverse"])
    return outs[:nc] + merge(split.out_unknowns[nc:], outs[nc:], known_ys)
