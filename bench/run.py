"""Benchmark rune_jit against NumPy, JAX, Numba and C on the loop workloads (issue 5).

    python bench/run.py                  # every workload, full sizes
    python bench/run.py --quick          # smaller sizes, under a minute
    python bench/run.py --only W1,W4 --json out.json --png out.png
    python bench/run.py --target avx2    # every peer compiled for AVX2 (bench/targets.py)

See docs/benchmarks.md for how each peer is written and what the columns mean.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata

import harness
import report
import speedup
import targets
import workloads as wl

# mode -> (samples per peer, least seconds a sample lasts)
TIMING = {"full": (11, 0.02), "quick": (7, 0.005), "tiny": (7, 0.0005)}
FIRST_CALL_REPEATS = {"full": 3, "quick": 3, "tiny": 1}  # fresh-process pairs per first call


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, under a minute")
    ap.add_argument("--tiny", action="store_true", help="toy sizes (overrides --quick): the "
                    "test suite's check that the harness works")
    ap.add_argument("--only", help="comma-separated workloads or groups, e.g. W1,W4; "
                    "`threads` selects the thread speedup rows")
    ap.add_argument("--json", help="where to write the results (default bench/results*.json)")
    ap.add_argument("--png", help="where to draw the chart (default bench/results*.png)")
    ap.add_argument("--target", choices=list(targets.TARGETS), default="host",
                    help="the CPU every peer compiles for (bench/targets.py)")
    args = ap.parse_args(argv)
    args.mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    stem = os.path.join(harness.BENCH, "results" + ("" if args.mode == "full" else
                                                    f"-{args.mode}") +
                        ("" if args.target == "host" else f"-{args.target}"))
    args.json = args.json or stem + ".json"
    args.png = args.png or stem + ".png"
    return args


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def _commit() -> str:
    """The checkout measured: its commit, and whether rune_jit/ has uncommitted changes."""
    git = ["git", "-C", harness.BENCH]
    try:
        head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(git + ["diff", "--quiet", "HEAD", "--", "../rune_jit"]).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes to rune_jit/" if dirty else "")


def _cpu() -> str:
    from llvmlite import binding

    try:
        with open("/proc/cpuinfo") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    return f"{model} ({binding.get_host_cpu_name()}, {os.cpu_count()} cores)"


def _target(target: str) -> dict:
    """The target and its settings; on a host without AVX-512 the host column is the
    AVX2 column, which the record says."""
    from llvmlite import binding

    features = binding.get_host_cpu_features()
    return {"target": target, "target_settings": targets.TARGETS[target],
            "host_is_avx2_only": bool(features.get("avx2")) and not features.get("avx512f")}


def meta(mode: str, modules: dict, target: str) -> dict:
    versions = {d: _version(d) for d in ("rune-jit", "numpy", "llvmlite", "jax", "jaxlib",
                                         "numba", "matplotlib")}
    for dist, peer in (("jax", "jax"), ("jaxlib", "jax"), ("numba", "numba")):
        versions[dist] = "missing" if isinstance(modules[peer], str) else versions[dist]
    c = modules["c"]
    versions["cc"] = "missing" if isinstance(c, str) else c.version()
    repeats, min_sample = TIMING[mode]
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": _cpu(),
            "platform": platform.platform(), "python": platform.python_version(),
            "versions": versions, "rune_jit_commit": _commit(), "mode": mode,
            "load_average_at_start": os.getloadavg()[0], "samples": repeats,
            "least_sample_seconds": min_sample, "tolerance": wl.TOL,
            "first_call": "median of fresh processes (first_call_repeats); rune_jit cold = "
                          "empty RUNE_JIT_CACHE_DIR, warm = a second process on the filled one",
            "first_call_repeats": FIRST_CALL_REPEATS[mode], **_target(target)}


def run_workload(w: wl.Workload, mode: str, modules: dict, cold: dict, warm: dict) -> dict:
    inp = wl.inputs(w, mode)
    records, runs = harness.prepare(w, inp, modules)
    for peer, stats in harness.steady(runs, *TIMING[mode]).items():
        records[peer]["steady"] = stats
    for peer, rec in records.items():
        if rec["status"] == "ok":
            _first_call(rec, cold.get(w.name, {}).get(peer, {}), "first_call")
    if records.get("rune_jit", {}).get("status") == "ok":
        _first_call(records["rune_jit"], warm.get(w.name, {}).get("rune_jit", {}),
                    "first_call_warm_disk")
    out = {"title": w.title, "size": w.sizes[mode], "tolerance": wl.TOL,
           "note": wl.note(w, inp), "peers": records}
    if w.group in ("W6", "RM", "CK"):
        out["kept_bytes"] = _bytes("kept_bytes", w, inp, modules, ("rune_jit", "jax"))
        out["stored_bytes"] = _bytes("stored_bytes", w, inp, modules, ("rune_jit",))
    report.add_ratios(out)
    return out


def _first_call(rec: dict, measured: dict, key: str) -> None:
    if "s" in measured:
        rec[f"{key}_s"] = measured["s"]
        rec[f"{key}_samples"] = measured["samples"]
    else:
        rec[f"{key}_error"] = measured.get("error", "not measured")


def _bytes(measure: str, w: wl.Workload, inp, modules: dict, peers: tuple) -> dict:
    """Per peer: the bytes `measure` counts (kept for the backward pass, stored by a
    call), or the error that stopped counting."""
    counted = {}
    for peer in peers:
        if not isinstance(modules[peer], str):
            try:
                counted[peer] = getattr(modules[peer], measure)(w.name, inp)
            except Exception as err:  # reported in the table, not fatal
                counted[peer] = f"error: {harness.describe(err)}"
    return counted


def _selection(only: str | None) -> tuple[list[wl.Workload], bool]:
    """The workloads `--only` names, and whether it names the thread speedup (none: all)."""
    names = [s.strip() for s in (only or "").split(",") if s.strip()]
    rest = [n for n in names if n != "threads"]
    return (wl.select(",".join(rest)) if rest or not names else []), (
        not names or "threads" in names)


def main(argv: list[str]) -> int:
    args = parse(argv)
    targets.ensure(args.target, argv)  # a process with the target's environment
    chosen, with_threads = _selection(args.only)
    modules = {p: harness.load(p) for p in wl.PEERS}
    results = {"meta": meta(args.mode, modules, args.target), "workloads": {}}
    present = [p for p, m in modules.items() if not isinstance(m, str)]
    print("first calls, in fresh processes ...", file=sys.stderr)
    cold, warm = harness.first_calls([w.name for w in chosen], args.mode, present,
                                     FIRST_CALL_REPEATS[args.mode])
    for w in chosen:
        print(f"{w.name} ...", file=sys.stderr)
        results["workloads"][w.name] = run_workload(w, args.mode, modules, cold, warm)
    if with_threads:
        print("thread speedup ...", file=sys.stderr)
        results["threads"] = speedup.speedups(args.mode, *TIMING[args.mode])
    results["targets"] = report.targets(results)
    m = results["meta"]
    m["load_average_at_end"] = os.getloadavg()[0]
    m["blas_kernels"] = targets.blas_kernels()  # every peer has run: their BLAS is loaded
    avx2 = " (the host is AVX2-only: the AVX2 column)" if m["host_is_avx2_only"] else ""
    print(f"rune_jit bench, {m['mode']} sizes, {m['date']}, {m['cpu']}, target "
          f"{m['target']}{avx2}, BLAS kernels {m['blas_kernels']}, {m['platform']}, "
          f"Python {m['python']}, rune_jit at {m['rune_jit_commit']}, load average "
          f"{m['load_average_at_start']:.2f} at start, {m['load_average_at_end']:.2f} at end\n"
          + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    for title, text in (("Steady and first-call times", report.main_table(results)),
                        ("Workloads", report.notes(results)),
                        ("First call (compile latency)", report.compile_table(results)),
                        ("Thread speedup", report.threads_table(results.get("threads"))),
                        ("Targets (issues 6, 13, 17, 18, 19 and 34)",
                         report.targets_table(results["targets"]))):
        print(f"\n{title}\n\n{text}")
    report.write_json(results, args.json)
    drawn = report.chart(results, args.png)
    print(f"\nwrote {args.json}" + (f" and {args.png}" if drawn else " (no matplotlib: no chart)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
