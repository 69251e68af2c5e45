"""Differential fuzzing of generated loop programs (the generator: tests/fuzz_programs.py).

Every program (nested `scan` / `iterate` / `while_loop` over float64, float32 and
int values, generated from its seed alone) is run by the interpreter (the oracle,
which is also checked against a plain NumPy reference), eagerly with loops
compiled, and under `rune.jit` (where its `jvp` is checked, the jvp's primal
stands for the value on that path); in rotation its `grad`, `jvp` and `vmap` are
compared on the interpreter and a compiled path, the `vmap` of its `grad` too
where reverse mode recomputes an unbounded loop or checkpoints a loop that stops
on a test (lanes keep their own snapshots), the grad of a program whose loops take
`checkpoints=` with the grad of the same program without them (the tape's), and
`check_grads` compares its gradient with central differences. A path that raises
where another returns fails, and a program written to raise `IterateError` must
raise it on every path. What each seed is checked for: `fuzz_programs.modes_for`.

Values compare within a relative tolerance (`RTOL_F64`, 1e-9; `RTOL_F32`, 1e-4 for
values float32 arithmetic reached), after inputs are redrawn until no comparison or
maximum comes near a tie. One allowance more, for vmap (and vmap of grad) against a
loop over the lanes only: a batched path may round in another order (a batched dot
product sums in another order), and a loop's steps can amplify that rounding by
orders of magnitude (seed 1694: 19 steps of `x <- sin(x + x @ x)`). When that
comparison fails, each lane's float arguments are moved by a few ulps (`NOISE_ULPS`,
random signs, `NOISE_DIRECTIONS` draws) and the interpreter rerun: how far that
moves each output measures the program's rounding amplification at those inputs,
and `NOISE_FACTOR` times it is allowed on top of the tolerance, never more than
`NOISE_CAP` (1e-6) of the output's scale. A program that amplifies a few ulps only
a little gets next to nothing, so a wrong batching rule still fails; one that
amplifies them past the cap fails too, for the generator to be tamed.

Each test case checks a chunk of 25 consecutive seeds in a forked child process,
so that a crash (a segfault, an LLVM abort) or a hang fails the case and names
the seed instead of taking down the test worker. A failure prints each failing
seed's program and what disagreed.

    python -m pytest -n 2 tests/loops/test_fuzz.py                        # seeds 0..999
    RUNE_JIT_FUZZ=20000 python -m pytest -n 2 tests/loops/test_fuzz.py    # seeds 0..19999

Seeds from 25 on are marked slow (`-m "not slow"` checks the first 25; CI runs all).
`RUNE_JIT_FUZZ=N` checks seeds 0..N-1; the cases past the default 1000 seeds only
exist then (their ids start with `long-`; the default run collects, and so never
skips, them). `RUNE_JIT_FUZZ_START=S` starts at seed S instead of 0.
`RUNE_JIT_FUZZ_ISOLATE=0` runs the seeds in the test process (for a debugger);
`RUNE_JIT_FUZZ_TIMEOUT` is the seconds one seed may take before it counts as
hung (default 300).

To look at one seed: `python tests/fuzz_programs.py SEED > repro.py` writes a
standalone script of the program and its checks, `python tests/fuzz_programs.py
check SEED` runs the checks, and `python tests/fuzz_reduce.py repro.py MARKER`
shrinks a script while its output still contains MARKER.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

import fuzz_programs as fuzz

# The seeds a run checks unless told (CI's: the suite has 15 minutes on 2 cores, and the
# checks of 800 seeds take about 2.5 of them); a session that changes the compiler runs
# RUNE_JIT_FUZZ=4000 or more. The generator's own statistics below sample SAMPLE seeds
# (generating a program costs next to nothing; checking it, the compiles).
DEFAULT = 800
SAMPLE = 2000
QUICK = 25  # seeds past these are marked slow: the quick run checks the first 25
CHUNK = 25
START = int(os.environ.get("RUNE_JIT_FUZZ_START", "0"))
COUNT = int(os.environ.get("RUNE_JIT_FUZZ", str(DEFAULT)))


def chunk_params():
    out = []
    for start in range(START, START + COUNT, CHUNK):
        stop = min(start + CHUNK, START + COUNT)
        long_only = start >= DEFAULT
        marks = [pytest.mark.slow] if start >= QUICK else []
        out.append(pytest.param(start, stop, marks=marks,
                                id=f"{'long-' if long_only else ''}seeds-{start}-{stop - 1}"))
    return out


@pytest.mark.parametrize(("start", "stop"), chunk_params())
def test_generated_programs_agree_on_every_path(start, stop):
    seeds = range(start, stop)
    reports, stats = fuzz.run_chunk(seeds)
    assert not reports, (f"{len(reports)} of {len(seeds)} programs failed:\n\n"
                         + "\n\n".join(reports))
    assert stats["programs"] == len(seeds)


# ------------------------------------------------------------- the generator itself

# Shapes the fuzzer must keep producing, with how many of the default seeds must show
# each: the loops' corners, and the shapes of bugs found before (regressions below and
# in regressions/test_loops.py).
REQUIRED = {
    "scan": 1000, "iterate": 600, "depth2": 500, "depth3": 120,
    "scan_in_scan": 200, "scan_in_iterate": 100, "iterate_in_scan": 150,
    "iterate_in_iterate": 80,
    "scan_reverse": 400, "scan_length": 300, "scan_n0": 100, "scan_n1": 300,
    "xs_reversed": 300, "xs_strided": 300, "xs_tuple": 200,
    "ys_carry": 500, "ys_const_float": 250, "ys_const_array": 250, "ys_none": 200,
    "ys_tuple": 200, "ys_unused": 200,
    "iterate_count": 300, "iterate_mono": 150, "iterate_jump": 150, "iterate_raise": 30,
    "iterate_may_zero": 250, "until_mixed": 150,
    "int_counter": 300, "int_counter_warm": 40, "int_where": 80, "int_cast": 80,
    "int_mix": 80, "where_weak": 120, "carry_cast_back": 300, "f32_read_in_f64_step": 400,
    # regressions: a nested scan with constant ys; an inner loop's init captured from
    # outside; an iterate that may take zero steps inside a scan; float64 ys from a
    # float32 capture over reversed xs; an iterate in a scan step reading float32
    "nested_scan_const_ys": 80, "nested_captured_init": 150, "iterate_zero_in_scan": 60,
    "rev_f64_ys_f32_capture": 150, "ys_f64_from_f32": 15, "iterate_in_scan_reads_f32": 80,
    # while_loop, with and without max_steps (unbounded: reverse mode keeps a tape of the
    # steps taken, grown past its first rows by "long" loops, and recomputes a loop in a
    # loop step, a remat step among them, in the outer step's backward pass)
    "while_loop": 470, "while_bounded": 270, "while_unbounded": 215, "while_long": 100,
    "while_unbounded_in_loop_step": 85, "while_unbounded_in_remat_step": 10,
    "while_in_scan": 100, "while_in_iterate": 45, "while_in_while": 25, "scan_in_while": 90,
    "iterate_in_while": 50, "while_may_zero": 170, "while_raise": 12,
    # scan steps wrapped in rune.remat, in loop steps and holding loops
    "remat_step": 420, "remat_step_in_loop_step": 140, "loop_in_remat_step": 135,
    # traced indices (an argmax, a loop counter) into traced values and NumPy constants,
    # in every position, in scan steps and in loops stopped by a test of their carry
    "index_argmax": 500, "index_counter": 200, "index_row": 240, "index_const": 240,
    "index_set": 60, "index_add": 60, "index_column": 30, "index_pair": 30,
    "index_in_scan": 300, "index_in_stopping_loop": 250,
    # checkpoints= on every loop kind (grad compares with the program without them): k
    # below a scan's length (the schedule recomputes), past it and "all" (the tape); in
    # loop steps, in checkpointed loops' steps, in remat steps and around remat steps
    "checkpoints": 900, "checkpoints_scan": 480, "checkpoints_iterate": 330,
    "checkpoints_while": 170, "checkpoints_below_n": 130, "checkpoints_past_n": 340,
    "checkpoints_all": 80, "checkpoints_in_loop_step": 330, "checkpoints_in_checkpoints": 120,
    "checkpoints_in_remat_step": 55, "checkpoints_remat_step": 160,
}


def test_generator_makes_every_shape():
    counts = Counter()
    for seed in range(SAMPLE):
        counts.update(fuzz.generate(seed).features)
    short = {k: (counts[k], n) for k, n in REQUIRED.items() if counts[k] < n}
    assert not short, f"features generated fewer times than required (got, want): {short}"


def test_a_program_is_its_seed():
    for seed in (0, 1, 17, 1234):
        a, b = fuzz.generate(seed), fuzz.generate(seed)
        assert a.source == b.source and a.ref_source == b.ref_source
        assert [x.tobytes() for x in a.inputs(0)] == [x.tobytes() for x in b.inputs(0)]
    assert fuzz.generate(1).source != fuzz.generate(2).source


def test_checkpoints_are_all_that_sets_a_program_apart_from_its_tape_program():
    """grad compares a program whose loops take checkpoints= with its tape_source: the
    same program without them; the reference takes and ignores them."""
    import re

    import numpy as np

    for seed in range(300):
        p = fuzz.generate(seed)
        if "checkpoints" not in p.features:
            assert not p.tape_source, seed
            continue
        assert "checkpoints=" not in p.tape_source and "checkpoints=" in p.ref_source
        assert re.sub(r', checkpoints=("all"|\d+)', "", p.source) == p.tape_source, seed
    R = fuzz.RefRune
    assert R.scan(lambda c, r: (c * r, c), np.float64(2.0), np.array([3.0, 4.0]),
                  checkpoints=1)[0] == 24.0
    assert R.iterate(lambda z: z + 1, np.int64(0), until=lambda z: z >= 3, max_steps=5,
                     checkpoints=2) == 3


def test_every_check_runs_on_hundreds_of_programs():
    counts = Counter()
    for seed in range(SAMPLE):
        modes = fuzz.modes_for(seed)
        if "while_unbounded_in_loop_step" in fuzz.generate(seed).features:
            assert any(m.startswith("vmap_grad:") for m in modes), (seed, modes)
        for mode in modes:
            name, _, paths = mode.partition(":")
            if not paths:
                counts[name] += 1
            for p in paths.split("+") if paths else ():
                counts[f"{name}:{p}"] += 1
    # every program's value on both compiled paths: checked alone, or as a jvp's primal
    for p in ("native", "jit"):
        assert counts[f"value:{p}"] + counts[f"jvp:{p}"] == SAMPLE, counts
    for name in ("grad", "jvp", "vmap"):
        for p in ("native", "jit"):
            assert counts[f"{name}:{p}"] >= 300, counts
    assert counts["fd"] >= 300, counts
    assert counts["vmap_grad:native"] >= 40 and counts["vmap_grad:jit"] >= 40, counts


def test_the_reference_agrees_with_numpy_loops():
    """The reference's scan and iterate mean what docs/loops.md says."""
    import numpy as np

    R = fuzz.RefRune
    c, ys = R.scan(lambda c, r: (c * r, c), np.float64(1.0), np.array([1.0, 2.0, 3.0]),
                   reverse=True)
    assert c == 6.0 and ys.tolist() == [6.0, 3.0, 1.0]
    c, ys = R.scan(lambda c, _: (c + 1, 7.0), np.int64(0), length=0)
    assert c == 0 and ys.shape == (0,) and ys.dtype == np.float64
    assert R.iterate(lambda z: z + 1, np.int64(0), until=lambda z: z >= 3, max_steps=3) == 3
    with pytest.raises(fuzz.rune.IterateError):
        R.iterate(lambda z: z + 1, np.int64(0), until=lambda z: z >= 4, max_steps=3)
    with pytest.raises(TypeError):  # a carry must keep its dtype, as in rune_jit
        R.scan(lambda c, _: (c.astype(np.float64), None), np.float32(1.0), length=1)
    # while_loop: cond is "go on"; no step limit without max_steps
    assert R.while_loop(lambda k: k < 1000, lambda k: k + 1, np.int64(0)) == 1000
    assert R.while_loop(lambda k: k < 3, lambda k: k + 1, np.int64(0), max_steps=3) == 3
    assert R.while_loop(lambda k: k < 0, lambda k: k + 1, np.int64(5), max_steps=0) == 5
    with pytest.raises(fuzz.rune.IterateError):
        R.while_loop(lambda k: k < 4, lambda k: k + 1, np.int64(0), max_steps=3)
    with pytest.raises(TypeError):
        R.while_loop(lambda c: c < 1, lambda c: c.astype(np.float64), np.float32(0.0))
    step = R.remat(lambda c, r: (c * r, c), policy=R.checkpoint_policies.dots_saveable)
    assert R.scan(step, np.float64(2.0), np.array([3.0]))[0] == 6.0


def test_the_vmap_rounding_allowance_is_the_programs_own_amplification():
    """Seed 1694's loop amplifies a few ulps of its input to 1e-8 and gets that much
    leeway; a tame program gets next to none, so an error of 1e-8 in it still fails."""
    import numpy as np

    def wild(x):  # seed 1694: 19 steps of x <- sin(x + x @ x)
        for _ in range(19):
            x = np.sin(x + x @ x)
        return (x,)

    def tame(x):
        return (np.sin(x) * 2,)

    x = np.array([0.024642046766840453, -0.7249925953489726, 0.05663603472903955])
    for f, lo, hi in ((wild, 1e-9, fuzz.NOISE_CAP), (tame, 0.0, 1e-13)):
        (noise,) = fuzz.rounding_noise(f, [[x]], [f(x)], 0)
        assert lo < noise.max() < hi, (f.__name__, noise)
        (want,) = f(x)
        off = want + 1e-8
        fails = fuzz.compare((off[None],), (want[None],), [fuzz.RTOL_F64], "t", [noise])
        assert bool(fails) == (f is tame), fails


def test_a_crash_in_a_chunk_names_its_seed(monkeypatch):
    """The fork isolation reports a child that dies by a signal as that seed's failure,
    and the seeds after it still run."""
    import faulthandler
    import signal

    calls = []
    real = fuzz.check_seed

    def check(seed, stats=None, modes=None):
        calls.append(seed)
        if seed == 11:
            faulthandler.disable()  # a real crash prints its stack; this one need not
            os.kill(os.getpid(), signal.SIGSEGV)
        return [] if seed != 12 else ["made up"]

    monkeypatch.setattr(fuzz, "check_seed", check)
    monkeypatch.setattr(fuzz, "report", lambda seed, fails: f"seed {seed}: {fails}")
    reports, stats = fuzz.run_chunk([10, 11, 12, 13])
    assert stats["programs"] == 4
    assert any("seed 11" in r and "SIGSEGV" in r for r in reports), reports
    assert any("seed 12" in r and "made up" in r for r in reports), reports
    assert len(reports) == 2
    assert fuzz.check_seed is check and real is not check
