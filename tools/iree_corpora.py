"""The corpora tools/gpu_check and tools/mlir_coverage.py run under IREE: every program the
native backend compiles while a corpus runs, recorded with the arguments of its calls and
the native results (docs/mlir.md, "How much of the corpora"), then each exported to MLIR,
verified upstream, compiled by IREE for a device and run, its results compared.

    loops   tests/loops' loops under every transformation, the scan and iterate rules'
            programs (test_mlir.py's LOOP_CORPUS)
    seed    the seed examples: the tour's steps and the docs pages' code blocks
    fuzz    tests/fuzz_programs.py's programs, value and gradient, seeds 0 to 59
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]
os.environ.setdefault("RUNE_JIT_SAVE_TRACES", "0")  # every program compiled in this process

import rune_jit as rune  # noqa: E402
from rune_jit._src import backend  # noqa: E402
from rune_jit._src.backend.cpu import runtime  # noqa: E402
from rune_jit._src.backend.mlir import upstream  # noqa: E402
from rune_jit._src.ir import Region  # noqa: E402

FUZZ_SEEDS = range(60)


class Call(NamedTuple):
    """A compiled program, the arguments of one of its calls and the native results."""
    region: Region
    args: list
    want: list


class Recorded:
    """A native executable whose calls are recorded (through `run`: no native entry)."""

    def __init__(self, region: Region, executable: Any, calls: list[Call]):
        self.region, self.executable, self.calls = region, executable, calls

    def run(self, values) -> list:
        outs = self.executable.run(values)
        self.calls.append(Call(self.region, [np.array(v) for v in values],
                               [np.array(o) for o in outs]))
        return outs

    run_exact = run

    def record(self) -> None:
        return None

    def entry(self, *_: Any, **__: Any) -> None:
        return None


@contextlib.contextmanager
def recording() -> Iterator[list[Call]]:
    """The calls of every program the native backend compiles meanwhile (and of loops
    called outside jit), once each program."""
    native, calls = backend.get("native"), []

    def compile(region: Region) -> Recorded:
        return Recorded(region, runtime.prepare(region), calls)

    def run_loop(prim, interpret, args, params):
        return runtime.run_eqn(prim, interpret, args, params, compile=compile)
    native.compile, native.run_loop = compile, run_loop
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            yield calls
    finally:
        del native.compile, native.run_loop
    firsts = {}
    for c in calls:
        firsts.setdefault(str(c.region), c)
    calls[:] = firsts.values()


def _loops() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("mlir_tests", REPO / "tests/backend/test_mlir.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    for make in tests.LOOP_CORPUS.values():
        f, x = make()
        _attempt(lambda: rune.jit(f)(x))


def _seed() -> None:
    from rune_jit._src import tour

    tour.run_steps()
    for page in sorted((REPO / "docs").glob("*.md")):
        namespace: dict = {"__name__": f"docs_{page.stem}"}
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            if not _attempt(lambda: exec(compile(code, f"{page.name} block {i}", "exec"),
                                         namespace)):
                break  # the page's later blocks need this one's names


def _fuzz() -> None:
    import fuzz_programs as fp

    for seed in FUZZ_SEEDS:
        prog = fp.generate(seed)
        f = prog.build()
        floats = tuple(i for i, (d, _) in enumerate(prog.args) if d.kind == "f")
        for g in (f, rune.grad(prog.scalar(f), argnums=floats)):
            _attempt(lambda: rune.jit(g)(*prog.inputs(0)))


def _attempt(run: Callable[[], Any]) -> bool:
    try:
        run()
        return True
    except Exception:  # a program that fails natively is no program to compare
        return False


CORPORA = {"loops": _loops, "seed": _seed, "fuzz": _fuzz}


def calls_of(corpus: str) -> list[Call]:
    """Every program of `corpus` with one call's arguments and native results."""
    with recording() as calls:
        CORPORA[corpus]()
    return calls


class Outcome(NamedTuple):
    stage: str   # "export", "verify", "compile", "run", "agree" or "disagree": how far it got
    reason: str  # why it stopped there ("" when it agrees)


def under_iree(iree: Any, call: Call) -> Outcome:
    """How far a recorded call gets under IREE: exported, verified, compiled and run by
    the IREE backend `iree`, its results compared with the native ones."""
    from rune_jit._src.backend.iree import prepared
    from rune_jit._src.backend.mlir import module_text

    try:
        text = module_text(*prepared(call.region))
    except NotImplementedError as e:
        return Outcome("export", no_form(str(e)))
    try:
        upstream.verify(text)
    except ValueError as e:
        return Outcome("verify", str(e).splitlines()[0][:120])
    try:
        executable = iree.compile(call.region)
    except (NotImplementedError, RuntimeError) as e:
        return Outcome("compile", upstream.iree_gap(e) or first_error(str(e)))
    try:
        got = executable.run(call.args)
    except Exception as e:
        return Outcome("run", f"{type(e).__name__}: {first_error(str(e))}")
    bad = disagreement(got, call.want, tolerance(call.region))
    return Outcome("disagree", bad) if bad else Outcome("agree", "")


def no_form(message: str) -> str:
    found = re.search(r"(\w+) has no MLIR form", message)
    return f"no MLIR form: {found.group(1)}" if found else message.splitlines()[0][:120]


def first_error(message: str) -> str:
    lines = [ln for ln in message.splitlines() if "error" in ln.lower()] or message.splitlines()
    return re.sub(r"^.*?error: ", "", lines[0] if lines else "")[:120]


def tolerance(region: Region) -> float:
    """The relative tolerance of a program's results: its narrowest float's (a float64
    result computed through float32 values is as exact as they are)."""
    text = str(region)
    return 1e-2 if "float16" in text else 2e-5 if "float32" in text else 1e-9


def disagreement(got: list, want: list, rtol: float) -> str:
    """"" if IREE's results are the native ones (floats within `rtol`, NaNs where they
    are; other values exactly), else what differs."""
    if len(got) != len(want):
        return f"{len(got)} results for {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {i}: {g.dtype}{g.shape} for {w.dtype}{w.shape}"
        r = rtol if w.dtype.kind in "fc" else 0
        if not np.allclose(g, w, rtol=r, atol=r * 1e-3, equal_nan=True):
            return f"result {i} differs: max |diff| {np.max(np.abs(g - w.astype(g.dtype)))}"
    return ""


def tally(outcomes: list[Outcome]) -> tuple[dict[str, int], Counter]:
    """(how many got past each stage, the reasons of those that stopped)."""
    order = ["export", "verify", "compile", "run", "disagree", "agree"]
    past = {s: sum(order.index(o.stage) > order.index(s) for o in outcomes)
            for s in ("export", "verify", "compile", "run")}
    past["agree"] = sum(o.stage == "agree" for o in outcomes)
    return past, Counter(f"{o.stage}: {o.reason}" for o in outcomes if o.stage != "agree")
