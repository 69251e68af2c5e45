"""Complex values as pairs of reals: a program is rewritten before lowering so that no
lowering rule meets a complex value.

A complex value becomes its real and imaginary parts, two float values of the same shape;
the program's complex arguments and results cross its boundary as NumPy's memory of them
(`Pairs`, around the compiled code: views, no copies), their parts slices of that memory
and their results' parts written into it (`at_boundary`). Each primitive
that may meet a complex value has a rule in real arithmetic (complex_math.py); loops
(scan, iterate, cond) carry the parts in place of the value, their steps rewritten alike,
and so do remat, root, a checkpointed scan and custom derivatives' calls.

A primitive without a rule raises NotImplementedError naming it, never a wrong answer;
the interpreter (RUNE_JIT_BACKEND=interpret) computes every complex primitive.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ....dtypes import real_dtype
from ....ir import Literal, Region, Type, map_regions
from ....ops.checkpointed import checkpointed_p
from ....ops.control import cond_p
from ....ops.custom import custom_jvp_call_p, custom_vjp_call_p
from ....ops import elementwise as ew
from ....ops.iterate import iterate_p
from ....ops.remat import remat_p
from ....ops.root import root_p
from ....ops.scan import scan_p
from ....primitive import Primitive
from ....trace import bind, trace_flat, type_of_value
from .... import source_info
from .complex_math import PER_PART, RULES, Pair, from_memory, is_complex, per_part, to_memory


def holds_complex(region: Region) -> bool:
    """Whether any value of `region` (its nested regions' too) is complex."""
    def region_holds(r: Region) -> bool:
        if any(is_complex(p.type) for p in r.params):
            return True
        for eqn in r.eqns:
            if any(is_complex(v.type) for v in eqn.outputs):
                return True
            if any(region_holds(x) for x in _regions(eqn.params)):
                return True
        return any(is_complex(type_of_value(o.value)) for o in r.outputs
                   if isinstance(o, Literal))

    return region_holds(region)


def _regions(params: dict) -> list[Region]:
    found: list[Region] = []
    map_regions(params, lambda r: found.append(r) or r)
    return found


# ------------------------------------------------------------- values and types


def split_types(types: Sequence[Type]) -> list[Type]:
    """The types of the values that stand for `types`: a complex type as two real ones."""
    out = []
    for t in types:
        out += [Type(real_dtype(t.dtype), t.shape)] * 2 if is_complex(t) else [t]
    return out


def flatten(values: Sequence[Any]) -> list:
    out = []
    for v in values:
        out += [v.re, v.im] if isinstance(v, Pair) else [v]
    return out


def unflatten(flat: Sequence[Any], types: Sequence[Type]) -> list:
    it = iter(flat)
    return [Pair(next(it), next(it)) if is_complex(t) else next(it) for t in types]


def _literal(value: np.ndarray) -> Any:
    if value.dtype.kind != "c":
        return value
    return Pair(np.array(value.real), np.array(value.imag))


def to_pairs(region: Region) -> Region:
    """A closed region with complex params and outputs, as one whose complex params and
    outputs are each two real ones (real part first) and whose values are all real."""
    def run(*flat):
        return flatten(eval_pairs(region, unflatten(flat, region.in_types)))

    return trace_flat(run, split_types(region.in_types))


def interleaved_types(types: Sequence[Type]) -> list[Type]:
    """The types of a program's complex arguments and results as its compiled code takes
    and gives them: NumPy's memory of complex numbers, real and imaginary parts side by
    side, as a real array with a last axis of 2."""
    return [Type(real_dtype(t.dtype), t.shape + (2,)) if is_complex(t) else t for t in types]


def at_boundary(region: Region) -> Region:
    """`to_pairs` of a program whose complex params and outputs are interleaved
    (`interleaved_types`): the caller passes and receives NumPy's complex arrays as they
    are in memory, with no copy into parts, and the parts are read and written in place
    (slices of the last axis, fused into their uses)."""
    def run(*flat):
        args = [from_memory(x) if is_complex(t) else x for x, t in zip(flat, region.in_types)]
        outs = eval_pairs(region, args)
        return [to_memory(_parts_of(v, t)) if is_complex(t) else v
                for v, t in zip(outs, region.out_types)]

    return trace_flat(run, interleaved_types(region.in_types))


def _parts_of(z: Pair, t: Type) -> Pair:
    """z's parts in t's real dtype (complex(x, y) of float16 parts is complex64)."""
    part = real_dtype(t.dtype)
    return z if all(type_of_value(p).dtype == part for p in z) else Pair(
        *(ew.convert(p, part) for p in z))


def eval_pairs(region: Region, args: Sequence[Any]) -> list:
    """Evaluate `region` under the current builder with complex values as Pairs."""
    env = dict(zip(region.params, args))

    def read(atom):
        return _literal(atom.value) if isinstance(atom, Literal) else env[atom]

    for eqn in region.eqns:
        ins, params = eqn.closed
        with source_info.at(eqn.source):
            outs = _eqn(eqn.prim, [read(a) for a in ins], params, [v.type for v in eqn.outputs])
        env.update(zip(eqn.outputs, outs))
    return [read(o) for o in region.outputs]


def _eqn(prim: Primitive, args: list, params: dict, out_types: list[Type]) -> list:
    if prim in LOOPS:
        return _loop(prim, args, params, out_types)
    touched = any(isinstance(a, Pair) for a in args) or any(map(is_complex, out_types))
    if not touched:
        if any(map(holds_complex, _regions(params))):  # complex values inside a region
            raise _refused(prim)
        return bind(prim, *args, **params)
    if prim in PER_PART:
        return per_part(prim, args, params, out_types)
    rule = RULES.get(prim.name)
    if rule is None:
        raise _refused(prim)
    out = rule(*args, **params)
    return list(out) if isinstance(out, list) else [out]


def _refused(prim: Primitive) -> NotImplementedError:
    return NotImplementedError(
        f"rune_jit: {prim.name} of complex values has no compiled form yet; run it "
        "outside jit or with RUNE_JIT_BACKEND=interpret (the interpreter computes it)")


# ------------------------------------------------------------- loops


def _iterate_groups(params: dict) -> list:
    return [("num_captures", True), ("num_laned", True), ("num_carry", True)]


def _scan_groups(params: dict) -> list:
    return [("num_captures", True), (int(params["counted"]), False), ("num_laned", True),
            ("num_carry", True)]


def _cond_groups(params: dict) -> list:
    return [("num_captures", True), (1, False)]


def _captures_only(params: dict) -> list:
    return [("num_captures", True)]


# Each loop's closed operands, in groups: (the param that counts the group, or its fixed
# size; whether the regions take it). Operands after the groups go to the regions. Every
# region is rewritten by its own types (a custom_jvp's jvp takes tangents too).
LOOPS: dict[Primitive, Callable] = {
    iterate_p: _iterate_groups, scan_p: _scan_groups, cond_p: _cond_groups,
    remat_p: _captures_only, checkpointed_p: _captures_only,
    custom_jvp_call_p: _captures_only, custom_vjp_call_p: _captures_only,
    root_p: _captures_only}


def _loop(prim: Primitive, args: list, params: dict, out_types: list[Type]) -> list:
    """The loop with each complex operand, region param and result as its two parts."""
    new = dict(params)
    start = 0
    for count, _ in LOOPS[prim](params):
        size = params[count] if isinstance(count, str) else count
        if isinstance(count, str):
            new[count] = len(flatten(args[start:start + size]))
        start += size
    new = map_regions(new, _region_pairs)
    return unflatten(bind(prim, *flatten(args), **new), out_types)


def _region_pairs(region: Region) -> Region:
    if not holds_complex(region):
        return region
    return to_pairs(region)


# ------------------------------------------------------------- the program's boundary


class Pairs:
    """The compiled code of a program with complex arguments or results: it takes and
    gives complex arrays, and runs the code of the program rewritten into real pairs."""

    def __init__(self, region: Region, prepare: Callable):
        self.in_types, self.out_types = list(region.in_types), list(region.out_types)
        self.inner = prepare(at_boundary(region))

    def _split(self, values: Sequence[Any]) -> list:
        """Complex arguments as their memory: views, unless NumPy must convert or copy
        (another dtype, or not C-contiguous)."""
        return [np.ascontiguousarray(np.asarray(v, t.dtype)).view(real_dtype(t.dtype))
                .reshape(t.shape + (2,)) if is_complex(t) else v
                for v, t in zip(values, self.in_types)]

    def _join(self, flat: Sequence[Any]) -> list:
        return [np.asarray(v).view(t.dtype).reshape(t.shape) if is_complex(t) else v
                for v, t in zip(flat, self.out_types)]

    def run(self, values: Sequence[Any]) -> list:
        return self._join(self.inner.run(self._split(values)))

    def run_exact(self, arrays: Sequence[Any]) -> list:
        return self._join(self.inner.run_exact(self._split(arrays)))

    def record(self) -> None:
        return None  # the boundary is Python's: not a program a saved file can hold

    def entry(self, slow: Callable, weak: int = 0, plan: Any = None) -> None:
        return None
