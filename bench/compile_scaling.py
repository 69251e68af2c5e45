"""Compile time against program size: a scan whose step has k operations (issue 18).

    python bench/compile_scaling.py [--ks 10,50,200,1000,3000] [--modes f,grad,vmap]
                                    [--peers rune_jit,jax] [--timeout 1800] [--json F]
                                    [--program ops|rnn] [--ns 8,16,64]
    python bench/compile_scaling.py --lines [--ks 10] [--ns 8,16,64,512] [--modes f,grad]

Each (mode, k, peer) is one fresh process with an empty disk cache: its first call of
`jit(f)`, `jit(grad(f))` or `jit(vmap(f))` (trace, compile, one run), in wall and CPU
seconds, and rune_jit's stages (compile_log's: trace, passes, lowering, LLVM optimize,
LLVM codegen, load). The table gives rune_jit's cold first call over JAX's, and the
growth exponent of each stage between the two largest k measured from 200 up:
log(t2 / t1) / log(k2 / k1), which linear compile time keeps near 1.

The step, on a carry of 4 float64 and one row of xs, cycles through four operations,
`sin`, a scale, adding the carry rolled by one times the row, and `tanh`: k of them in
all, traced once (the step is a loop's body: rule 1). The four repeat, so the trace
folds them into a loop over the repeats (issue 42, docs/design.md); RUNE_JIT_FOLD_LAYERS=0
in the environment measures them compiled as traced (the children inherit it). (The carry reversed, `c[::-1]`,
in place of the roll, took XLA 170 s and 24 GB at k = 200, until the kernel killed it:
not a comparison of compilers.)

`--program rnn` (issue 42) is a network in the step instead: a 16-step scan whose step
applies k layers `h = tanh(W @ h + x)`, W an n x n float64 argument (one table per n
of `--ns`), x a row of xs; grad is with respect to W, vmap maps over h0.

`--lines` prints, for that program, the LLVM IR lowering writes per rune_jit equation
(lines of text; LLVM instructions before and after LLVM's optimization), in this
process: where code size comes from, without compiling to machine code.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import subprocess
import sys
import tempfile
import time

CARRY, ROWS, LANES = 4, 100, 8
RNN_STEPS = 16


def step_ops(np_like, k: int):
    """The step, written once for NumPy-like namespaces (rune_jit.numpy, jax.numpy)."""
    def step(c, x):
        for i in range(k):
            op = i % 4
            if op == 0:
                c = np_like.sin(c)
            elif op == 1:
                c = c * (1.0 - 1e-4 * i)
            elif op == 2:
                c = c + np_like.roll(c, 1) * x
            else:
                c = np_like.tanh(c)
        return c, None
    return step


def namespace(peer: str):
    """(numpy-like, scan, jit, grad, vmap) of `peer`."""
    if peer == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        return jnp, jax.lax.scan, jax.jit, jax.grad, jax.vmap
    import rune_jit as rune
    import rune_jit.numpy as rnp
    return rnp, rune.scan, rune.jit, rune.grad, rune.vmap


def program(mode: str, k: int, peer: str):
    """The jitted function of `mode` for `peer`, and its arguments."""
    import numpy as np
    c0, xs = np.linspace(0.1, 0.4, CARRY), np.linspace(0.0, 0.1, ROWS)
    ns, scan, jit, grad, vmap = namespace(peer)
    step = step_ops(ns, k)

    def f(c0, xs):
        return ns.sum(scan(step, c0, xs)[0])

    if mode == "vmap":
        return jit(vmap(f, in_axes=(0, None))), (np.tile(c0, (LANES, 1)), xs)
    return jit(grad(f) if mode == "grad" else f), (c0, xs)


def rnn_program(mode: str, k: int, peer: str, n: int):
    """The network of issue 42: k layers tanh(W @ h + x) in each of RNN_STEPS steps."""
    import numpy as np
    rng = np.random.default_rng(0)
    w = rng.normal(size=(n, n)) / np.sqrt(n)
    h0, xs = rng.normal(size=n), rng.normal(size=(RNN_STEPS, n)) * 0.1
    ns, scan, jit, grad, vmap = namespace(peer)

    def f(w, h0, xs):
        def step(h, x):
            for _ in range(k):
                h = ns.tanh(w @ h + x)
            return h, None
        return ns.sum(scan(step, h0, xs)[0])

    if mode == "vmap":
        return jit(vmap(f, in_axes=(None, 0, None))), (w, np.tile(h0, (LANES, 1)), xs)
    return jit(grad(f) if mode == "grad" else f), (w, h0, xs)


def code_size(mode: str, k: int, n: int) -> dict:
    """The rnn program's code per rune_jit equation, lowered (not compiled) here."""
    f, args = rnn_program(mode, k, "rune_jit", n)
    lowered = f.lower(*args)
    cost = lowered.cost()
    eqns = cost["equations"]
    return {"equations": eqns, "lines": len(lowered.llvm_ir.splitlines()) / eqns,
            "instructions": cost["llvm_instructions"] / eqns,
            "optimized": cost["llvm_instructions_optimized"] / eqns}


def lines_report(ks: list[int], ns: list[int], modes: list[str]) -> str:
    rows = ["| mode | k | n | equations | LLVM lines / eq | instructions / eq | "
            "optimized / eq |", "|---" * 7 + "|"]
    for mode in modes:
        for k in ks:
            for n in ns:
                c = code_size(mode, k, n)
                rows.append(f"| {mode} | {k} | {n} | {c['equations']} | {c['lines']:.1f} | "
                            f"{c['instructions']:.1f} | {c['optimized']:.1f} |")
    return "\n".join(rows)


def child(mode: str, k: int, peer: str, n: int = 0) -> dict:
    """One first call, in this process: seconds (wall, CPU) and rune_jit's stages."""
    stages: dict = {}
    if peer == "rune_jit":
        import rune_jit as rune

        class Stages(logging.Handler):
            def emit(self, record):  # "what: compiled in T ms (stage T ms, ...)"
                inside = record.getMessage().rpartition("(")[2]
                for name, ms in re.findall(r"([A-Za-z][\w ]*?) ([\d.]+) ms", inside):
                    stages[name] = stages.get(name, 0.0) + float(ms) / 1e3

        rune.jit(lambda x: x * 2.0)(1.0)  # LLVM's start-up, outside the timing
        rune.compile_log.logger.addHandler(Stages())
        rune.compile_log.logger.setLevel(logging.INFO)
    f, args = rnn_program(mode, k, peer, n) if n else program(mode, k, peer)
    wall, cpu = time.perf_counter(), time.process_time()
    out = f(*args)
    if peer == "jax":
        out.block_until_ready()
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
            "stages": stages}


def measure(mode: str, k: int, peer: str, timeout: float, n: int = 0) -> dict:
    """One first call in a fresh process (n: the rnn program's width; 0: the ops one)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, RUNE_JIT_CACHE_DIR=cache)
        try:
            run = subprocess.run([sys.executable, __file__, "--child", mode, str(k), peer,
                                  str(n)],
                                 capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"error": f"over {timeout:.0f} s"}
    if run.returncode:
        return {"error": (run.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def exponent(points: list[tuple[int, float]]) -> float | None:
    """Growth exponent between the two largest k from 200 up (or the two largest)."""
    big = [p for p in points if p[0] >= 200 and p[1] > 0] or [p for p in points if p[1] > 0]
    if len(big) < 2:
        return None
    (k1, t1), (k2, t2) = big[-2], big[-1]
    return math.log(t2 / t1) / math.log(k2 / k1)


def report(results: dict, ks: list[int], modes: list[str]) -> str:
    lines = []
    for mode in modes:
        rows = results[mode]
        names = sorted({s for k in ks for s in rows[k].get("rune_jit", {}).get("stages", {})})
        lines += [f"\n{mode}\n", "| k | rune_jit | jax | rune / jax (CPU) | " +
                  " | ".join(names) + " |", "|---" * (4 + len(names)) + "|"]
        for k in ks:
            r, j = rows[k].get("rune_jit", {}), rows[k].get("jax", {})
            ratio = f"{r['cpu'] / j['cpu']:.2f}" if "cpu" in r and "cpu" in j else "–"
            cells = [_s(r), _s(j), ratio] + [f"{r.get('stages', {}).get(n, 0):.3f}"
                                             for n in names]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        growth = {n: exponent([(k, rows[k]["rune_jit"]["stages"].get(n, 0)) for k in ks
                               if "stages" in rows[k].get("rune_jit", {})]) for n in names}
        growth["rune_jit"] = exponent([(k, rows[k]["rune_jit"]["wall"]) for k in ks
                                       if "wall" in rows[k].get("rune_jit", {})])
        lines.append("exponents: " + ", ".join(
            f"{n} {e:.2f}" for n, e in growth.items() if e is not None))
    return "\n".join(lines)


def _s(r: dict) -> str:
    return f"{r['wall']:.3f} s ({r['cpu']:.3f} CPU)" if "wall" in r else r.get("error", "–")


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="10,50,200,1000,3000")
    ap.add_argument("--modes", default="f,grad,vmap")
    ap.add_argument("--peers", default="rune_jit,jax")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--json")
    ap.add_argument("--program", choices=("ops", "rnn"), default="ops")
    ap.add_argument("--ns", default="8,16,64", help="the rnn program's widths")
    ap.add_argument("--lines", action="store_true", help="the rnn program's code per op")
    a = ap.parse_args()
    if a.lines:
        print(lines_report([int(k) for k in a.ks.split(",")], [int(n) for n in a.ns.split(",")],
                           a.modes.split(",")))
        return
    ks, modes = [int(k) for k in a.ks.split(",")], a.modes.split(",")
    ns = [int(n) for n in a.ns.split(",")] if a.program == "rnn" else [0]
    results: dict = {}
    for n in ns:
        table = results.setdefault(f"n={n}" if n else "ops", {m: {k: {} for k in ks}
                                                              for m in modes})
        for m in modes:
            for k in ks:
                for p in a.peers.split(","):
                    table[m][k][p] = run = measure(m, k, p, a.timeout, n)
                    print(f"{m} n={n} k={k} {p}: {_s(run)}", flush=True)
    for name, table in results.items():
        print(f"\n## {name}" + report(table, ks, modes))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results if a.program == "rnn" else results["ops"], f, indent=1)


if __name__ == "__main__":
    main()
