"""Random loop programs for the differential fuzzer (tests/loops/test_fuzz.py), and its runner.

A program is Python source, generated from an integer seed alone
(`generate(seed)`), over a few float64/float32 array arguments: straight-line
elementwise code, reductions, products, slices and joins, and `rune.scan` /
`rune.iterate` loops nested up to three deep, whose inits, captures and rows
come from every enclosing level; about a third of the loops take `checkpoints=`
(k from 1 to 4 mostly, now and then "all" or more steps than the loop takes), and
the grad of such a program is compared with the grad of `Program.tape_source`, the
same program without them (the tape's); in about half the steps a value read at a traced
index (an argmax, a loop counter: `x[i]`, `x[i, j]`, `x[:, i]`, `x.at[i].set/add`, a
NumPy constant's row) feeds a carry. Mixed dtypes cross capture boundaries (a
float32 argument read in a float64 step, int counters carried and used with
`where` and casts). Values stay bounded: inputs lie in [-1, 1], every value's
bound is tracked and squashed with tanh past `LIMIT`, carries are squashed.

The source is generated twice from the same draws: as the program a user would
write (`Program.source`, shown in failure messages) and as a reference
(`Program.ref_source`) that runs on plain NumPy with Python loops for
`rune.scan` and `rune.iterate` (`RefRune` below), where every float comparison
goes through `_gt` and `rnp.maximum` / `rnp.max` go through recording versions:
the reference run measures how close the inputs come to a tie (a comparison,
a maximum) that rounding could break, and inputs are redrawn until none is close.

`check_seed(seed)` runs one program through every check it is due (see
`modes_for`) and returns its failures as text; `run_chunk(seeds)` runs seeds in a
forked child so that a crash (a segfault, an LLVM abort) or a hang is reported as
a failure naming the seed. `python tests/fuzz_programs.py SEED` prints a
standalone repro script of one seed's program and checks.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config

F64, F32, I64, I32 = (np.dtype(t) for t in ("float64", "float32", "int64", "int32"))
DT_SRC = {F64: "np.float64", F32: "np.float32", I64: "np.int64", I32: "np.int32"}

LIMIT = 8.0  # a float value whose bound would pass this is squashed with tanh
MAX_SIZE = 12  # elements of any value
ARG_SHAPES = [(), (3,), (2, 3), (4,), (2,)]
MAX_LOOPS = 3  # loops per program (compile time grows with them)
MAX_DEPTH = 3  # loop nesting
TAPE_ROWS = 16  # rows of a native loop's first tapes (Tapes.FIRST_ROWS): "long" loops grow them

# ------------------------------------------------------------- values and scopes


@dataclass
class Val:
    name: str
    dtype: np.dtype
    shape: tuple
    bound: float  # |value| <= bound
    taint: bool = False  # float32 arithmetic upstream: compiled and interpreted round apart
    carry: bool = False  # reads the carry of the innermost step being built

    @property
    def is_float(self) -> bool:
        return self.dtype.kind == "f"

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass
class Scope:
    parent: "Scope | None"
    kind: str  # "top", "scan", "iterate", "while" (a step), "until" (a loop's test)
    always: bool  # runs on every call (no enclosing iterate; scans of length >= 1)
    remat: bool = False  # a step wrapped in rune.remat
    vals: list = field(default_factory=list)
    taint: bool = False  # float32 arithmetic in this scope or one nested in it
    f32_reads: bool = False  # reads a float32 value (in this scope or nested)

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def visible(self) -> list[tuple[Val, bool]]:
        """(value, defined in this scope) for every value this scope can read."""
        out, s, own = [], self, True
        while s is not None:
            out += [(v, own) for v in s.vals]
            s, own = s.parent, False
        return out


def spread_taint(scope: "Scope | None") -> None:
    """Float32 arithmetic happens in `scope`: it and every scope around it hold some."""
    while scope is not None:
        scope.taint = True
        scope = scope.parent


def broadcast(*shapes) -> tuple | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def reshape_targets(shape: tuple) -> list[tuple]:
    n = math.prod(shape)
    out = [(n,)] + [(p, n // p) for p in range(2, n) if n % p == 0]
    if n == 1:
        out += [(), (1, 1)]
    return [s for s in out if s != tuple(shape)]


def alt(program: str, reference: str) -> str:
    """Text that reads `program` in the program and `reference` in the reference."""
    return f"\x01{program}\x02{reference}\x03"


def gt(a: str, b: str, kind: str = "f") -> str:
    """A comparison a > b: `(a > b)` in the program, `_gt(a, b)` in the reference (which
    records how close the two sides come). Int comparisons are exact: plain in both."""
    if kind != "f":
        return f"({a} > {b})"
    return alt(f"({a} > {b})", f"_gt({a}, {b})")


ALT_RE = re.compile("\x01(.*?)\x02(.*?)\x03")
TAPE_RE = re.compile("\x04(.*?)\x05")


def tape_only(text: str) -> str:
    """Text the program and the reference read, and the tape program leaves out: a loop's
    `checkpoints=` keyword (`Program.tape_source` is the program without them)."""
    return f"\x04{text}\x05"


def render(lines: list[str], ref: bool, tape: bool = False) -> str:
    text = ALT_RE.sub(r"\2" if ref else r"\1", "\n".join(lines) + "\n")
    return TAPE_RE.sub("" if tape else r"\1", text)


# ------------------------------------------------------------- the generator

LOOP_KINDS = ("scan", "iterate", "while_loop")  # Gen's methods that emit a loop


@dataclass
class Program:
    seed: int
    source: str
    ref_source: str
    args: list  # (dtype, shape) per argument
    outputs: list  # Val per output
    raising: bool  # every path must raise IterateError
    features: set
    any_f32: bool  # a float32 value anywhere: transformations compare at float32 tolerance
    tape_source: str = ""  # the program without its loops' checkpoints= ("": source)

    @property
    def tie_margin(self) -> float:
        return TIE_MARGIN_F32 if self.any_f32 else TIE_MARGIN_F64

    @property
    def float_outputs(self) -> list[bool]:
        return [o.is_float for o in self.outputs]

    def build(self, ref: bool = False, tape: bool = False) -> Callable:
        """The program (tape: without checkpoints=), or its NumPy reference."""
        ns = ref_namespace() if ref else {"np": np, "rune": rune, "rnp": rnp}
        src = self.ref_source if ref else (self.tape_source or self.source) if tape else \
            self.source
        what = " (reference)" if ref else " (tape)" if tape else ""
        code = compile(src, f"<fuzz program {self.seed}{what}>", "exec")
        exec(code, ns)
        return ns["prog"]

    def scalar(self, f: Callable) -> Callable:
        """The sum of every float output of f: what grad differentiates."""
        mask = self.float_outputs

        def scalar_f(*a):
            outs = f(*a)
            total = 0.0
            for o, fl in zip(outs, mask):
                if fl:
                    total = total + rnp.sum(o)
            return total

        return scalar_f

    def inputs(self, attempt: int, example: int = 0) -> list:
        rng = np.random.default_rng([self.seed, attempt, example])
        return [np.asarray(rng.uniform(-1.0, 1.0, s)).astype(d) for d, s in self.args]


class Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.count = 0
        self.loops = 0
        self.features: set[str] = set()
        self.raising = self.rng.random() < 0.03
        # traced indices draw from a stream of their own: programs of the draws before
        # them (and the regressions found in them) stay as they were
        self.index_rng = random.Random(f"{seed}-index")
        self.raise_placed = False
        self.any_f32 = False
        # checkpoints= on loops: a stream of its own too, so that every other draw (and
        # the seeds other tests pin) stays as it was but for the keyword
        self.ckpt_rng = random.Random(f"{seed}-checkpoints")
        self.ckpt_open: list[bool] = []  # per enclosing loop: whether it is checkpointed

    # ------------------------------------------------------------ helpers

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, scope: Scope, text: str, extra: int = 0):
        self.lines.append("    " * (scope.depth + 1 + extra) + text)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, scope: Scope, pred: Callable[[Val], bool] = lambda v: True,
             local_weight: float = 3.0) -> Val | None:
        cands = [(v, own) for v, own in scope.visible() if pred(v)]
        if not cands:
            return None
        weights = [local_weight if own else 1.0 for _, own in cands]
        return self.rng.choices([v for v, _ in cands], weights)[0]

    def note_read(self, scope: Scope, *vals: Val):
        for v in vals:
            if v.dtype == F32:
                s = scope
                while s is not None:
                    s.f32_reads = True
                    s = s.parent
                if scope.kind != "top" and any(
                        w.dtype == F64 for w, own in scope.visible() if own and w.carry):
                    self.features.add("f32_read_in_f64_step")

    def define(self, scope: Scope, expr: str, dtype: np.dtype, shape: tuple, bound: float,
               operands: tuple = (), arith: bool = True, carry: bool | None = None) -> Val:
        taint = any(v.taint for v in operands) or (dtype == F32 and arith)
        if dtype.kind == "f" and bound > LIMIT:
            expr, bound, taint = f"rnp.tanh({expr})", 1.0, taint or dtype == F32
        if carry is None:
            carry = any(v.carry for v in operands)
        name = self.fresh()
        self.emit(scope, f"{name} = {expr}")
        v = Val(name, np.dtype(dtype), tuple(shape), bound, taint, carry)
        scope.vals.append(v)
        self.mark(scope, v)
        self.note_read(scope, *operands)
        return v

    def mark(self, scope: Scope, v: Val):
        if v.dtype == F32:
            self.any_f32 = True
        if v.taint:
            spread_taint(scope)

    # ------------------------------------------------------------ programs

    def program(self) -> Program:
        rng = self.rng
        nargs = rng.choice([1, 2, 2, 3, 3])
        args = []
        for _ in range(nargs):
            args.append((F32 if rng.random() < 0.3 else F64, rng.choice(ARG_SHAPES)))
        if all(s == () for _, s in args) and rng.random() < 0.7:
            args[0] = (args[0][0], rng.choice([(3,), (4,), (2, 3)]))
        top = Scope(None, "top", True)
        names = [f"a{i}" for i in range(nargs)]
        for name, (d, s) in zip(names, args):
            top.vals.append(Val(name, d, s, 1.0))
            if d == F32:
                self.any_f32 = True
        self.lines.append(f"def prog({', '.join(names)}):")
        self.block(top, rng.randint(2, 3), want_loop=True)
        if self.raising and not self.raise_placed:
            self.place_raise(top)
        outs = self.choose_outputs(top)
        self.emit(top, "return (" + "".join(f"{o.name}, " for o in outs) + ")")
        if self.raising:
            self.features.add("raising")
        src_lines = self.lines
        source, tape = render(src_lines, False), render(src_lines, False, tape=True)
        return Program(self.seed, source, render(src_lines, True), args, outs,
                       self.raising, self.features, self.any_f32,
                       "" if tape == source else tape)

    def choose_outputs(self, top: Scope) -> list[Val]:
        cands = [v for v in top.vals if not v.name.startswith("a")]
        loop_outs = [v for v in cands if getattr(v, "from_loop", False)]
        k = self.rng.randint(1, 3)
        pool = loop_outs + cands[-2:]
        outs: list[Val] = []
        for v in self.rng.sample(pool, min(k, len(pool))):
            if v not in outs:
                outs.append(v)
        if not any(o.is_float for o in outs):
            floats = [v for v in cands if v.is_float] or [v for v in top.vals if v.is_float]
            outs.append(floats[-1])
        return outs

    def block(self, scope: Scope, n: int, want_loop: bool = False):
        made_loop = False
        for i in range(n):
            last = i == n - 1
            if want_loop and last and not made_loop and self.loops < MAX_LOOPS:
                kind = self.rng.choice(["scan", "scan", "scan", "iterate", "iterate", "while_loop"])
            else:
                kind = self.stmt_kind(scope)
            if kind in LOOP_KINDS:
                made_loop = True
            if self.raising and not self.raise_placed and scope.always and kind in (
                    LOOP_KINDS) and self.chance(0.5):
                self.place_raise(scope)
                continue
            if not getattr(self, kind)(scope):
                self.unary(scope)

    def stmt_kind(self, scope: Scope) -> str:
        loop_w = [1.6, 1.8, 1.2, 0.0][min(scope.depth, MAX_DEPTH)]
        if self.loops >= MAX_LOOPS:
            loop_w = 0.0
        kinds = {"unary": 1.0, "binary": 1.5, "reduce": 0.6, "product": 0.4, "shape": 0.8,
                 "ints": 1.2, "scan": loop_w * 0.55, "iterate": loop_w * 0.35,
                 "while_loop": loop_w * 0.2}
        if not any(v.dtype.kind == "i" for v, _ in scope.visible()):
            kinds["ints"] = 0.0
        return self.rng.choices(list(kinds), list(kinds.values()))[0]

    # ------------------------------------------------------------ straight-line code

    def unary(self, scope: Scope) -> bool:
        a = self.pick(scope, lambda v: v.is_float)
        b = a.bound
        ops = [("rnp.tanh({})", min(b, 1.0)), ("rnp.sin({})", min(b, 1.0)),
               ("rnp.cos({})", 1.0), ("{} * -1.5", 1.5 * b), ("0.5 * {}", 0.5 * b),
               ("-{}", b), ("1.0 / (1.0 + {0} * {0})", 1.0), ("rnp.square({})", b * b)]
        if b <= 2.0:
            ops.append(("rnp.exp({})", math.exp(b)))
        if a.dtype == F64 and self.chance(0.1):
            ops.append(("{}.astype(np.float32)", b))
        tmpl, bound = self.rng.choice(ops)
        dtype = F32 if "float32" in tmpl else a.dtype
        self.define(scope, tmpl.format(a.name), dtype, a.shape, bound, (a,),
                    arith="astype" not in tmpl)
        if "astype" in tmpl:
            self.features.add("cast_f64_f32")
        return True

    def partner(self, scope: Scope, a: Val, pred=lambda v: v.is_float) -> Val | None:
        def ok(v):
            s = broadcast(a.shape, v.shape)
            return pred(v) and s is not None and math.prod(s) <= MAX_SIZE and v.size > 0 \
                and len(s) <= 2
        return (self.pick(scope, lambda v: ok(v) and v is not a)
                or (self.pick(scope, ok) if self.chance(0.2) else None))

    def binary(self, scope: Scope) -> bool:
        a = self.pick(scope, lambda v: v.is_float and v.size > 0)
        if a is None:
            return False
        b = self.partner(scope, a)
        if b is None:
            return False
        shape = broadcast(a.shape, b.shape)
        dtype = np.result_type(a.dtype, b.dtype)
        op = self.rng.choice(["add", "sub", "mul", "div", "max", "where", "where", "wconst"])
        if op == "add":
            expr, bound = f"{a.name} + {b.name}", a.bound + b.bound
        elif op == "sub":
            expr, bound = f"{a.name} - {b.name}", a.bound + b.bound
        elif op == "mul":
            expr, bound = f"{a.name} * {b.name}", a.bound * b.bound
        elif op == "div":
            expr, bound = f"{a.name} / (1.0 + {b.name} * {b.name})", a.bound
        elif op == "max":
            expr, bound = f"rnp.maximum({a.name}, {b.name})", max(a.bound, b.bound)
        elif op == "wconst":  # a Python float branch is weak: the result keeps a's dtype
            c = self.rng.choice(["0.5", "-0.25", "0.0"])
            expr = f"rnp.where({gt(a.name, b.name)}, {a.name}, {c})"
            bound, shape, dtype = a.bound, shape, a.dtype
            self.define(scope, expr, dtype, shape, bound, (a, b))
            self.features.add("where_weak")
            return True
        else:
            c = self.partner(scope, a) or a
            d = self.partner(scope, a) or b
            shape = broadcast(a.shape, b.shape, c.shape, d.shape)
            if shape is None or math.prod(shape) > MAX_SIZE or len(shape) > 2:
                return False
            dtype = np.result_type(c.dtype, d.dtype)
            expr = f"rnp.where({gt(a.name, b.name)}, {c.name}, {d.name})"
            self.define(scope, expr, dtype, shape, max(c.bound, d.bound), (a, b, c, d))
            return True
        self.define(scope, expr, dtype, shape, bound, (a, b))
        return True

    def reduce(self, scope: Scope) -> bool:
        a = self.pick(scope, lambda v: v.is_float and len(v.shape) >= 1)
        if a is None:
            return False
        fn = self.rng.choice(["sum", "max", "mean"])
        if a.size == 0:
            fn = "sum"
        axis = None if self.chance(0.4) else self.rng.randrange(-len(a.shape), len(a.shape))
        keep = self.chance(0.25)
        shape = np.sum(np.zeros(a.shape), axis=axis, keepdims=keep).shape
        if a.size == 0 and math.prod(shape) == 0:
            axis, shape = None, ()
        n = a.size // max(1, math.prod(shape))
        bound = a.bound * n if fn == "sum" else a.bound
        args = f"{a.name}" + ("" if axis is None else f", axis={axis}") + (
            ", keepdims=True" if keep else "")
        if self.chance(0.3) and fn != "mean":
            ax = "" if axis is None else f"axis={axis}"
            expr = f"{a.name}.{fn}({ax})"
            if fn == "max":  # the reference's max records ties
                expr = alt(expr, f"rnp.max({a.name}{', ' + ax if ax else ''})")
            shape = np.sum(np.zeros(a.shape), axis=axis).shape
        else:
            expr = f"rnp.{fn}({args})"
        self.define(scope, expr, a.dtype, shape, bound, (a,))
        return True

    def product(self, scope: Scope) -> bool:
        a = self.pick(scope, lambda v: v.is_float and len(v.shape) >= 1 and v.size > 0)
        if a is None:
            return False

        def fits(v):
            if not v.is_float or len(v.shape) == 0 or v.size == 0:
                return False
            try:
                return np.matmul(np.zeros(a.shape), np.zeros(v.shape)).size <= MAX_SIZE
            except ValueError:
                return False

        b = self.pick(scope, fits)
        if b is None:
            return False
        shape = np.matmul(np.zeros(a.shape), np.zeros(b.shape)).shape
        fn = self.rng.choice(["rnp.matmul({}, {})", "rnp.dot({}, {})", "{} @ {}"])
        self.define(scope, fn.format(a.name, b.name), np.result_type(a.dtype, b.dtype), shape,
                    a.bound * b.bound * a.shape[-1], (a, b))
        return True

    def shape(self, scope: Scope) -> bool:
        a = self.pick(scope, lambda v: len(v.shape) >= 1 and v.size > 0 and v.is_float)
        if a is None:
            return False
        n0 = a.shape[0]
        ops = ["rev", "reshape", "index"]
        if n0 >= 2:
            ops += ["stride", "tail"]
        if len(a.shape) == 2:
            ops.append("T")
        ops.append("concat")
        op = self.rng.choice(ops)
        if op == "rev":
            return bool(self.define(scope, f"{a.name}[::-1]", a.dtype, a.shape, a.bound, (a,),
                                    arith=False))
        if op == "stride":
            shape = ((n0 + 1) // 2,) + a.shape[1:]
            return bool(self.define(scope, f"{a.name}[::2]", a.dtype, shape, a.bound, (a,),
                                    arith=False))
        if op == "tail":
            return bool(self.define(scope, f"{a.name}[1:]", a.dtype, (n0 - 1,) + a.shape[1:],
                                    a.bound, (a,), arith=False))
        if op == "index":
            i = self.rng.choice([0, -1, n0 - 1])
            return bool(self.define(scope, f"{a.name}[{i}]", a.dtype, a.shape[1:], a.bound,
                                    (a,), arith=False))
        if op == "T":
            return bool(self.define(scope, f"{a.name}.T", a.dtype, a.shape[::-1], a.bound, (a,),
                                    arith=False))
        if op == "reshape":
            targets = reshape_targets(a.shape)
            if not targets:
                return False
            t = self.rng.choice(targets)
            if self.chance(0.5):
                expr = f"rnp.reshape({a.name}, {t!r})"
            else:
                expr = f"{a.name}.reshape({', '.join(map(str, t)) if t else '()'})"
            return bool(self.define(scope, expr, a.dtype, t, a.bound, (a,), arith=False))
        # concatenate along axis 0 (or the last axis of 2-d values)
        axis = 0 if len(a.shape) == 1 or self.chance(0.5) else -1
        ax = axis % len(a.shape)

        def fits(v):
            return (v.is_float and len(v.shape) == len(a.shape) and v.size > 0 and all(
                x == y for k, (x, y) in enumerate(zip(v.shape, a.shape)) if k != ax)
                and a.size + v.size <= MAX_SIZE)

        b = self.pick(scope, fits)
        if b is None:
            return False
        shape = list(a.shape)
        shape[ax] += b.shape[ax]
        extra = "" if axis == 0 else f", axis={axis}"
        self.define(scope, f"rnp.concatenate([{a.name}, {b.name}]{extra})",
                    np.result_type(a.dtype, b.dtype), tuple(shape), max(a.bound, b.bound),
                    (a, b), arith=a.dtype != b.dtype)
        return True

    def ints(self, scope: Scope) -> bool:
        k = self.pick(scope, lambda v: v.dtype.kind == "i")
        if k is None:
            return False
        op = self.rng.choice(["where", "cast", "mix"])
        if op == "where":
            a = self.partner(scope, k)
            b = self.partner(scope, k) or a
            if a is None:
                return False
            shape = broadcast(a.shape, b.shape, k.shape)
            if shape is None or math.prod(shape) > MAX_SIZE or len(shape) > 2:
                b, shape = a, broadcast(a.shape, k.shape)
            m = self.rng.randint(0, 3)
            self.define(scope, f"rnp.where({gt(k.name, str(m), 'i')}, {a.name}, {b.name})",
                        np.result_type(a.dtype, b.dtype), shape, max(a.bound, b.bound),
                        (k, a, b))
            self.features.add("int_where")
        elif op == "cast":
            d = self.rng.choice([F64, F32])
            self.define(scope, f"{k.name}.astype({DT_SRC[d]}) * 0.25", d, k.shape,
                        k.bound * 0.25, (k,))
            self.features.add("int_cast")
        else:  # NEP 50: an int array with a float array gives float64 (float32 too)
            a = self.partner(scope, k)
            if a is None:
                return False
            self.define(scope, f"{a.name} + {k.name} * 0.5", np.result_type(a.dtype, k.dtype),
                        broadcast(a.shape, k.shape), a.bound + 0.5 * k.bound, (a, k))
            self.features.add("int_mix")
        return True

    # ------------------------------------------------------------ traced indices

    def maybe_traced_index(self, scope: Scope, news: list[str], cvals: list[Val],
                           first: int) -> list[str]:
        """In about half the loop steps: a value read at a traced index (an argmax, or
        an int carry such as a loop counter) mixed into one of the step's new float64
        carries `news[first:]` (of `cvals`), so that it reaches the outputs; -> the new
        carries. Drawn from `index_rng`, and its values hidden from the statements
        after it: the rest of the program is what it was without it."""
        main, self.rng = self.rng, self.index_rng
        held = len(scope.vals)
        try:
            targets = [j for j in range(first, len(news)) if cvals[j].dtype == F64]
            if not targets or not self.chance(0.5):
                return news
            v = self.traced_index(scope)
            if v is None:
                return news
            self.features.add("index_in_stopping_loop" if first else "index_in_scan")
            j = self.rng.choice(targets)
            mixed = self.fresh("n")
            self.emit(scope, f"{mixed} = {news[j]} * 0.9375 + 0.0625 * rnp.tanh(rnp.sum({v}))")
            return news[:j] + [mixed] + news[j + 1:]
        finally:
            self.rng = main
            del scope.vals[held:]

    def index_of(self, scope: Scope) -> str | None:
        """A traced int scalar: an int carry of a step (a counter) or an argmax."""
        k = self.pick(scope, lambda v: v.dtype.kind == "i" and v.shape == () and v.carry)
        if k is not None and self.chance(0.5):
            self.features.add("index_counter")
            return k.name
        a = self.pick(scope, lambda v: v.is_float and len(v.shape) == 1 and v.size > 1)
        if a is None:
            return None if k is None else k.name
        self.features.add("index_argmax")
        return self.define(scope, f"rnp.argmax({a.name})", I64, (), a.size - 1, (a,),
                           arith=False).name

    def traced_index(self, scope: Scope) -> str | None:
        """`x[i]`, `x[i, j]`, `x[:, i]`, `x.at[i].set(y)` / `.add(y)` or a NumPy
        constant's row at a traced index i (reduced modulo the axis). A value that may
        not be traced (one not computed from the step's carry: made from the arguments
        alone, it is a NumPy array when the program runs eagerly, which a traced index
        cannot index, in JAX neither) is read through `rnp.asarray`, as a user must.
        -> the name of the value read (float64, its rounding untainted by float32), or
        None."""
        i = self.index_of(scope)
        x = self.pick(scope, lambda v: v.dtype == F64 and not v.taint and len(v.shape) >= 1
                      and v.size > 0)
        if i is None or x is None:
            return None
        xs = x.name if x.carry else f"rnp.asarray({x.name})"
        forms = ["row", "const"] + (["pair", "column"] if len(x.shape) == 2 else [])
        if x.carry:
            forms += ["set", "add"]
        form = self.rng.choice(forms)
        at = f"{i} % {x.shape[0]}"
        if form == "row":
            v = self.define(scope, f"{xs}[{at}]", x.dtype, x.shape[1:], x.bound, (x,),
                            arith=False)
        elif form == "pair":
            v = self.define(scope, f"{xs}[{at}, ({i} + 1) % {x.shape[1]}]", x.dtype, (),
                            x.bound, (x,), arith=False)
        elif form == "column":
            v = self.define(scope, f"{xs}[:, {i} % {x.shape[1]}]", x.dtype, x.shape[:1],
                            x.bound, (x,), arith=False)
        elif form == "const":
            n = self.rng.randint(2, 5)
            table = [round(self.rng.uniform(-1.0, 1.0), 3) for _ in range(n)]
            v = self.define(scope, f"rnp.asarray(np.array({table!r}))[{i} % {n}]", F64, (),
                            1.0, (), arith=False)
            self.features.add("index_const")
        else:
            y = self.pick(scope, lambda v: v.dtype == F64 and not v.taint and v.shape == ())
            if y is None:
                return None
            bound = x.bound + (y.bound if form == "add" else 0.0)
            v = self.define(scope, alt(f"{x.name}.at[{at}].{form}({y.name})",
                                       f"_at_{form}({x.name}, {at}, {y.name})"),
                            x.dtype, x.shape, max(bound, y.bound), (x, y), arith=form == "add")
        self.features.add(f"index_{form}")
        return v.name

    # ------------------------------------------------------------ loop pieces

    def init_leaf(self, scope: Scope, allow_int: bool = True) -> tuple[str, Val]:
        """(init expression, the carry's type as a Val named by nothing yet)."""
        rng = self.rng
        if allow_int and self.chance(0.2):
            k = self.pick(scope, lambda v: v.dtype.kind == "i") if self.chance(0.4) else None
            if k is not None and k.shape == ():
                self.features.add("int_counter_warm")
                return k.name, Val("", k.dtype, (), k.bound)
            d = rng.choice([I64, I32])
            c0 = rng.choice([0, 0, 2])
            self.features.add("int_counter")
            return f"{DT_SRC[d]}({c0})", Val("", d, (), float(c0))
        if self.chance(0.1):
            shape = rng.choice([(), (2,), (3,), (4,)])
            d = rng.choice([F64, F32])
            sh = "()" if shape == () else f"{shape[0]}"
            expr = f"rnp.zeros({sh})" if d == F64 else f"rnp.zeros({sh}, dtype=np.float32)"
            return expr, Val("", d, shape, 0.0)
        v = self.pick(scope, lambda v: v.is_float and v.size > 0)
        self.note_read(scope, v)
        if scope.kind != "top" and v not in scope.vals:
            self.features.add("captured_init")
        form = rng.choice(["plain", "plain", "tanh", "half", "cast"])
        if form == "cast" and v.dtype == F64:
            return f"{v.name}.astype(np.float32)", Val("", F32, v.shape, v.bound, v.taint)
        if form == "tanh":
            return f"rnp.tanh({v.name})", Val("", v.dtype, v.shape, min(v.bound, 1.0),
                                             v.taint or v.dtype == F32)
        if form == "half":
            return f"{v.name} * 0.5", Val("", v.dtype, v.shape, v.bound * 0.5,
                                          v.taint or v.dtype == F32)
        return v.name, Val("", v.dtype, v.shape, v.bound, v.taint)

    def fit(self, scope: Scope, u: Val, shape: tuple) -> str:
        """u as an expression that broadcasts into `shape`."""
        if broadcast(u.shape, shape) == tuple(shape):
            return u.name
        fn = "sum" if u.size == 0 else self.rng.choice(["sum", "mean", "max"])
        return f"rnp.{fn}({u.name})"

    def new_carry(self, scope: Scope, c: Val) -> str:
        """Emit the step's new value of carry leaf c (bounded by max(bound, 1)); -> its name."""
        name = self.fresh("n")
        if c.dtype.kind == "i":
            self.emit(scope, f"{name} = {c.name} + {self.rng.choice([1, 1, 2])}")
            return name
        u = self.pick(scope, lambda v: v.is_float, local_weight=4.0) or c
        ue = self.fit(scope, u, c.shape)
        self.note_read(scope, u)
        form = self.rng.choice(["tanh_lin", "tanh_mul", "decay", "mix", "sin"])
        k = self.rng.choice(["1.5", "0.5", "-0.75", "2.0"])
        if form == "tanh_lin":
            expr = f"rnp.tanh({c.name} * {k} + {ue})"
        elif form == "tanh_mul":
            expr = f"rnp.tanh({c.name} * {ue} + {k})"
        elif form == "decay":
            expr = f"{c.name} * 0.5"
            if self.chance(0.7):
                expr = f"{c.name} * 0.5 + rnp.tanh({ue}) * 0.5"
        elif form == "mix":
            expr = f"rnp.tanh({ue} / (1.0 + {c.name} * {c.name}) + {c.name})"
        else:
            expr = f"rnp.sin({c.name} + {ue})"
        if np.result_type(c.dtype, u.dtype) != c.dtype and ue in expr:
            expr = f"({expr}).astype({DT_SRC[c.dtype]})"
            self.features.add("carry_cast_back")
        if u.taint or c.dtype == F32 or u.dtype == F32:  # float32 math inlined above
            spread_taint(scope)
        self.emit(scope, f"{name} = {expr}")
        return name

    def pack(self, names: list[str], shape_kind: str) -> str:
        if shape_kind == "bare":
            return names[0]
        if shape_kind == "nested":
            return f"(({names[0]}, {names[1]}), {names[2]})"
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"

    def carry_structure(self, n: int) -> str:
        if n == 1:
            return "bare" if self.chance(0.6) else "tuple"
        if n == 3 and self.chance(0.3):
            return "nested"
        return "tuple"

    def unpack(self, scope: Scope, param: str, leaves: list[Val], structure: str,
               carry: bool, bounds: list[float], extra: int = 0) -> list[Val]:
        """Bind the step parameter's leaves as values of the step's scope."""
        if structure == "bare":
            names = [param]
        else:
            names = [self.fresh("c" if carry else "r") for _ in leaves]
            self.emit(scope, f"{self.pack(names, structure)} = {param}", extra)
        out = []
        for nm, lf, b in zip(names, leaves, bounds):
            v = Val(nm, lf.dtype, lf.shape, b, lf.taint, carry)
            scope.vals.append(v)
            self.mark(scope, v)
            out.append(v)
        return out

    # ------------------------------------------------------------ scan

    def xs_leaf(self, scope: Scope, n: int | None) -> tuple[str, Val] | None:
        """A value with a leading axis (of size n if given), maybe reversed or strided."""
        cands = []
        for v, _ in scope.visible():
            if len(v.shape) < 1 or not v.is_float or v.size == 0:
                continue
            n0 = v.shape[0]
            forms = [("{}", n0), ("{}[::-1]", n0)]
            if n0 >= 2:
                forms += [("{}[::2]", (n0 + 1) // 2), ("{}[1:]", n0 - 1)]
            if n0 >= 3:
                forms.append(("{}[::-2]", (n0 + 1) // 2))
            if len(v.shape) == 2:
                forms.append(("{}.T", v.shape[1]))
            for tmpl, m in forms:
                if n is None or m == n:
                    cands.append((tmpl, m, v))
        if not cands:
            return None
        tmpl, m, v = self.rng.choice(cands)
        if tmpl == "{}.T":
            shape = v.shape[::-1]
        else:
            shape = (m,) + v.shape[1:]
        if n is None and self.chance(0.04):
            tmpl, shape = "{}[:0]", (0,) + v.shape[1:]
        if "[::-" in tmpl:
            self.features.add("xs_reversed")
        if "[::2]" in tmpl or "[::-2]" in tmpl:
            self.features.add("xs_strided")
        self.note_read(scope, v)
        return tmpl.format(v.name), Val("", v.dtype, shape, v.bound, v.taint)

    def scan(self, scope: Scope) -> bool:
        rng = self.rng
        if self.loops >= MAX_LOOPS:
            return False
        self.loops += 1
        self.features.add("scan")
        self.nesting_features(scope, "scan")
        ckpt = self.draw_checkpoints()
        ninit = rng.choice([1, 1, 2, 2, 3])
        inits = [self.init_leaf(scope) for _ in range(ninit)]
        if not any(lf.is_float for _, lf in inits):
            inits[0] = self.init_leaf(scope, allow_int=False)
        structure = self.carry_structure(ninit)
        # xs
        xs_items: list[tuple[str, Val]] = []
        if self.chance(0.3):
            n = rng.choice([0, 1, 1, 2, 3])
            self.features.add("scan_length")
        else:
            first = self.xs_leaf(scope, None)
            if first is None:
                n = rng.choice([0, 1, 2, 3])
                self.features.add("scan_length")
            else:
                xs_items.append(first)
                n = first[1].shape[0]
                if self.chance(0.3):
                    second = self.xs_leaf(scope, n)
                    if second is not None:
                        xs_items.append(second)
                        self.features.add("xs_tuple")
        self.features.add(f"scan_n{min(n, 2)}")
        reverse = self.chance(0.35)
        if reverse:
            self.features.add("scan_reverse")
        xs_struct = "none" if not xs_items else ("bare" if len(xs_items) == 1 else "tuple")
        # the step
        step = self.fresh("step")
        cparam, rparam = self.fresh("c"), self.fresh("r") if xs_items else "_"
        self.emit(scope, f"def {step}({cparam}, {rparam}):")
        remat = self.chance(0.3)
        inner = Scope(scope, "scan", scope.always and n >= 1, remat=remat)
        carry_leaves = [lf for _, lf in inits]
        bounds = [lf.bound + n * 2 if lf.dtype.kind == "i" else max(lf.bound, 1.0)
                  for lf in carry_leaves]
        cvals = self.unpack(inner, cparam, carry_leaves, structure, True, bounds)
        if xs_items:
            rows = [Val("", x.dtype, x.shape[1:], x.bound, x.taint) for _, x in xs_items]
            self.unpack(inner, rparam, rows, xs_struct, False, [r.bound for r in rows])
        self.block(inner, rng.randint(1, 2))
        news = [self.new_carry(inner, c) for c in cvals]
        news = self.maybe_traced_index(inner, news, cvals, 0)
        # ys
        ys_kind = rng.choice(["carry", "carry", "const_float", "const_array", "none", "tuple"])
        ys_expr, ys_vals = self.ys(inner, ys_kind, news, cvals)
        self.emit(inner, f"return {self.pack(news, structure)}, {ys_expr}")
        # the call
        init_src = self.pack([e for e, _ in inits], structure)
        call = f"rune.scan({self.remat_step(step, scope) if remat else step}, {init_src}"
        if xs_items:
            call += f", {self.pack([e for e, _ in xs_items], xs_struct)}"
            if self.chance(0.2):
                call += f", length={n}"
        else:
            call += f", length={n}"
        if reverse:
            call += ", reverse=True"
        call += self.checkpoints_kw(scope, "scan", ckpt, n, remat) + ")"
        taint = inner.taint or any(lf.taint for lf in carry_leaves)
        carry_dep = scope.kind != "top"
        # results
        use_ys = ys_vals and self.chance(0.75)
        if ys_vals and not use_ys:
            self.features.add("ys_unused")
        out_c = [Val(self.fresh(), lf.dtype, lf.shape, b, taint or lf.taint, carry_dep)
                 for lf, b in zip(carry_leaves, bounds)]
        keep_c = [not (use_ys and self.chance(0.15)) for _ in out_c]
        if not any(keep_c) and not use_ys:
            keep_c[0] = True
        c_names = [v.name if k else "_" for v, k in zip(out_c, keep_c)]
        c_target = self.pack(c_names, structure) if any(keep_c) else "_"
        if use_ys:
            out_y = [Val(self.fresh(), y.dtype, (n,) + y.shape, y.bound, taint or y.taint,
                         carry_dep) for y in ys_vals]
            y_target = self.pack([v.name for v in out_y], "bare" if len(out_y) == 1 else "tuple")
            self.emit(scope, f"{c_target}, {y_target} = {call}")
        else:
            out_y = []
            if self.chance(0.5):
                self.emit(scope, f"{c_target} = {call}[0]")
            else:
                self.emit(scope, f"{c_target}, _ = {call}")
        for v, k in zip(out_c, keep_c):
            if k:
                v.from_loop = True
                scope.vals.append(v)
                self.mark(scope, v)
        for v in out_y:
            v.from_loop = True
            if n == 0:
                v.bound = 0.0
            scope.vals.append(v)
            self.mark(scope, v)
        if inner.f32_reads:
            self.note_read(scope, Val("", F32, (), 0.0))  # the step read float32
        if scope.kind == "scan":
            if ys_kind.startswith("const"):
                self.features.add("nested_scan_const_ys")
        if "captured_init" in self.features and scope.kind != "top":
            self.features.add("nested_captured_init")
        if reverse or any("[::-" in e for e, _ in xs_items):
            if any(y.dtype == F64 for y in ys_vals) and inner.f32_reads:
                self.features.add("rev_f64_ys_f32_capture")
        self.ckpt_open.pop()
        return True

    def draw_checkpoints(self) -> int | str | None:
        """Whether the loop starting here takes `checkpoints=` (None: it does not), and
        its k: mostly 1 to 4 (below most loops' step counts: the schedule recomputes),
        now and then "all" or more than the loop takes (the tape). Drawn from the loop's
        own stream before its step, so the loops nested in its step know of it."""
        r = self.ckpt_rng
        k = None
        if r.random() < 0.35:
            u = r.random()
            k = '"all"' if u < 0.08 else r.choice([5, 8, 64]) if u < 0.16 else \
                r.choice([1, 1, 2, 2, 3, 4])
        self.ckpt_open.append(k is not None)
        return k

    def checkpoints_kw(self, scope: Scope, name: str, k, n: int | None, remat: bool) -> str:
        """The keyword of a loop `name` drawn by draw_checkpoints (a scan's: of length n,
        remat if its step is rematerialized), with its features."""
        if k is None:
            return ""
        f = self.features
        f.update(("checkpoints", f"checkpoints_{name}"))
        if k == '"all"':
            f.add("checkpoints_all")
        elif n is not None:
            f.add("checkpoints_below_n" if k < n else "checkpoints_past_n")
        if scope.kind != "top":
            f.add("checkpoints_in_loop_step")
        if any(self.ckpt_open[:-1]):
            f.add("checkpoints_in_checkpoints")
        if scope.remat:
            f.add("checkpoints_in_remat_step")
        if remat:
            f.add("checkpoints_remat_step")
        return tape_only(f", checkpoints={k}")

    def remat_step(self, step: str, scope: Scope) -> str:
        """Step `step` rematerialized: the same values and derivatives, whatever it keeps."""
        self.features.add("remat_step")
        if scope.kind != "top":
            self.features.add("remat_step_in_loop_step")
        policy = self.rng.choice(["", "", ", policy=rune.checkpoint_policies.dots_saveable"])
        return f"rune.remat({step}{policy})"

    def ys(self, inner: Scope, kind: str, news: list[str], cvals: list[Val]
           ) -> tuple[str, list[Val]]:
        rng = self.rng
        if kind == "none":
            self.features.add("ys_none")
            return "None", []
        if kind == "const_float":
            c = rng.choice(["7.0", "-0.5", "2.5"])
            self.features.add("ys_const_float")
            return c, [Val("", F64, (), abs(float(c)))]
        if kind == "const_array":
            outer = [v for v, own in inner.visible() if not v.carry and v.size > 0]
            if outer and self.chance(0.4) and len(outer) >= 2:
                a, b = rng.sample(outer, 2)
                s = broadcast(a.shape, b.shape)
                if s is not None and a.is_float and b.is_float and math.prod(s) <= MAX_SIZE:
                    self.features.add("ys_const_array")
                    self.note_read(inner, a, b)
                    if F32 in (a.dtype, b.dtype) and np.result_type(a.dtype, b.dtype) == F64:
                        self.features.add("ys_f64_from_f32")
                    return f"{a.name} + {b.name}", [Val("", np.result_type(a.dtype, b.dtype), s,
                                                        a.bound + b.bound,
                                                        a.taint or b.taint or
                                                        np.result_type(a.dtype, b.dtype) == F32)]
            if outer:
                v = rng.choice(outer)
                self.features.add("ys_const_array")
                self.note_read(inner, v)
                return v.name, [v]
            kind = "carry"
        if kind == "tuple":
            first = self.ys(inner, "carry", news, cvals)
            second = self.ys(inner, rng.choice(["const_float", "const_array", "carry"]), news,
                             cvals)
            self.features.add("ys_tuple")
            return f"({first[0]}, {second[0]})", first[1] + second[1]
        # carry-derived: a new carry leaf or a value of the step that reads the carry
        self.features.add("ys_carry")
        own = [v for v in inner.vals if v.carry]
        if own and self.chance(0.5):
            v = rng.choice(own)
            return v.name, [v]
        i = rng.randrange(len(news))
        c = cvals[i]
        return news[i], [Val("", c.dtype, c.shape, max(c.bound, 1.0), c.taint or inner.taint,
                             True)]

    # ------------------------------------------------------------ iterate and while_loop

    def iterate(self, scope: Scope, pattern: str | None = None) -> bool:
        return self.stopping_loop(scope, "iterate", pattern)

    def while_loop(self, scope: Scope, pattern: str | None = None) -> bool:
        return self.stopping_loop(scope, "while", pattern)

    def place_raise(self, scope: Scope) -> bool:
        """The loop a raising program raises in: it never stops before its max_steps."""
        return self.stopping_loop(scope, self.rng.choice(["iterate", "iterate", "while"]),
                                  "raise")

    def stopping_loop(self, scope: Scope, spelling: str, pattern: str | None) -> bool:
        """A loop that stops on a test of its carry, spelled `rune.iterate(body, init,
        until=test, max_steps=k)` or `rune.while_loop(cond, body, init, max_steps=k)`
        (cond: the negated test). The test passes within k steps (never, for pattern
        "raise"), so half the while_loops leave max_steps out: nothing but the test
        stops those."""
        rng = self.rng
        if pattern is None:
            if self.loops >= MAX_LOOPS:
                return False
            patterns = ["count", "count", "mono", "jump"]
            if spelling == "while" and scope.depth <= 1:
                patterns.append("long")
            pattern = rng.choice(patterns)
        self.loops += 1
        name = "iterate" if spelling == "iterate" else "while"
        self.features.add("iterate" if spelling == "iterate" else "while_loop")
        self.features.add(f"{name}_{pattern}")
        self.nesting_features(scope, name)
        ckpt = self.draw_checkpoints()
        if pattern == "raise":
            self.raise_placed = True
        unbounded = spelling == "while" and pattern != "raise" and self.chance(0.5)
        if spelling == "while":
            self.while_features(scope, unbounded)
        # the carry: a test leaf (z or k) first, then 0-2 other leaves
        others = [self.init_leaf(scope, allow_int=False) for _ in range(rng.choice([0, 1, 1, 2]))]
        if pattern in ("count", "long") or (pattern == "raise" and self.chance(0.5)):
            lead, test, max_steps, zero_possible = self.counter_lead(scope, pattern)
            if pattern != "raise" and not others:
                others = [self.init_leaf(scope, allow_int=False)]
        else:
            lead, test, max_steps, zero_possible = self.float_lead(scope, pattern)
        if zero_possible:
            self.features.add(f"{name}_may_zero")
            if scope.kind == "scan":
                self.features.add(f"{name}_zero_in_scan")
        inits = [lead] + others
        structure = self.carry_structure(len(inits))
        leaves = [lf for _, lf in inits]
        bounds = [lf.bound if i == 0 else max(lf.bound, 1.0) for i, lf in enumerate(leaves)]
        test_fn = self.stop_test(scope, spelling, test, leaves, structure, bounds)
        body, inner = self.stop_body(scope, name, test[0], leaves, structure, bounds)
        init_src = self.pack([e for e, _ in inits], structure)
        kw = self.checkpoints_kw(scope, name, ckpt, None, False)
        if spelling == "iterate":
            call = (f"rune.iterate({body}, {init_src}, until={test_fn}, "
                    f"max_steps={max_steps}{kw})")
        else:
            limit = "" if unbounded else f", max_steps={max_steps}"
            call = f"rune.while_loop({test_fn}, {body}, {init_src}{limit}{kw})"
        self.stop_results(scope, call, pattern, leaves, bounds, structure, inner)
        if inner.f32_reads and scope.kind == "scan":
            self.features.add(f"{name}_in_scan_reads_f32")
        if inner.f32_reads:
            self.note_read(scope, Val("", F32, (), 0.0))
        self.ckpt_open.pop()
        return True

    def nesting_features(self, scope: Scope, name: str):
        """What a loop `name` placed in `scope` is nested in."""
        if scope.depth >= 1:
            self.features.add(f"depth{scope.depth + 1}")
            self.features.add(f"{name}_in_{scope.kind}")
        if scope.remat:
            self.features.add("loop_in_remat_step")

    def while_features(self, scope: Scope, unbounded: bool):
        if not unbounded:
            self.features.add("while_bounded")
            return
        # reverse mode recomputes an unbounded loop in a loop step (its tape has no size)
        self.features.add("while_unbounded")
        if scope.kind != "top":
            self.features.add("while_unbounded_in_loop_step")
        if scope.remat:
            self.features.add("while_unbounded_in_remat_step")

    def counter_lead(self, scope: Scope, pattern: str):
        """The test leaf of a counted loop: an int counter from 0 (or from an int of the
        scope), one more a step. -> ((init, type), test, max_steps, whether the loop may
        take no step). A "long" loop takes more steps than the native tapes' first rows."""
        rng = self.rng
        k = None
        if pattern != "long":
            k = self.pick(scope, lambda v: v.dtype.kind == "i" and v.shape == ())
        if k is not None and self.chance(0.4):
            kexpr, kval = k.name, Val("", k.dtype, (), k.bound)
            self.features.add("int_counter_warm")
        else:
            d = rng.choice([I64, I32])
            kexpr, kval = f"{DT_SRC[d]}(0)", Val("", d, (), 0.0)
        zero_possible = False
        if pattern == "raise":
            test, max_steps = ("never_k", None), rng.randint(1, 4)
        elif pattern == "long":
            max_steps = rng.randint(TAPE_ROWS + 1, TAPE_ROWS + 8)
            test = ("long", max_steps)
        else:
            m = rng.choice([0, 1, 2, 3])
            max_steps = min(8, max(1, m + rng.choice([0, 0, 1, 3])))
            test = ("k", m)
            zero_possible = m == 0 or kexpr != f"{DT_SRC[kval.dtype]}(0)"
        kval.bound = max(kval.bound, float(max_steps)) + 1
        return (kexpr, kval), test, max_steps, zero_possible

    def float_lead(self, scope: Scope, pattern: str):
        """The test leaf z of a loop that stops on a float: "mono" climbs past a threshold
        (by at least 0.25 a step), "jump" jumps past 1.0 in one step, "raise" stays below
        1.5. -> ((init, type), test, max_steps, whether the loop may take no step)."""
        rng = self.rng
        z = self.pick(scope, lambda v: v.is_float and v.size > 0 and v.size <= 4)
        if z is None:
            v = self.pick(scope, lambda v: v.is_float and v.size > 0)
            z = Val(f"rnp.mean({v.name})", v.dtype, (), v.bound, v.taint or v.dtype == F32)
        self.note_read(scope, z)
        zero_possible = False
        if pattern == "mono":
            if z.bound <= 1.5 and self.chance(0.6):
                zexpr, B = z.name, z.bound
            else:
                zexpr, B = f"rnp.tanh({z.name})", 1.0
            Ts = [t for t in (-B - 0.5, -0.25, 0.0, 0.5, 1.0)
                  if math.floor((t + B) / 0.25) + 1 <= 7]
            T = rng.choice(Ts)
            need = max(0, math.floor((T + B) / 0.25) + 1)
            max_steps = min(8, max(1, need + rng.choice([0, 1])))
            zb = B + 0.75 * max_steps
            test = ("mono", T)
            zero_possible = T < B
        elif pattern == "jump":
            zexpr, B = z.name, z.bound
            max_steps = rng.randint(1, 3)
            zb = max(B, 2.5)
            test = ("jump", 1.0)
            zero_possible = B > 1.0
        else:  # raise: |tanh| < 1.5 always
            zexpr = f"rnp.tanh({z.name})"
            max_steps = rng.randint(1, 4)
            zb = 1.0
            test = ("never_z", None)
        lead = (zexpr, Val("", z.dtype, z.shape, zb, z.taint or "tanh" in zexpr and
                           z.dtype == F32))
        return lead, test, max_steps, zero_possible

    def stop_test(self, scope: Scope, spelling: str, test: tuple, leaves: list[Val],
                  structure: str, bounds: list[float]) -> str:
        """Emit iterate's `until` (true: stop) or while_loop's cond (true: go on); -> its
        name."""
        fn = self.fresh("until" if spelling == "iterate" else "cond")
        param = self.fresh("c")
        self.emit(scope, f"def {fn}({param}):")
        uscope = Scope(scope, "until", False)
        uvals = self.unpack(uscope, param, leaves, structure, True, bounds)
        stop, go = self.test_exprs(uvals, test)
        self.emit(uscope, f"return {stop if spelling == 'iterate' else go}")
        return fn

    def test_exprs(self, uvals: list[Val], test: tuple) -> tuple[str, str]:
        """(the test, its negation) on the test function's carry leaves."""
        rng = self.rng
        t0 = uvals[0].name
        kind, arg = test
        if kind in ("k", "long"):
            stop, go = f"({t0} >= {arg})", f"({t0} < {arg})"
            fl = [v for v in uvals[1:] if v.is_float]
            if kind == "k" and fl and self.chance(0.5):  # a "long" loop takes all its steps
                v = rng.choice(fl)
                red = v.name if v.shape == () else f"rnp.{rng.choice(['max', 'sum'])}({v.name})"
                t = rng.choice(['0.5', '0.25', '-0.5'])
                stop, go = f"{stop} | {gt(red, t)}", f"{go} & {gt(t, red)}"
                self.features.add("until_mixed")
            return stop, go
        if kind == "never_k":
            return f"({t0} < 0)", f"({t0} >= 0)"
        if kind == "never_z":
            top = f"rnp.max(rnp.abs({t0}))"
            return gt(top, "1.5"), gt("1.5", top)
        # mono / jump: the smallest element passes the threshold
        red = t0 if uvals[0].shape == () else f"rnp.min({t0})"
        return gt(red, repr(float(arg))), gt(repr(float(arg)), red)

    def stop_body(self, scope: Scope, name: str, kind: str, leaves: list[Val],
                  structure: str, bounds: list[float]) -> tuple[str, Scope]:
        """Emit the loop's step: its test leaf moves toward the test (a counter counts), the
        other leaves are new carries. -> (its name, its scope)."""
        rng = self.rng
        body = self.fresh("body")
        bparam = self.fresh("c")
        self.emit(scope, f"def {body}({bparam}):")
        inner = Scope(scope, name, False)
        cvals = self.unpack(inner, bparam, leaves, structure, True, bounds)
        self.block(inner, rng.randint(1, 2))
        news = [self.lead_step(inner, cvals[0], kind)]
        news += [self.new_carry(inner, c) for c in cvals[1:]]
        news = self.maybe_traced_index(inner, news, cvals, 1)  # not the test's leaf
        self.emit(inner, f"return {self.pack(news, structure)}")
        return body, inner

    def lead_step(self, inner: Scope, c: Val, kind: str) -> str:
        """Emit the step's new value of test leaf c (toward passing the test, but for
        "never_*"); -> its name."""
        if kind in ("k", "never_k"):
            return self.new_carry(inner, c)  # a counter: up by 1 or 2
        name = self.fresh("n")
        if kind == "long":  # up by 1: the loop takes all its steps
            self.emit(inner, f"{name} = {c.name} + 1")
            return name
        u = self.pick(inner, lambda v: v.is_float, local_weight=4.0) or c
        self.note_read(inner, u)
        ue = self.fit(inner, u, c.shape)
        if kind == "mono":
            expr = f"{c.name} + (0.5 + 0.25 * rnp.tanh({ue}))"
        elif kind == "jump":
            expr = f"rnp.tanh({c.name} + {ue}) * 0.5 + 2.0"
        else:
            expr = f"rnp.tanh({c.name} * 0.5 + {ue})"
        if np.result_type(c.dtype, u.dtype) != c.dtype:
            expr = f"({expr}).astype({DT_SRC[c.dtype]})"
        if c.dtype == F32 or u.taint or u.dtype == F32:
            spread_taint(inner)
        self.emit(inner, f"{name} = {expr}")
        return name

    def stop_results(self, scope: Scope, call: str, pattern: str, leaves: list[Val],
                     bounds: list[float], structure: str, inner: Scope):
        """Emit the loop's call, binding the carry leaves the program keeps."""
        taint = inner.taint or any(lf.taint for lf in leaves)
        carry_dep = scope.kind != "top"
        outs = [Val(self.fresh(), lf.dtype, lf.shape, b, taint or lf.taint, carry_dep)
                for lf, b in zip(leaves, bounds)]
        keep = [self.chance(0.85) for _ in outs]
        if pattern != "raise" and not any(keep):
            keep[-1] = True
        names = [v.name if k else "_" for v, k in zip(outs, keep)]
        if not any(keep):
            self.emit(scope, call)
            self.features.add("loop_unused")
        else:
            self.emit(scope, f"{self.pack(names, structure)} = {call}")
        for v, k in zip(outs, keep):
            if k:
                v.from_loop = True
                scope.vals.append(v)
                self.mark(scope, v)


def generate(seed: int) -> Program:
    return Gen(seed).program()


# ------------------------------------------------------------- the reference


class Recorder:
    """The smallest relative gap seen at a comparison, a maximum or a max reduction."""

    def __init__(self):
        self.on = True
        self.gap = math.inf

    def note(self, gaps, scale):
        if not self.on:
            return
        gaps = np.abs(np.asarray(gaps, np.float64))
        gaps = gaps[gaps > 0]
        if gaps.size:
            self.gap = min(self.gap, float(gaps.min()) / max(1.0, float(scale)))


REC = Recorder()


def _gt(a, b):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0))
    REC.note(np.asarray(a, np.float64) - np.asarray(b, np.float64), scale)
    return a > b


class RefNumpy:
    """rune_jit.numpy as plain NumPy, with recording maximum and max."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def maximum(a, b):
        a, b = np.asarray(a), np.asarray(b)
        REC.note(np.asarray(a, np.float64) - np.asarray(b, np.float64),
                 max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0)))
        return np.maximum(a, b)

    @staticmethod
    def argmax(a):
        """The first maximum's index; how near a tie it is, recorded as max records it."""
        RefNumpy.max(a)
        return np.argmax(a)

    @staticmethod
    def max(a, axis=None, keepdims=False):
        a = np.asarray(a)
        top = np.max(a, axis=axis, keepdims=True)
        second = np.max(np.where(a < top, a, -np.inf), axis=axis, keepdims=True)
        gaps = (top - second)[np.isfinite(second)]
        REC.note(gaps, np.max(np.abs(a), initial=0.0))
        return np.max(a, axis=axis, keepdims=keepdims)


def _flatten(t) -> tuple[list, Any]:
    if t is None:
        return [], None
    if isinstance(t, (tuple, list)):
        leaves, defs = [], []
        for x in t:
            lv, d = _flatten(x)
            leaves += lv
            defs.append((len(lv), d))
        return leaves, ("tuple", tuple(defs))
    return [t], "leaf"


def _unflatten(d, leaves: list):
    if d is None:
        return None
    if d == "leaf":
        return leaves[0]
    out, i = [], 0
    for n, sub in d[1]:
        out.append(_unflatten(sub, leaves[i:i + n]))
        i += n
    return tuple(out)


def _leaf_type(x):
    if isinstance(x, float):
        return (np.dtype(np.float64), ())
    if isinstance(x, (bool, int)) and not isinstance(x, np.generic):
        return (np.dtype(np.int64), ())
    x = np.asarray(x)
    return (x.dtype, x.shape)


def _check_carry(who, init, new):
    li, di = _flatten(init)
    ln, dn = _flatten(new)
    if di != dn or [_leaf_type(x) for x in li] != [_leaf_type(x) for x in ln]:
        raise TypeError(f"reference {who}: the step returns {[_leaf_type(x) for x in ln]} "
                        f"({dn}) for a carry of {[_leaf_type(x) for x in li]} ({di})")


class RefRune:
    """rune_jit's loops as Python loops over NumPy values (their documented meaning)."""

    IterateError = rune.IterateError

    @staticmethod
    def scan(f, init, xs=None, length=None, reverse=False, checkpoints="all"):
        """checkpoints= changes what reverse mode keeps, not what the loop computes."""
        xl, xd = _flatten(xs)
        n = length if length is not None else len(xl[0])
        assert all(len(x) == n for x in xl)
        carry, ys = init, [None] * n
        for i in (reversed(range(n)) if reverse else range(n)):
            new, ys[i] = f(carry, _unflatten(xd, [x[i] for x in xl]))
            _check_carry("scan", init, new)
            carry = new
        if n == 0:  # the ys' types: a step on zero rows, not recorded
            was, REC.on = REC.on, False
            try:
                _, y = f(init, _unflatten(xd, [np.zeros(x.shape[1:], x.dtype) for x in xl]))
            finally:
                REC.on = was
            leaves, yd = _flatten(y)
            return carry, _unflatten(yd, [np.zeros((0,) + _leaf_type(v)[1], _leaf_type(v)[0])
                                          for v in leaves])
        leaves0, yd = _flatten(ys[0])
        per = [_flatten(y)[0] for y in ys]
        stacked = [np.stack([np.asarray(p[j], _leaf_type(leaves0[j])[0]) for p in per])
                   for j in range(len(leaves0))]
        return carry, _unflatten(yd, stacked)

    @staticmethod
    def iterate(step, init, *, until, max_steps, checkpoints="all"):
        c, n = init, 0
        while not bool(until(c)):
            if n == max_steps:
                raise rune.IterateError(f"reference iterate: still running after {max_steps}")
            new = step(c)
            _check_carry("iterate", init, new)
            c, n = new, n + 1
        return c

    @staticmethod
    def while_loop(cond, body, init, max_steps=None, checkpoints="all"):
        """No step limit without max_steps; checkpoints= as scan's."""
        c, n = init, 0
        while bool(cond(c)):
            if n == max_steps:
                raise rune.IterateError(f"reference while_loop: still running after "
                                        f"{max_steps}")
            new = body(c)
            _check_carry("while_loop", init, new)
            c, n = new, n + 1
        return c

    checkpoint_policies = rune.checkpoint_policies

    @staticmethod
    def remat(f, policy=None):
        """Rematerializing changes what reverse mode keeps, not what f computes."""
        return f


def _at_set(x, i, y):
    out = np.array(x)
    out[i] = y
    return out


def _at_add(x, i, y):
    out = np.array(x)
    out[i] += y
    return out


def ref_namespace() -> dict:
    return {"np": np, "rune": RefRune, "rnp": RefNumpy(), "_gt": _gt, "_at_set": _at_set,
            "_at_add": _at_add}


def run_ref(prog: Program, args: list) -> tuple[str, Any, float]:
    """('ok', outputs, smallest gap) or ('err', exception, gap) of the reference run."""
    f = prog.build(ref=True)
    REC.on, REC.gap = True, math.inf
    with np.errstate(all="ignore"):
        try:
            out = f(*[a.copy() for a in args])
            return "ok", out, REC.gap
        except Exception as e:  # noqa: BLE001
            return "err", e, REC.gap


# ------------------------------------------------------------- comparing

# float64 values: rounding differs by a few ulp per operation (libmvec's transcendentals
# are within 4 ulp), a few dozen operations deep
RTOL_F64 = 1e-9
# values that went through float32 arithmetic
RTOL_F32 = 1e-4
# inputs are redrawn until every comparison, maximum and max reduction of the reference
# run is at least this far (relative) from a tie: the paths round apart by less. A
# program with float32 anywhere in it may compare values that float32 rounding moved.
TIE_MARGIN_F64 = 1e-8
TIE_MARGIN_F32 = 1e-4
# check_grads steps the inputs by 1e-4 along a normal direction; the central difference
# is only meaningful when no comparison flips inside that step
FD_MARGIN = 2e-2
FD_MARGIN_F32 = 1e-1
ATTEMPTS = 16
# vmap against a loop over the lanes: a batched path may round in another order (a
# batched dot product sums its terms in another order), and a program's steps can
# amplify that rounding past RTOL_F64 (seed 1694: 19 steps of x <- sin(x + x @ x), gain
# 1e7). Only when the comparison fails, every float argument of each lane is moved by
# NOISE_ULPS ulps of its dtype (random signs, NOISE_DIRECTIONS times) and the
# interpreter's outputs rerun: NOISE_FACTOR times the largest move they make is that
# lane's rounding allowance, on top of the rtol, and never more than NOISE_CAP of the
# leaf's scale, so that a program amplifying rounding past that still fails.
NOISE_ULPS = 4
NOISE_DIRECTIONS = 3
NOISE_FACTOR = 8
NOISE_CAP = 1e-6


def compare(got, want, rtols: list[float] | float, what: str,
            noise: list | None = None) -> list[str]:
    """noise: per leaf, an absolute allowance broadcast against the leaf, or None."""
    gl, gd = _flatten(got)
    wl, wd = _flatten(want)
    if gd != wd:
        return [f"{what}: structure {gd}, expected {wd}"]
    if not isinstance(rtols, list):
        rtols = [rtols] * len(wl)
    noise = [0.0] * len(wl) if noise is None else noise
    out = []
    for i, (g, w, rt, nz) in enumerate(zip(gl, wl, rtols, noise)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            out.append(f"{what}: leaf {i} is {g.dtype}{list(g.shape)}, expected "
                       f"{w.dtype}{list(w.shape)}")
            continue
        if math.isinf(rt):  # a loose comparison: structure and dtypes only
            continue
        if w.dtype.kind != "f":
            if not np.array_equal(g, w):
                out.append(f"{what}: leaf {i} = {g.tolist()}, expected {w.tolist()}")
            continue
        if not np.all(np.isfinite(w)) or not np.all(np.isfinite(g)):
            if not np.array_equal(np.isnan(g), np.isnan(w)) or not np.allclose(
                    np.nan_to_num(g), np.nan_to_num(w), rtol=rt, atol=rt):
                out.append(f"{what}: leaf {i} = {g!r}, expected {w!r} (not finite)")
            continue
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        err = np.abs(g.astype(np.float64) - w.astype(np.float64))
        nz = np.minimum(nz, NOISE_CAP * scale)
        if not np.all(err <= rt * np.abs(w.astype(np.float64)) + rt * scale + nz):
            extra = f", rounding allowance up to {np.max(nz):.3g}" if np.any(nz) else ""
            out.append(f"{what}: leaf {i} ({w.dtype}{list(w.shape)}) = "
                       f"{np.array2string(g, precision=10)}, expected "
                       f"{np.array2string(w, precision=10)} (max error {err.max():.3g}, "
                       f"rtol {rt:g}{extra})")
    return out


def outcome(fn: Callable) -> tuple[str, Any]:
    try:
        with np.errstate(all="ignore"):
            return "ok", fn()
    except Exception as e:  # noqa: BLE001
        return "err", e


@contextlib.contextmanager
def backend(name: str):
    old = config.backend
    config.backend = name
    try:
        yield
    finally:
        config.backend = old


def describe(res) -> str:
    kind, v = res
    if kind == "ok":
        return "returned"
    text = f"{type(v).__name__}: {v}"
    return text if len(text) < 600 else text[:600] + " ..."


def check_paths(results: dict, expect_raise: bool, want, rtols, what: str,
                noise: list | None = None) -> list[str]:
    """results: path name -> outcome; want: the oracle's value (None: the first path's);
    noise: as compare's."""
    fails = []
    raised = {p: r for p, r in results.items() if r[0] == "err"}
    if expect_raise:
        for p, r in results.items():
            if r[0] != "err":
                fails.append(f"{what}: {p} returned, but the program must raise IterateError")
            elif not isinstance(r[1], rune.IterateError):
                fails.append(f"{what}: {p} raised {describe(r)}, expected IterateError")
        return fails
    if raised:
        for p, r in raised.items():
            tb = "".join(traceback.format_exception(r[1])[-6:])
            fails.append(f"{what}: {p} raised {describe(r)} (the others returned)\n{tb}")
        return fails
    names = list(results)
    if want is None:
        want = results[names[0]][1]
        names = names[1:]
    for p in names:
        fails += compare(results[p][1], want, rtols, f"{what}: {p}", noise)
    return fails


# ------------------------------------------------------------- the checks of one seed

MODES = ("grad", "jvp", "vmap")


def modes_for(seed: int) -> list[str]:
    """What program `seed` is checked for, as "check:compiled paths". Every program: its
    value on the three paths. In rotation, one transformation (grad, jvp, vmap) on the
    interpreter and one compiled path (eager native or jit, alternating: each pair on a
    sixth of the seeds); for one seed in five, check_grads against central differences.
    A jvp returns the program's value with its tangents: where the jvp is checked on a
    compiled path, that path's value is checked there and not compiled again.
    Most of the cost is LLVM compiling: this keeps it to about three compiles a program.
    A program with a while_loop without max_steps in a loop step, which reverse mode
    recomputes in the outer step's backward pass, also has the vmap of its grad checked
    (whose batched backward loops are counted scans), on the other compiled path: that
    check runs the interpreter's grad of every lane too. So has a program checked for
    vmap with an iterate or while_loop taking checkpoints= (lanes that stop apart keep
    their own snapshots)."""
    t = MODES[seed % 3]
    paths = PATHS[(seed // 3) % 2]
    other = PATHS[(seed // 3 + 1) % 2]
    modes = [f"value:{other}" if t == "jvp" else "value:native+jit", f"{t}:{paths}"]
    features = generate(seed).features
    # reverse mode of lanes stopping apart: an unbounded loop recomputed in a loop step,
    # or the online checkpointing of a stopping loop, each lane its own snapshots
    if "while_unbounded_in_loop_step" in features or t == "vmap" and (
            "checkpoints_iterate" in features or "checkpoints_while" in features):
        modes.append(f"vmap_grad:{other}")
    if seed % 5 == 2:
        modes.append("fd")
    return modes


def find_inputs(prog: Program, margin: float, examples: int = 1):
    """(attempt, per-example args, ref outcomes) for the first attempt whose reference runs
    keep `margin` from every tie, or None."""
    for attempt in range(ATTEMPTS):
        exs = [prog.inputs(attempt, e) for e in range(examples)]
        refs = [run_ref(prog, ex) for ex in exs]
        if all(r[2] >= margin for r in refs):
            return attempt, exs, refs
    return None


PATHS = ("native", "jit")


@dataclass
class Case:
    """One program at the inputs its checks use."""
    seed: int
    prog: Program
    f: Callable  # the program as rune_jit runs it
    attempt: int
    args: list
    ref: Any  # the reference's outputs
    stats: dict
    loose: bool = False  # no draw of inputs stays clear of ties: values are not compared

    @property
    def out_rtols(self) -> list[float]:
        if self.loose:
            return [math.inf] * len(self.prog.outputs)
        return [RTOL_F32 if (o.taint or o.dtype == F32) else RTOL_F64
                for o in self.prog.outputs]

    @property
    def tr_rtol(self) -> float:
        """Derivatives mix every output's rounding: float32 anywhere loosens them all."""
        if self.loose:
            return math.inf
        return RTOL_F32 if self.prog.any_f32 else RTOL_F64


def check_value(c: Case, paths=PATHS) -> list[str]:
    res = on_paths(c.f, c.args, paths)
    fails = []
    oracle = res["interpreter"]
    if oracle[0] == "ok" and not c.prog.raising:
        fails += compare(oracle[1], c.ref, c.out_rtols, "value: interpreter vs NumPy reference")
    return fails + check_paths(res, c.prog.raising, None, c.out_rtols, "value")


def on_paths(fn: Callable, args: list, paths) -> dict:
    """fn(*args) on the interpreter and on the compiled `paths` ("native": eager calls
    with loops compiled, "jit": rune.jit(fn))."""
    with backend("interpret"):
        res = {"interpreter": outcome(lambda: fn(*args))}
    if "native" in paths:
        res["eager native"] = outcome(lambda: fn(*args))
    if "jit" in paths:
        res["jit"] = outcome(lambda: rune.jit(fn)(*args))
    return res


def check_grad(c: Case, paths=PATHS) -> list[str]:
    """grad on the paths; a program with checkpoints= against the interpreter's grad of
    the program without them (the tape's: the same to rounding, whatever k)."""
    argnums = tuple(range(len(c.args)))
    res = {}
    if c.prog.tape_source:
        tape = rune.grad(c.prog.scalar(c.prog.build(tape=True)), argnums=argnums)
        with backend("interpret"):
            res["interpreter without checkpoints="] = outcome(lambda: tape(*c.args))
    g = rune.grad(c.prog.scalar(c.f), argnums=argnums)
    res.update(on_paths(g, c.args, paths))
    return check_paths(res, c.prog.raising, None, c.tr_rtol, "grad")


def jvp_tangents(c: Case) -> list:
    rng = np.random.default_rng([c.seed, c.attempt, 99])
    return [rng.standard_normal(np.shape(a)).astype(a.dtype) for a in c.args]


def check_jvp(c: Case, paths=PATHS) -> list[str]:
    n, f = len(c.args), c.f
    tans = jvp_tangents(c)

    def jv(*at):
        return rune.jvp(f, tuple(at[:n]), tuple(at[n:]))

    res = on_paths(jv, c.args + tans, paths)
    rtols = c.out_rtols + [c.tr_rtol] * len(c.prog.outputs)
    fails = []
    oracle = res["interpreter"]
    if oracle[0] == "ok" and not c.prog.raising:  # the value, for the path it stands in for
        fails += compare(tuple(oracle[1][0]), c.ref, c.out_rtols,
                         "jvp: the interpreter's primal vs NumPy reference")
    return fails + check_paths(res, c.prog.raising, None, rtols, "jvp")


def check_fd(c: Case, paths=()) -> list[str]:
    """check_grads (reverse mode) against central differences, on the interpreter."""
    prog = c.prog
    if prog.raising:
        return []
    # Central differences err by rounding (float32: 6e-8 / eps, relative) and by
    # truncation (eps^2 times the third derivative, large through a few tanh steps of
    # gain 2): programs with float32 in them step by 1e-3 and keep further from ties.
    # A wrong derivative disagrees at every step; the check fails only if no step agrees.
    steps, margin = ((1e-3, 3e-3, 3e-4), FD_MARGIN_F32) if prog.any_f32 else (
        (1e-4, 1e-5, 1e-3), FD_MARGIN)
    fd = find_inputs(prog, margin)
    if fd is None:
        c.stats["fd_tied"] = c.stats.get("fd_tied", 0) + 1
        return []
    _, (fargs,), _ = fd
    errors = []
    for eps in steps:
        with backend("interpret"):
            r = outcome(lambda eps=eps: rune.check_grads(prog.scalar(c.f), *fargs, eps=eps,
                                                 modes=("rev",)))
        if r[0] == "ok":
            return []
        errors.append(f"eps={eps}: {describe(r)}")
        if not isinstance(r[1], rune.GradCheckError):
            break
    else:
        noise = within_rounding(c, fargs, steps)
        if noise:
            c.stats["fd_noise"] = c.stats.get("fd_noise", 0) + 1
            return []
    return ["check_grads (interpreter) at every step:\n    " + "\n    ".join(errors)
            + "\n  at arguments " + ", ".join(show_array(a) for a in fargs)]


def within_rounding(c: Case, args: list, steps) -> bool:
    """Whether, at some step, a central difference of the scalar along a random direction
    agrees with the gradient up to 1e-2 plus the rounding noise of the two evaluations
    (check_grads' test has no allowance for that noise, which dominates a derivative near
    0 when the outputs are float32). Both sides are taken along the step the arguments'
    dtypes actually hold."""
    scalar = c.prog.scalar(c.f)
    n = len(args)
    rng = np.random.default_rng([c.seed, 5])
    vs = [rng.standard_normal(np.shape(a)) for a in args]
    ulp = 2.0 ** -23 if c.prog.any_f32 else 2.0 ** -52
    with backend("interpret"), np.errstate(all="ignore"):
        grads = rune.grad(scalar, argnums=tuple(range(n)))(*args)
        size = 1.0 + sum(float(np.sum(np.abs(np.asarray(o, np.float64))))
                         for o, fl in zip(c.f(*args), c.prog.float_outputs) if fl)
        for eps in steps:
            hi = [np.asarray(a + eps * v).astype(a.dtype) for a, v in zip(args, vs)]
            lo = [np.asarray(a - eps * v).astype(a.dtype) for a, v in zip(args, vs)]
            fd = (float(scalar(*hi)) - float(scalar(*lo))) / 2
            ad = sum(float(np.vdot(np.asarray(g, np.float64),
                                   (h.astype(np.float64) - w.astype(np.float64)) / 2))
                     for g, h, w in zip(grads, hi, lo))
            if abs(fd - ad) <= 1e-2 * max(abs(fd), abs(ad)) + 16 * ulp * size:
                return True
    return False


CHECKS = {"value": check_value, "grad": check_grad, "jvp": check_jvp, "fd": check_fd}


def check_seed(seed: int, modes: list[str] | None = None, stats: dict | None = None
               ) -> list[str]:
    """Every check `modes_for(seed)` names, on program `seed`; -> failures as text."""
    stats = {} if stats is None else stats
    prog = generate(seed)
    modes = modes_for(seed) if modes is None else modes
    found = find_inputs(prog, prog.tie_margin)
    loose = found is None
    if loose:  # every draw comes close to a tie: compare structure, dtypes, raising only
        stats["tied"] = stats.get("tied", 0) + 1
        found = find_inputs(prog, 0.0)
    attempt, (args,), ((rk, rv, _),) = found
    if rk == "err" and not (prog.raising and isinstance(rv, rune.IterateError)):
        return [f"the reference raised {type(rv).__name__}: {rv} (a generator bug)\n"
                + "".join(traceback.format_exception(rv)[-4:])]
    if prog.raising and rk == "ok":
        return ["the reference returned, but the program was written to raise"]
    case = Case(seed, prog, prog.build(), attempt, args, rv, stats, loose)
    fails: list[str] = []
    for mode in modes:
        name, _, paths = mode.partition(":")
        stats[mode] = stats.get(mode, 0) + 1
        t0 = time.perf_counter()
        try:
            fails += CHECKS[name](case, *([tuple(paths.split("+"))] if paths else []))
        finally:
            stats[f"{name}_s"] = stats.get(f"{name}_s", 0.0) + time.perf_counter() - t0
    if fails:
        fails.insert(0, f"arguments (attempt {attempt}): "
                        + ", ".join(f"a{i} = {show_array(a)}" for i, a in enumerate(args)))
    return fails


def vmap_axes(prog: Program, seed: int) -> tuple:
    rng = random.Random(seed * 7 + 3)
    axes = []
    for _, s in prog.args:
        opts = [0, 0, None] + ([1, -1] if len(s) >= 1 else [])
        axes.append(rng.choice(opts))
    if all(a is None for a in axes):
        axes[0] = 0
    return tuple(axes), rng.choice([2, 3])


def vmap_inputs(prog: Program, seed: int, margin: float):
    """-> (in_axes, lanes, each lane's arguments, the batched arguments, whether the
    reference runs of every lane keep `margin` from ties)."""
    axes, size = vmap_axes(prog, seed)

    def draw(attempt):
        exs = [prog.inputs(attempt, e) for e in range(size)]
        for k, ax in enumerate(axes):
            if ax is None:
                for ex in exs:
                    ex[k] = exs[0][k]
        return exs

    def batch(exs):
        return [exs[0][k] if ax is None else np.stack([ex[k] for ex in exs], axis=ax)
                for k, ax in enumerate(axes)]

    for attempt in range(ATTEMPTS):
        exs = draw(attempt)
        if margin <= 0 or all(run_ref(prog, ex)[2] >= margin for ex in exs):
            return axes, size, exs, batch(exs), True
    exs = draw(0)
    return axes, size, exs, batch(exs), False


def check_vmap(c: Case, paths=PATHS) -> list[str]:
    """vmap on the three paths against a loop of the interpreter over the lanes."""
    return vmap_against_lanes(c, c.f, c.out_rtols, paths, "vmap")


def check_vmap_grad(c: Case, paths=PATHS) -> list[str]:
    """vmap of grad (every argument's) on the three paths against the interpreter's grad
    of each lane."""
    g = rune.grad(c.prog.scalar(c.f), argnums=tuple(range(len(c.args))))
    return vmap_against_lanes(c, g, [c.tr_rtol] * len(c.args), paths, "vmap(grad)")


def vmap_against_lanes(c: Case, f: Callable, out_rtols: list[float], paths,
                       name: str) -> list[str]:
    """vmap(f) on the interpreter and `paths` against a loop of the interpreter's f over
    the lanes; f returns a tuple, out_rtols has a tolerance per leaf."""
    prog, seed, expect_raise, stats = c.prog, c.seed, c.prog.raising, c.stats
    axes, size, exs, batched, clear = vmap_inputs(prog, seed, 0.0 if c.loose else
                                                  prog.tie_margin)
    if not clear:  # every draw comes near a tie: structure, dtypes and raising only
        stats["vmap_tied"] = stats.get("vmap_tied", 0) + 1
        out_rtols = [math.inf] * len(out_rtols)
    fails = []
    with backend("interpret"):
        loop = [outcome(lambda ex=ex: f(*ex)) for ex in exs]
    what = f"{name}(in_axes={axes}, {size} lanes)"
    if expect_raise:
        want = None
        for i, r in enumerate(loop):
            if r[0] != "err" or not isinstance(r[1], rune.IterateError):
                fails.append(f"{what}: the interpreter on lane {i} {describe(r)}, expected "
                             "IterateError")
    else:
        bad = [(i, r) for i, r in enumerate(loop) if r[0] == "err"]
        if bad:
            return [f"{what}: the interpreter raised on lane {i}: {describe(r)}"
                    for i, r in bad]
        want = tuple(np.stack([np.asarray(r[1][j]) for r in loop])
                     for j in range(len(out_rtols)))
    vf = rune.vmap(f, in_axes=axes)
    res = on_paths(vf, batched, paths)
    if expect_raise:
        return fails + check_paths(res, True, None, out_rtols, what)
    what += " against a loop of the interpreter over the lanes"
    fails = check_paths(res, False, want, out_rtols, what)
    if fails and not any(r[0] == "err" for r in res.values()):
        noise = rounding_noise(f, exs, [r[1] for r in loop], seed)
        fails = check_paths(res, False, want, out_rtols, what, noise)
        if not fails:
            stats["vmap_noise"] = stats.get("vmap_noise", 0) + 1
    return fails


def rounding_noise(f: Callable, exs: list, outs: list, seed: int) -> list[np.ndarray]:
    """Per leaf of f's outputs, an allowance per lane (shaped to broadcast against the
    lanes stacked on axis 0): NOISE_FACTOR times the most the interpreter's f(*ex) moves
    when every float argument moves by NOISE_ULPS ulps (see NOISE_ULPS)."""
    rng = np.random.default_rng([seed, 11])
    leaves = [_flatten(o)[0] for o in outs]
    moved = np.zeros((len(exs), len(leaves[0])))
    with backend("interpret"):
        for lane, ex in enumerate(exs):
            for _ in range(NOISE_DIRECTIONS):
                near = [a * (1 + NOISE_ULPS * np.finfo(a.dtype).eps
                             * rng.choice([-1.0, 1.0], np.shape(a))).astype(a.dtype)
                        if a.dtype.kind == "f" else a for a in ex]
                r = outcome(lambda near=near: _flatten(f(*near))[0])
                for j, w in enumerate(leaves[lane]):
                    w = np.asarray(w)
                    if w.dtype.kind != "f":
                        continue
                    d = (np.inf if r[0] == "err" else float(np.max(np.abs(
                        np.asarray(r[1][j], np.float64) - w.astype(np.float64)),
                        initial=0.0)))
                    moved[lane, j] = max(moved[lane, j], d)
    return [NOISE_FACTOR * moved[:, j].reshape((-1,) + (1,) * np.ndim(leaves[0][j]))
            for j in range(moved.shape[1])]


CHECKS["vmap"] = check_vmap
CHECKS["vmap_grad"] = check_vmap_grad


def show_array(a: np.ndarray) -> str:
    body = repr(a.tolist()) if a.shape else repr(float(a))
    return f"np.array({body}, dtype=np.{a.dtype})"


# ------------------------------------------------------------- running seeds


def report(seed: int, fails: list[str]) -> str:
    prog = generate(seed)
    return (f"seed {seed} ({', '.join(modes_for(seed))}): "
            + "\n  ".join(fails) + "\n--- program (python tests/fuzz_programs.py "
            + f"{seed} prints a repro script) ---\n{prog.source}")


def run_seeds(seeds, out=None) -> tuple[list[str], dict]:
    """Check seeds in this process; `out(line)` hears each seed start and end."""
    reports, stats = [], {"programs": 0}
    for seed in seeds:
        if out:
            out(json.dumps({"start": seed}))
        st = {"programs": 1}
        try:
            fails = check_seed(seed, stats=st)
        except Exception:  # noqa: BLE001 (the runner itself: report, go on)
            fails = ["the fuzzer raised:\n" + traceback.format_exc()]
        merge_stats(stats, st)
        if fails:
            reports.append(report(seed, fails))
        if out:
            out(json.dumps({"done": seed, "report": reports[-1] if fails else None,
                            "stats": st}))
    return reports, stats


def merge_stats(into: dict, more: dict) -> dict:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v
    return into


SEED_TIMEOUT = float(os.environ.get("RUNE_JIT_FUZZ_TIMEOUT", "300"))


def run_chunk(seeds) -> tuple[list[str], dict]:
    """run_seeds in forked children: a child that dies (a signal, an abort) or hangs is
    reported as a failure of the seed it was running, and a new child takes the rest."""
    seeds = list(seeds)
    if os.environ.get("RUNE_JIT_FUZZ_ISOLATE", "1") == "0" or not hasattr(os, "fork"):
        return run_seeds(seeds)
    reports: list[str] = []
    stats = {"programs": 0}
    todo = seeds
    while todo:
        r, w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(r)
            code = 0
            try:
                with os.fdopen(w, "w") as pipe:
                    def out(line):
                        pipe.write(line + "\n")
                        pipe.flush()
                    run_seeds(todo, out)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 3
            finally:
                os._exit(code)
        os.close(w)
        current, done = None, set()
        buf = b""
        deadline = time.monotonic() + SEED_TIMEOUT
        died = None
        with os.fdopen(r, "rb", buffering=0) as pipe:
            while True:
                ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    os.kill(pid, signal.SIGKILL)
                    died = f"hung (no result after {SEED_TIMEOUT:.0f} s; killed)"
                    break
                data = pipe.read(65536)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    msg = json.loads(line)
                    if "start" in msg:
                        current = msg["start"]
                        deadline = time.monotonic() + SEED_TIMEOUT
                    elif "done" in msg:
                        done.add(msg["done"])
                        current = None
                        if msg["report"]:
                            reports.append(msg["report"])
                        merge_stats(stats, msg["stats"])
        _, status = os.waitpid(pid, 0)
        if died is None and status != 0:
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                died = f"crashed: killed by signal {sig} ({signal.Signals(sig).name})"
            else:
                died = f"crashed: exit status {os.WEXITSTATUS(status)}"
        if died is not None:
            if current is not None:
                reports.append(report(current, [died]))
                done.add(current)
                stats["programs"] += 1
            else:
                reports.append(f"a fuzz child {died} between seeds")
                break
        todo = [s for s in todo if s not in done]
        if died is None:
            break
    return reports, stats


def isolated(fn: Callable, timeout: float = SEED_TIMEOUT) -> tuple[str, Any]:
    """fn() in a forked child, so that a crash cannot take this process down.
    -> ("ok", fn's result) or ("err", the exception), or ("crash", what happened)."""
    import pickle

    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            try:
                res = ("ok", fn())
            except Exception as e:  # noqa: BLE001
                res = ("err", e)
            try:
                data = pickle.dumps(res)
            except Exception:  # noqa: BLE001
                data = pickle.dumps(("err", RuntimeError(f"unpicklable result: {res!r}")))
            with os.fdopen(w, "wb") as pipe:
                pipe.write(data)
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    with os.fdopen(r, "rb", buffering=0) as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "crash", f"hung (no result after {timeout:.0f} s; killed)"
            data = pipe.read(1 << 20)
            if not data:
                break
            chunks.append(data)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return "crash", f"killed by signal {sig} ({signal.Signals(sig).name})"
    if not chunks:
        return "crash", f"exit status {os.WEXITSTATUS(status)} and no result"
    return pickle.loads(b"".join(chunks))


# ------------------------------------------------------------- repro scripts


def repro_script(seed: int) -> str:
    """A standalone script of one seed: the program, its arguments, and its checks."""
    prog = generate(seed)
    found = find_inputs(prog, prog.tie_margin)
    attempt = found[0] if found else 0
    args = prog.inputs(attempt)
    names = [f"a{i}" for i in range(len(args))]
    lines = [
        f"# fuzz seed {seed}: modes {modes_for(seed)}",
        "import os",
        "os.environ.setdefault('RUNE_JIT_VERIFY', '1')  # as the test suite runs",
        "import numpy as np",
        "import rune_jit as rune",
        "import rune_jit.numpy as rnp",
        "from rune_jit import config",
        "",
        prog.source.rstrip(),
        "",
    ]
    lines += [f"{n} = {show_array(a)}" for n, a in zip(names, args)]
    mask = prog.float_outputs
    lines += [
        f"args = ({', '.join(names)},)",
        "",
        "def scalar(*a):",
        "    outs = prog(*a)",
        f"    return sum(rnp.sum(o) for o, fl in zip(outs, {mask}) if fl)",
        "",
        "def paths(f, *a):",
        "    config.backend = 'interpret'",
        "    for name, call in [('interpreter', lambda: f(*a)),",
        "                       ('eager native', lambda: f(*a)),",
        "                       ('jit', lambda: rune.jit(f)(*a))]:",
        "        try:",
        "            print(name, call())",
        "        except Exception as e:",
        "            print(name, 'raised', type(e).__name__, e)",
        "        config.backend = 'native'",
        "",
        "paths(prog, *args)",
        f"paths(rune.grad(scalar, argnums={tuple(range(len(args)))}), *args)",
    ]
    if any(m.startswith("jvp") for m in modes_for(seed)):
        lines += [
            f"rng = np.random.default_rng([{seed}, {attempt}, 99])",
            "tans = [rng.standard_normal(np.shape(a)).astype(a.dtype) for a in args]",
            "paths(lambda *at: rune.jvp(prog, at[:len(args)], at[len(args):]), *args, *tans)",
        ]
    if any(m.startswith("vmap") for m in modes_for(seed)):
        axes, size, exs, batched, _ = vmap_inputs(prog, seed, prog.tie_margin)
        lines += [f"# vmap over {size} lanes, in_axes={axes}; the lanes' arguments:"]
        lines += ["lanes = [" + ", ".join(
            "(" + ", ".join(show_array(a) for a in ex) + ",)" for ex in exs) + "]"]
        lines += [f"batched = [{', '.join(show_array(a) for a in batched)}]",
                  "config.backend = 'interpret'",
                  "print('per lane', [prog(*ex) for ex in lanes])",
                  f"paths(rune.vmap(prog, in_axes={axes}), *batched)"]
    if any(m.startswith("vmap_grad") for m in modes_for(seed)):
        grad = f"rune.grad(scalar, argnums={tuple(range(len(args)))})"
        lines += ["config.backend = 'interpret'",
                  f"print('grad per lane', [{grad}(*ex) for ex in lanes])",
                  f"paths(rune.vmap({grad}, in_axes={axes}), *batched)"]
    lines += ["config.backend = 'interpret'",
              f"rune.check_grads(scalar, *args, eps={1e-3 if prog.any_f32 else 1e-4}, "
              "modes=('rev',))"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "check":
        for s in sys.argv[2:]:
            print(s, check_seed(int(s)))
    else:
        print(repro_script(int(sys.argv[1])))
