"""The tour of loops: `python -m rune_jit` runs it; docs/loops.md is its Markdown.

Each step is prose and code; the tour executes the code in one namespace and
shows what it prints. `python -m rune_jit --markdown` writes the page, and the
test suite checks that docs/loops.md is exactly that page, so every output in
the docs is one the code really prints.
"""

from __future__ import annotations

import contextlib
import io
import sys
import textwrap
from typing import NamedTuple


class Step(NamedTuple):
    title: str
    prose: str
    code: str


INTRO = """\
A loop applies a step to a carry. `scan` passes each step a row of its input and
stacks what the steps return; `iterate` runs until a test holds. The step is
traced once per trace of the loop, whatever the number of steps, and every
transformation of a loop is a loop of its step's transformation."""

STEPS = [
    Step("A scan and its gradient", """\
This scan computes the running product of its rows. The derivative of Π xⱼ
along xᵢ is the product of the others, 24 / xᵢ, so the gradient is
[24, 12, 8, 6].""", """\
import numpy as np
import rune_jit as rune
import rune_jit.numpy as rnp

xs = np.array([1.0, 2.0, 3.0, 4.0])

def running_product(xs):
    def step(acc, row):
        nxt = acc * row
        return nxt, nxt
    return rune.scan(step, np.float64(1.0), xs)

total, prefixes = running_product(xs)
g = rune.grad(lambda xs: running_product(xs)[0])(xs)
print(total, prefixes, g)"""),
    Step("What reverse mode keeps", """\
Reverse mode runs the loop once forward, keeping of each step only what the
step's transpose reads: here the carry `d`, stacked as `c:f64[4]`, one f64 a
step. The rows of `xs` are not copied: the second loop, the step's transpose
run from the last step to the first (`reverse=True`), reads them from `a`.""", """\
print(rune.make_ir(rune.grad(lambda xs: running_product(xs)[0]))(xs))"""),
    Step("Iterating to a tolerance", """\
`iterate` applies Newton's step for √a until the residual is below a tolerance,
at most `max_steps` times. The test comes before each step.""", """\
def newton(a, max_steps=50):
    return rune.iterate(
        lambda x: (x + a / x) / 2,
        a,
        until=lambda x: rnp.all(rnp.abs(x * x - a) < 1e-12),
        max_steps=max_steps,
    )

print(newton(np.array([4.0, 9.0])))"""),
    Step("Lanes apart", """\
Under `vmap` each lane stops on its own test, and a lane that stopped keeps its
carry while the others run: 1 satisfies the test at once and takes no step;
1e6 takes the most.""", """\
print(rune.vmap(newton)(np.array([1.0, 16.0, 1e6])).tolist())"""),
    Step("Too few steps", """\
With too small a `max_steps` the call raises, naming the first lane still
running: 1 passes at once, and 16 still fails the test after three steps.""", """\
try:
    rune.vmap(lambda a: newton(a, max_steps=3))(np.array([1.0, 16.0, 1e6]))
except rune.IterateError as err:
    print(err)"""),
    Step("What runs where: donor lanes", """\
The guarantee: under `vmap`, nothing a user can observe is computed at a point
no running lane is at. What can be observed of a step at a point is what it
does besides its result: a `check` failing (RUNE_JIT_DEBUG_NANS's checks too),
an index out of bounds (`IndexError`), an inner loop running out of steps, a
`debug.callback` or `pure_callback` calling Python. A step with any of these
(any primitive with the trait "effect", a pure callback; every step when
RUNE_JIT_DEBUG_NANS is on: `ops.loops.observable`) runs with donor lanes:
before each step, a lane that stopped takes the operands (laned values and
carry) of a running lane, its donor, computes that lane's step, and drops the
result. So a `log` only defined before the stop under RUNE_JIT_DEBUG_NANS, an
index in bounds only while the loop runs, a callback, see only running points.
The interpreter gives each stopped lane the first running lane's operands
before each step. Compiled, a lane that runs on its own (a step with
callbacks, gathers or arrays) runs no step after its stop; in a block of lanes
in SIMD registers, when lanes stop, their carries are stored and they take
the operands of the block's first running lane, whose steps they then follow
bit for bit until the next stop. The counted scans of reverse mode do the same
with the lanes past their step count.

A step of pure arithmetic gets no donors: a stopped lane in a block keeps its
carry through a select and computes the step on it, as if it did not. Nothing
can tell the two apart: the result is dropped, and compiled code raises no
floating-point traps (a `log` of a negative number there is a NaN no one
reads). The donors' copying costs a broadcast per stop (W4, vmapped Newton
whose lanes stop a step or two apart, took 2.5 ms with donors everywhere and
1.7 ms without), so the compiler keeps it to the steps where it is the
difference. The interpreter follows the same rule (its donors cost a gather
per operand and step, 10 to 30% of an interpreted W4); there the frozen point
is NumPy's, which may warn (`RuntimeWarning`) where compiled code is silent.
Here every point the callback sees is one of the 16 running ones
(1 + 3 + 8 + 4 steps).

When `until` reads nothing the map changes, the lanes stop together and
running out of steps is the loop's error, not a lane's: it names no lane.

When `until` reads nothing the map changes, the lanes stop together and
running out of steps is the loop's error, not a lane's: it names no lane.""", """\
seen = []

def countdown(a):
    def step(x):
        rune.debug.callback(lambda x: seen.append(float(x)), x)
        return x - 1.0
    return rune.iterate(step, a, until=lambda x: x < 0.5, max_steps=10)

print(rune.jit(rune.vmap(countdown))(np.array([1.0, 3.0, 8.0, 4.0])))
print(len(seen), "points, the least", min(seen))

def halvings(x):
    return rune.iterate(lambda c: (c[0] / 2, c[1] + 1), (x, 0),
                        until=lambda c: c[1] >= 5, max_steps=3)
try:
    rune.vmap(halvings)(np.array([1.0, 2.0]))
except rune.IterateError as err:
    print(err)"""),
    Step("Stragglers", """\
Compiled, the blocks of such a loop are repacked as lanes stop, so that one
slow lane does not hold a block. A first pass runs the blocks (the threads
claim them one by one, as for plain blocks); a block whose running lanes have
been under a quarter of its width for 8 steps (`PATIENCE`: lanes that stop a
few steps apart, as W4's, are not worth moving) stores their operands, step
counts and lane numbers in its own segment of a queue, and is done. The
segments are packed into one queue, which the next pass runs in full blocks
the same way (retiring again while it holds more than one block), until it is
empty. A lane's results go to its own place, whichever block it ends in.
Running out of steps is recorded, not raised at once (a lane queued earlier
may be a lower one that runs out later): the call raises for the least lane
when no lane runs, so the lane named is the first in the user's order, as
above. The forward loops of reverse mode, which keep tapes, run in plain
blocks. On the bench's row HT (10^6 lanes, 99% of them stopping within 10
steps and 1% after 1000) this is the difference between blocks times their
slowest lane and the steps the lanes take (1.7 s in plain blocks, 0.17 to
0.19 s repacked, measured paired in one process on 2 cores shared with other
work; the previous tasks of 256 blocks each, which threads took whole, cost
W4 20% at 2 threads); here results are those of a loop per lane.""", """\
def to_log(a, x0):  # Newton for log a: about x0 - log a steps
    return rune.iterate(lambda x: x - 1.0 + a * rnp.exp(-x), x0,
                        until=lambda x: rnp.abs(a * rnp.exp(-x) - 1.0) <= 1e-12,
                        max_steps=2000)

a = np.geomspace(0.1, 10.0, 10_000)
x0 = np.log(a) + np.where(np.arange(a.size) % 100 == 7, 500.0, 2.0)
got = rune.jit(rune.vmap(to_log))(a, x0)
lone = [to_log(a[i], x0[i]) for i in range(0, a.size, 97)]  # lanes one at a time
print("each lane as alone:", bool(np.all(got[::97] == lone)))
print("within 1e-12 of log a:", bool(np.max(np.abs(got - np.log(a))) < 1e-12))"""),
    Step("Roots", """\
Differentiating the Newton loop would differentiate every step it took. A
`root` states instead that the value its solve returns is a zero of a
residual, and takes the derivative from the residual: x² − a = 0 gives
dx/da = 1 / (2x). The solve is the same loop; central differences agree.""", """\
def sqrt_root(a):
    return rune.root(lambda x: x * x - a, lambda: newton(a))

a = np.array([4.0, 9.0])
print(rune.grad(lambda a: rnp.sum(sqrt_root(a)))(a).tolist())
rune.check_grads(lambda a: rnp.sum(sqrt_root(a)), a)
print("check_grads: ok")"""),
    Step("Rematerialization", """\
Reverse mode keeps the values a step's tangent operations read. `remat` keeps
a function's arguments and captures instead and computes its intermediates
again in the backward pass, so it computes more and keeps less. Every
transformation sees `remat(f)` as it sees `f`, so the gradient is unchanged.""", """\
layer = rune.remat(lambda x: rnp.tanh(rnp.sin(x)))

def deep(xs):
    return rune.scan(lambda acc, row: (layer(acc + row),) * 2, np.float64(0.5), xs)[0]

def plain(xs):
    return rune.scan(lambda acc, row: (rnp.tanh(rnp.sin(acc + row)),) * 2,
                     np.float64(0.5), xs)[0]

gap = np.max(np.abs(rune.grad(deep)(xs) - rune.grad(plain)(xs)))
print("agree within 1e-12:", gap < 1e-12)"""),
    Step("Checkpointing", """\
A tape holds a carry a step, so the memory of reverse mode grows with the
number of steps n. `scan(..., checkpoints=k)` keeps at most k carries (in one
buffer of k + 1, the last a scratch one) and computes the others again by the
binomial schedule (Revolve, Griewank & Walther 2000), the fewest step
evaluations for that k: with r the least integer such that C(k + r, k) >= n,
the gradient evaluates the step

    n + t(n, k) + 1 times,   t(n, k) = r n - C(k + r, k + 1),

(the tape: n times): n forward, t(n, k) - (n - 1) to advance from the
snapshots again, and n to reverse each step. `checkpoints="all"`
(the default) or k >= n is the tape. The schedule is computed once, when the
loop is traced; loops in the program run it (no Python per step). Whatever k,
the gradient is the tape's, jvp and vmap are unchanged, and a loop nobody
differentiates costs nothing more. A `debug.print` or `debug.callback` in the
step runs at each evaluation, recomputations included, as the counts below
show; random keys in the step draw the same numbers each time. (The memory and
time this trades, measured, are the bench's rows for issue 35.)""", """\
calls = []

def rnn(h0, inputs, checkpoints):
    def step(h, x):
        rune.debug.callback(lambda h: calls.append(1), h)
        return rnp.tanh(0.9 * h + x), None
    return rune.scan(step, h0, inputs, checkpoints=checkpoints)[0]

inputs = np.linspace(-1.0, 1.0, 100)
tape = rune.grad(rnn)(np.float64(0.5), inputs, "all")
for k in ["all", 10, 3]:
    calls.clear()
    g = rune.grad(rnn)(np.float64(0.5), inputs, k)
    print(k, "evaluations:", len(calls), "same gradient:", bool(np.isclose(g, tape)))"""),
    Step("Checkpointing loops of unknown length", """\
`iterate` and `while_loop` take `checkpoints=k` too, for loops whose number of
steps n is known only when they stop (with or without `max_steps`): at most k
carries per lane (and a scratch one), whatever n, by an online schedule. The
forward sweep keeps the carries at the multiples of a stride s, a power of two,
in k - k // 2 slots; when they are full, s doubles and every other snapshot is
dropped. The reverse sweep reverses each stride from its snapshot by bisection
(a binary treeverse), keeping the midpoints in the other k // 2 slots. With s
the least power of two such that (k - k // 2) s >= n, and P(L) the number of
one bits in 0, 1, ..., L - 1 ((L / 2) log2 L for L a power of two), the
gradient evaluates the step

    2 n + A(n, k) times,   A(n, k) = (n // s) P(s) + P(n mod s),

exactly when log2 s <= k // 2 (else a few more: `ops/online.py` simulates the
schedule): about (log2 s) / 2 advances a step, against the binomial schedule's
few (it knows n in advance). For n = 10^5 and k = 64, s = 4096: 6.0 n advances,
8.0 n evaluations. Under `vmap` each lane keeps its own snapshots and stops on
its own. The gradient is the tape's, jvp and vmap are unchanged, grad of grad
and loops nested in other loops' steps work as for scan, and a loop nobody
differentiates costs nothing more.""", """\
def decay(h0, checkpoints):
    def step(c):
        h, t = c
        rune.debug.callback(lambda h: calls.append(1), h)
        return rnp.tanh(0.9 * h + 0.01 * t), t + 1.0
    return rune.while_loop(lambda c: c[1] < 100.0, step, (h0, 0.0),
                           checkpoints=checkpoints)[0]

tape = rune.grad(decay)(np.float64(0.5), "all")
for k in ["all", 10, 3]:
    calls.clear()
    g = rune.grad(decay)(np.float64(0.5), k)
    print(k, "evaluations:", len(calls), "same gradient:", bool(np.isclose(g, tape)))"""),
]


STEPS.append(Step("Compiled", """\
`rune.jit` compiles a function, transformations and loops included, to native
code through LLVM: the same results, at native speed. (A loop called outside
`jit`, as above, is compiled too, on its own.) Under `vmap`, lanes of an
`iterate` advance together in SIMD registers, blocks of lanes stopping on
their own.""", """\
fast_product = rune.jit(running_product)
print(fast_product(xs))
print(rune.jit(rune.grad(lambda xs: running_product(xs)[0]))(xs))

def sqrt_newton(a):  # a relative test: a in [1e-6, 1e12]
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a, max_steps=200)

a = np.geomspace(1e-6, 1e12, 100_000)
roots = rune.jit(rune.vmap(sqrt_newton))(a)
print("within 1e-12 of np.sqrt:", np.max(np.abs(roots - np.sqrt(a)) / np.sqrt(a)) < 1e-12)"""))


def run_steps() -> list[tuple[Step, str]]:
    """Execute every step in one namespace; -> each step with what it printed."""
    namespace: dict = {"__name__": "rune_jit_tour"}
    results = []
    for step in STEPS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(step.code, f"<tour: {step.title}>", "exec"), namespace)
        results.append((step, out.getvalue()))
    return results


def markdown(results: list[tuple[Step, str]]) -> str:
    parts = ["# Loops\n", INTRO + "\n"]
    for step, output in results:
        parts.append(f"## {step.title}\n\n{step.prose}\n\n```python\n{step.code}\n```\n\n"
                     f"```text\n{output.rstrip()}\n```\n")
    parts.append("This page is generated by `python -m rune_jit --markdown`; the test suite "
                 "runs it and checks that every output above is what the code prints.\n")
    return "\n".join(parts)


def terminal(results: list[tuple[Step, str]]) -> str:
    parts = [INTRO]
    for step, output in results:
        code = textwrap.indent(step.code, "    ")
        parts.append(f"== {step.title}\n\n{step.prose}\n\n{code}\n\n{output.rstrip()}")
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    results = run_steps()
    sys.stdout.write(markdown(results) if "--markdown" in argv else terminal(results))
