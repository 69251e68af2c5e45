"""Loading peers, checking they agree, timing them interleaved, and first calls in fresh
processes."""

from __future__ import annotations

import gc
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The peers take turns in one process, and OpenBLAS's threads (NumPy's, SciPy's for
# Numba) spin for 2^28 cycles, about 0.1 s, after each call before they sleep: on the
# cores the next peer's threads need (rune_jit's 1024³ matmul on two threads: 25 ms
# alone, 33 right after NumPy's). 2^4 cycles lets them sleep at once, so that no peer's
# time depends on which ran before it. Set before NumPy loads its OpenBLAS.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

import workloads as wl

BENCH = Path(__file__).resolve().parent
MODULES = {"rune_jit": ("rune_impl", "IMPLS"), "c": ("peers.c_impl", "IMPLS"),
           "numba": ("peers.numba_impl", "IMPLS"), "jax": ("peers.jax_impl", "IMPLS"),
           "jax_unrolled": ("peers.jax_impl", "UNROLLED"),
           "numpy": ("peers.numpy_impl", "IMPLS")}
INSTALL = {"jax": "pip install jax", "jax_unrolled": "pip install jax",
           "numba": "pip install numba", "c": "install a C compiler as `cc`"}


def load(peer: str):
    """The peer's module, or the reason it is missing."""
    try:
        return importlib.import_module(MODULES[peer][0])
    except ImportError as err:
        return f"{err} ({INSTALL.get(peer, 'install it')})"


def factory(module, peer: str, name: str):
    return getattr(module, MODULES[peer][1]).get(name)


def leaves(result) -> list[np.ndarray]:
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in leaves(r)]
    return [np.asarray(result, dtype=np.float64)]


def rel_diff(got, want) -> float:
    """max |got - want| / max |want| over all outputs: the normwise relative difference."""
    worst = 0.0
    for g, w in zip(leaves(got), leaves(want), strict=True):
        if g.shape != w.shape:
            return math.inf
        if not np.array_equal(np.isnan(g), np.isnan(w)):
            return math.inf
        scale = max(np.nanmax(np.abs(w), initial=0.0), np.finfo(np.float64).tiny)
        worst = max(worst, float(np.nanmax(np.abs(g - w), initial=0.0)) / scale)
    return float(worst)


def describe(err: BaseException) -> str:
    return f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"


def prepare(w: wl.Workload, inp, modules: dict) -> tuple[dict, dict]:
    """Each peer's record and, for those that run and agree, its timed callable.

    Every peer is called once and compared with rune_jit's result (with NumPy's when
    rune_jit fails); a peer that disagrees or fails is not timed."""
    records, runs, results = {}, {}, {}
    for peer in wl.PEERS:
        if peer in w.not_applicable:
            records[peer] = {"status": "n/a", "reason": w.not_applicable[peer]}
        elif peer in w.peers and isinstance(modules[peer], str):
            records[peer] = {"status": "missing", "reason": modules[peer]}
        elif peer in w.peers:
            try:
                run = factory(modules[peer], peer, w.name)(inp)
                results[peer] = run()
                runs[peer], records[peer] = run, {"status": "ok"}
            except Exception as err:  # a failing peer is reported, not fatal
                records[peer] = {"status": "error", "reason": describe(err)}
    ref = "rune_jit" if "rune_jit" in results else "numpy"
    for peer in list(runs):
        if peer == ref or ref not in results:
            continue
        diff = rel_diff(results[peer], results[ref])
        tol, why = w.tolerance.get(peer, (lambda _: wl.TOL, None))
        tol = float(tol(inp))
        records[peer]["rel_diff"] = diff
        if why:
            records[peer]["tolerance"] = f"{tol:g} ({why})"
        if not diff <= tol:
            records[peer] = {"status": "disagrees", "rel_diff": diff,
                             "reason": f"differs from {ref} by {diff:.2g} (> {tol:g})"}
            del runs[peer]
    return records, runs


def steady(runs: dict, repeats: int, min_sample: float) -> dict:
    """Per peer: median, min and max seconds a call over `repeats` samples, the peers
    taking turns (A B C A B C ...); a sample times enough calls to last `min_sample`, and
    starts once the process is idle (_settle). A call that lasts a sample on its own runs
    once untimed before it: after another peer's turn, this host ran the first call
    slower than the next (its cores idle a while, or left to another tenant: rune_jit's
    W8g on two threads took 180 to 450 ms a first call after 0.6 s idle, and 170 each
    call back to back; on one thread 310 to 435 against 320)."""
    calls = {}
    for peer, run in runs.items():
        run()  # warm-up, after the agreement check's call
        t0 = time.perf_counter()
        run()
        calls[peer] = max(1, math.ceil(min_sample / max(time.perf_counter() - t0, 1e-9)))
    samples: dict = {peer: [] for peer in runs}
    gc.disable()  # a collection would land on whichever peer happens to be running
    try:
        for _ in range(repeats):
            for peer, run in runs.items():
                _settle()
                if calls[peer] == 1:  # a call that is a sample on its own: warm it first
                    run()
                samples[peer].append(_sample(run, calls[peer]))
    finally:
        gc.enable()
    return {peer: {"median": float(np.median(s)), "min": min(s), "max": max(s),
                   "runs": len(s), "calls_per_run": calls[peer]} for peer, s in samples.items()}


def _settle(limit: float = 1.0, window: float = 0.005) -> None:
    """Wait, `limit` seconds at most, until this process's threads are idle: a runtime's
    threads may work on after its call returned (JAX's burn a core for about 80 ms after
    W8g's), on the cores the next peer's threads need (rune_jit's W8g on two threads: 171
    ms alone, 339 right after JAX's). Idle: less than a tenth of a core over `window`."""
    end = time.perf_counter() + limit
    while time.perf_counter() < end:
        cpu = time.process_time()
        time.sleep(window)
        if time.process_time() - cpu < window / 10:
            return


def _sample(run, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        run()
    return (time.perf_counter() - t0) / calls


def first_calls(names: list[str], mode: str, peers: list[str], repeats: int
                ) -> tuple[dict, dict]:
    """First-call seconds per workload and peer, measured in fresh processes: `cold` with
    an empty RUNE_JIT_CACHE_DIR, then `warm`, rune_jit only, with the directory the cold
    process filled. Each is the median of `repeats` such pairs: one fresh process is a
    single sample, and the page faults of fresh memory alone vary by milliseconds."""
    colds, warms = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="rune_bench_cache_") as cache_dir:
            env = dict(os.environ, RUNE_JIT_CACHE_DIR=cache_dir)
            env.pop("RUNE_JIT_CACHE", None)
            colds.append(_first_call_process(names, mode, peers, env))
            if "rune_jit" in peers:
                warms.append(_first_call_process(names, mode, ["rune_jit"], env))
    return _medians(colds), _medians(warms)


def _medians(runs: list[dict]) -> dict:
    """{workload: {peer: {"s": median, "samples": [...]}}}, or the first run's error
    where no run measured it."""
    out: dict = {}
    for name in (runs[0] if runs else {}):
        out[name] = {}
        for peer, first in runs[0][name].items():
            samples = [r[name][peer]["s"] for r in runs if "s" in r.get(name, {}).get(peer, {})]
            out[name][peer] = ({"s": float(np.median(samples)), "samples": samples}
                               if samples else first)
    return out


def _first_call_process(names: list[str], mode: str, peers: list[str], env: dict) -> dict:
    cmd = [sys.executable, str(BENCH / "first_call.py"), mode, ",".join(names), ",".join(peers)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {n: {p: {"error": f"first-call process failed: {tail}"} for p in peers}
                for n in names}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_first_call(module, peer: str, name: str, inp) -> dict:
    """Seconds from making a new compiled object to having its first result, including
    the work a peer's optional `first_call` hook says every first call does."""
    make = factory(module, peer, name)
    try:
        t0 = time.perf_counter()
        if hasattr(module, "first_call"):
            module.first_call()
        make(inp)()
        return {"s": time.perf_counter() - t0}
    except Exception as err:  # reported in the table
        return {"error": describe(err)}
