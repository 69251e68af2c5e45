"""Which values of a region lowering reads whole, every element at least once.

A lazy value is computed element by element where it is read, so what is not read is
never computed. That matters for an index_check: fused into the reads of the gather it
feeds, it checks only the indices whose elements are read, which is every index only
when the gather is read whole (`x[i] * 2` is; `x[i][:1]` is not). So the check is fused
where this analysis proves the whole read, and is a pass of its own over the indices
otherwise. Conservative: a value is whole only through the equations named here.
"""

from __future__ import annotations

from ....ir import Region, Var
from ....ops.gather import gather_p, index_check_p, scatter_p
from ....ops.linalg import dot_general_p
from ....ops.reduce import P as REDUCTIONS
from ....ops.shape import broadcast_in_dim_p, concatenate_p, reshape_p, rev_p, transpose_p
from ....ops.sort import cumulative_p, sort_p

# what lowering reads whole of each operand: a scatter, all of its indices and updates;
# these, the elements that their result's elements need, which is every element only
# when their result is read whole (a product of a few terms is lazy, as a slice is)
THROUGH = {broadcast_in_dim_p, concatenate_p, reshape_p, rev_p, transpose_p, index_check_p,
           dot_general_p, sort_p, cumulative_p, *REDUCTIONS.values()}


def read_whole(region: Region) -> set[Var]:
    """The region's values that lowering reads whole: its outputs, what a scatter reads,
    and what a value read whole is computed from (through the equations named above)."""
    whole = {o for o in region.outputs if isinstance(o, Var)}
    for eqn in reversed(region.eqns):
        if eqn.regions or any(o.type.size == 0 for o in eqn.outputs):
            continue  # (an empty result reads nothing, however large its operands)
        out_whole = all(o in whole for o in eqn.outputs)
        if eqn.prim is scatter_p:
            reads = eqn.inputs
        elif eqn.prim is gather_p:  # every index, not every element of the table
            reads = eqn.inputs[1:] if out_whole else ()
        elif "elementwise" in eqn.prim.traits or eqn.prim in THROUGH:
            reads = eqn.inputs if out_whole else ()
        else:
            reads = ()
        whole.update(a for a in reads if isinstance(a, Var))
    return whole
