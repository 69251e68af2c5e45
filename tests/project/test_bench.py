"""bench/run.py keeps working: a tiny run of a few workloads exits 0 and writes the JSON
the docs describe. Peers that are not installed are reported as missing, which passes.
No timing is asserted: timings belong to the benchmark, not to the tests."""

import json
import subprocess
import sys

import pytest
from paths import REPO

BENCH = REPO / "bench"
STATUSES = {"ok", "missing", "n/a", "error", "disagrees"}


@pytest.mark.slow
def test_bench_runs_tiny_and_writes_its_json(tmp_path):
    out = tmp_path / "results.json"
    cmd = [sys.executable, str(BENCH / "run.py"), "--quick", "--tiny", "--only", "W1,W4,D",
           "--json", str(out), "--png", str(tmp_path / "results.png")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(out.read_text())
    assert {"date", "cpu", "versions", "mode", "first_call"} <= set(results["meta"])
    assert results["meta"]["mode"] == "tiny"
    assert list(results["workloads"]) == ["W1", "W1c", "W4", "D"]  # W1c: group W1
    for name, w in results["workloads"].items():
        assert {"title", "size", "tolerance", "peers"} <= set(w), name
        assert set(w["peers"]) >= {"rune_jit", "numpy", "jax", "numba"}, name
        for peer, rec in w["peers"].items():
            assert rec["status"] in STATUSES, (name, peer, rec)
            if rec["status"] == "ok":
                assert {"median", "min", "max", "runs"} <= set(rec["steady"]), (name, peer)
                assert rec["steady"]["runs"] >= 7
            else:
                assert rec["reason"], (name, peer)
        assert w["peers"]["rune_jit"]["status"] == "ok", w["peers"]["rune_jit"]
        # NumPy runs every row but W1c, whose point (a check in compiled code) it lacks
        assert w["peers"]["numpy"]["status"] == ("n/a" if name == "W1c" else "ok"), name
        assert "first_call_s" in w["peers"]["rune_jit"]
    assert isinstance(results["targets"], list)
    assert "W1" in proc.stdout and "| workload | peer |" in proc.stdout


def test_first_calls_are_medians_of_the_processes_that_measured_them():
    sys.path.insert(0, str(BENCH))
    try:
        import harness
    finally:
        sys.path.remove(str(BENCH))
    runs = [{"W1": {"jax": {"s": 3.0}, "c": {"error": "no cc"}}},
            {"W1": {"jax": {"s": 1.0}, "c": {"error": "no cc"}}},
            {"W1": {"jax": {"error": "crashed"}, "c": {"error": "no cc"}}},
            {"W1": {"jax": {"s": 2.0}, "c": {"error": "no cc"}}}]
    assert harness._medians(runs) == {"W1": {"jax": {"s": 2.0, "samples": [3.0, 1.0, 2.0]},
                                             "c": {"error": "no cc"}}}


@pytest.mark.slow
def test_compile_scaling_measures_each_stage_in_fresh_processes(tmp_path):
    """bench/compile_scaling.py (issue 18's compile workload) at two small sizes: every
    run reports its stages, and the table gives their growth exponents."""
    out = tmp_path / "scaling.json"
    cmd = [sys.executable, str(BENCH / "compile_scaling.py"), "--ks", "10,20", "--modes",
           "f,grad", "--peers", "rune_jit", "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(out.read_text())
    for mode in ("f", "grad"):
        for k in ("10", "20"):
            run = results[mode][k]["rune_jit"]
            assert run["wall"] > 0 and run["cpu"] > 0, run
            assert {"trace", "passes", "lowering", "LLVM optimize", "LLVM codegen"} <= set(
                run["stages"]), run
    assert "exponents: " in proc.stdout and "| 20 |" in proc.stdout


@pytest.mark.slow
def test_compile_scaling_has_the_network_of_issue_42(tmp_path):
    """`--program rnn`: k layers tanh(W @ h + x) in a scan step, one table per width,
    each run's stages measured (the ops program's JSON keeps its shape: above)."""
    out = tmp_path / "rnn.json"
    cmd = [sys.executable, str(BENCH / "compile_scaling.py"), "--program", "rnn", "--ks",
           "2,3", "--ns", "4,8", "--modes", "f,vmap", "--peers", "rune_jit", "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(out.read_text())
    assert set(results) == {"n=4", "n=8"}
    for table in results.values():
        for mode in ("f", "vmap"):
            run = table[mode]["3"]["rune_jit"]
            assert run["cpu"] > 0 and {"lowering", "LLVM optimize"} <= set(run["stages"]), run
    assert "## n=8" in proc.stdout and "| 3 |" in proc.stdout


def test_compile_scaling_lines_per_operation():
    """`--lines`: the network's LLVM lines per rune_jit equation, which vectors keep
    short at n = 8 (152 a line when each element was unrolled as scalars)."""
    cmd = [sys.executable, str(BENCH / "compile_scaling.py"), "--lines", "--ks", "3",
           "--ns", "8", "--modes", "f"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = proc.stdout.strip().splitlines()[-1].strip("|").split("|")
    assert [c.strip() for c in row[:3]] == ["f", "3", "8"], proc.stdout
    assert int(row[3]) > 10 and 0 < float(row[4]) < 40, proc.stdout


def test_targets_set_each_peers_cpu_and_unset_openblas_overrides():
    """bench/targets.py (issue 41): the avx2 target's settings for every peer, the host's
    none, OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset for both, XLA's flags kept; the
    OpenBLAS NumPy loaded reports its kernel."""
    sys.path.insert(0, str(BENCH))
    try:
        import targets
    finally:
        sys.path.remove(str(BENCH))
    base = {"OPENBLAS_CORETYPE": "Zen", "OPENBLAS_L2_SIZE": "1", "XLA_FLAGS": "--a", "HOME": "h"}
    host, avx2 = targets.environment("host", base), targets.environment("avx2", base)
    assert host == {"XLA_FLAGS": "--a", "HOME": "h", targets.MARKER: "host"}
    assert avx2["RUNE_JIT_CPU"] == avx2["NUMBA_CPU_NAME"] == avx2["RUNE_BENCH_MARCH"] == "haswell"
    assert avx2["OPENBLAS_CORETYPE"] == "Haswell" and "OPENBLAS_L2_SIZE" not in avx2
    assert avx2["XLA_FLAGS"] == "--a --xla_cpu_max_isa=AVX2"
    kernels = targets.blas_kernels()  # numpy is imported: its OpenBLAS is loaded
    assert all(isinstance(k, str) and k for k in kernels.values()), kernels
