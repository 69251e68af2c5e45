"""Primitives: an operation's name, traits and its rules, one named slot per pass.

Rules take arrays positionally and static params by keyword, and return lists:

    shape(*types, **params) -> [Type]                          abstract evaluation
    impl(*arrays, **params) -> [ndarray]                       NumPy meaning (the oracle)
    jvp(primals, tangents, **params) -> ([out], [tangent])     tangents may be Zero
    transpose(cts, *args, **params) -> [ct or None]            args may be UndefinedPrimal
    batch(size, args, dims, **params) -> ([out], [dim])        dims are 0 or None
    partial_eval(pe, unknowns, *args, **params) -> [out]      optional; see passes/partial_eval
    dce(eqn, used) -> eqn                                      optional; see passes/simplify
    element(e, *elements, **params) -> element                 optional; see below
    effect(**params) -> bool                                   optional: an equation with
                                                               these params may fail, so
                                                               dead code elimination keeps it

Machine code is a backend's (rune_jit/_src/backend): a primitive never knows how it is
compiled. An elementwise primitive may give a portable `element` rule instead: one
element of its result from its operands' elements, computed with the other
elementwise primitives by name (`e.mul(x, e.exp(y))`, `e.const(x, 1.0)`; `e.dtype(x)`
says an element's dtype), which any backend can lower without a rule of its own.

A slot of SLOTS may hold `Absent(reason)` when the rule cannot exist (a comparison has
no transpose because it is not linear); a walk over every primitive checks that each is
filled or so marked. Slot names and traits are declared here: a misspelt one raises.
"""

from __future__ import annotations

from typing import Any, Callable

SLOTS = ("shape", "impl", "jvp", "transpose", "batch")
OPTIONAL_SLOTS = ("partial_eval", "dce", "element", "effect")
TRAITS = {
    "elementwise": "computed element by element from operands of one shape (or scalars)",
    "costly": "worth computing outside a loop when it can be (scan fission)",
    "effect": "never removed as dead code (it may raise)",
    "ordered": "seen in program order (it calls Python): no pass moves it across loop steps",
    "expands": "cheap to recompute, and its result may be larger than its first operand: "
               "reverse mode saves that operand instead (partial evaluation)",
    "checks": "its result is its only operand, which it checks (an effect): the known side "
              "of a partial evaluation runs it, so the unknown side may read the operand",
    "view": "its only operand's elements in another shape, in the same order (reshape): "
            "free to compute, so passes take it from the operand rather than keep it",
}


class Absent:
    """Marks a rule that does not exist, with the reason."""

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Absent({self.reason!r})"


NOT_LINEAR = Absent("not linear")


class Primitive:
    registry: dict[str, "Primitive"] = {}

    def __init__(self, name: str, *, traits: frozenset[str] = frozenset()):
        if name in Primitive.registry:
            raise ValueError(f"primitive {name} is defined twice")
        unknown = set(traits) - set(TRAITS)
        if unknown:
            raise ValueError(f"primitive {name}: unknown traits {sorted(unknown)}; the traits "
                             f"are {sorted(TRAITS)}")
        self.name = name
        self.traits = frozenset(traits)
        self.rules: dict[str, Any] = {}
        Primitive.registry[name] = self

    def __repr__(self) -> str:
        return self.name

    def def_rule(self, slot: str, rule: Any = None) -> Callable:
        """`prim.def_rule("jvp", f)`, or `@prim.def_rule("jvp")` as a decorator."""
        if slot not in SLOTS + OPTIONAL_SLOTS:
            raise ValueError(f"{self.name}: no rule slot {slot!r}; the slots are "
                             f"{', '.join(SLOTS + OPTIONAL_SLOTS)}")
        if rule is not None:
            self.rules[slot] = rule
            return rule

        def deco(f):
            self.rules[slot] = f
            return f

        return deco

    def rule(self, slot: str) -> Callable:
        r = self.rules.get(slot)
        if r is None or isinstance(r, Absent):
            why = f" ({r.reason})" if isinstance(r, Absent) else ""
            raise NotImplementedError(f"no {slot} rule for {self.name}{why}")
        return r

    def has_rule(self, slot: str) -> bool:
        return not isinstance(self.rules.get(slot, Absent("missing")), Absent)

    def effectful(self, params: dict) -> bool:
        """Whether an equation of this primitive may not be removed as dead code."""
        rule = self.rules.get("effect")
        return "effect" in self.traits or (rule is not None and rule(**params))

    def shape(self, *types, **params):
        return self.rule("shape")(*types, **params)

    def impl(self, *args, **params):
        return self.rule("impl")(*args, **params)
