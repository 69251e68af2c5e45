"""The results as markdown tables, issue 6's targets, JSON and a chart."""

from __future__ import annotations

import json
import math

import workloads as wl

# (workload, peers, factor): rune_jit at least `factor` times faster than the fastest of peers
SPEED_TARGETS = [("W1", ("jax", "numba"), 4.0), ("W2", ("jax",), 4.0), ("W2", ("numba",), 2.0),
                 ("W3", ("jax",), 1.0), ("W3g", ("jax",), 1.5), ("W4", ("jax",), 5.0),
                 ("W4", ("numba",), 5.0), ("W4s", ("jax",), 20.0), ("W5", ("jax",), 1.0),
                 ("W5", ("jax_unrolled",), 5.0), ("W6", ("jax",), 1.0), ("D", ("numba",), 1.0),
                 ("ST", ("jax",), 1.0),
                 # issue 13: the sparse product and its gradient 2x JAX, no slower than Numba
                 *[(w, (peer,), factor) for w in ("W8", "W8g")
                   for peer, factor in (("jax", 2.0), ("numba", 1.0))],
                 # issue 19: the heat stencil no slower than the hand loops, the Kalman
                 # filter than C, the softmax training scan than JAX
                 *[(hs, (peer,), 1.0) for hs in ("HS", "HSat", "HS32") for peer in ("c", "numba")],
                 ("KF", ("c",), 1.0), ("SX", ("jax",), 1.0),
                 # issue 41: log_softmax in a scan, its exp's arguments far below -708,
                 # no slower than any peer
                 *[("LSM", (peer,), 1.0) for peer in ("jax", "numba", "numpy")],
                 # issue 19: products at the BLAS floor: Tᵀ F no slower than NumPy's
                 # OpenBLAS, matmul than OpenBLAS on one thread (the C row), the
                 # matrix-carry scan than JAX
                 *[(w.name, ("numpy",), 1.0) for w in wl.WORKLOADS if w.group == "TF"],
                 ("MM", ("c",), 1.0),
                 # issue 34: the Mandelbrot set at most half Numba's time, no slower than C
                 ("MB", ("numba",), 2.0), ("MB", ("c",), 1.0),
                 # issue 34: the split-step solver and its gradient no slower than JAX,
                 # the transforms alone within 1.5x NumPy's
                 ("NLS", ("jax",), 1.0), ("NLSg", ("jax",), 1.0), ("FT", ("numpy",), 1 / 1.5),
                 *[(w.name, ("jax",), 1.0) for w in wl.WORKLOADS if w.group == "MC"]]
COMPILE_TARGET_WORKLOADS = ("W1", "W2", "W3", "W3g", "W4", "W4s", "W5", "U")
# issue 18: eager rnp calls at most 2x NumPy's time
EAGER_NUMPY_TARGETS = [f"E{fn}{n}" for fn in ("add", "sin", "sum") for n in ("1", "1k")]
# (eager row, its jitted row, factor, µs): the eager call within factor x the jitted + µs
EAGER_JIT_TARGETS = [("Egrad", "Egrad-jit", 3.0, 10.0), ("Escan", "Escan-jit", 2.0, 10.0)]


def seconds(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def _ratio(r: float | None) -> str:
    return "–" if r is None else f"{r:.3g}"


def add_ratios(workload: dict) -> None:
    """Each timed peer's steady median divided by C's and by JAX's, where those ran."""
    peers = workload["peers"]
    base = {b: peers[b]["steady"]["median"] for b in ("c", "jax")
            if "steady" in peers.get(b, {})}
    for rec in peers.values():
        if "steady" in rec:
            for b, t in base.items():
                rec[f"ratio_to_{b}"] = rec["steady"]["median"] / t


def _note(rec: dict) -> str:
    if rec["status"] != "ok":
        return f"{rec['status']}: {rec['reason']}"
    note = "reference" if "rel_diff" not in rec else f"Δ {rec['rel_diff']:.1e}"
    for key in ("first_call_error", "first_call_warm_disk_error"):
        note += f"; {key.replace('_', ' ')}: {rec[key]}" if key in rec else ""
    return note


def main_table(results: dict) -> str:
    lines = ["| workload | peer | first call | steady median | min | max | ×C | ×JAX | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, w in results["workloads"].items():
        for peer, rec in w["peers"].items():
            st = rec.get("steady", {})
            lines.append(f"| {name} | {peer} | {seconds(rec.get('first_call_s'))} | "
                         f"{seconds(st.get('median'))} | {seconds(st.get('min'))} | "
                         f"{seconds(st.get('max'))} | {_ratio(rec.get('ratio_to_c'))} | "
                         f"{_ratio(rec.get('ratio_to_jax'))} | {_note(rec)} |")
    return "\n".join(lines)


def compile_table(results: dict) -> str:
    cols = ["c", "numba", "jax", "jax_unrolled"]
    lines = ["| workload | rune_jit cold | rune_jit warm (disk) | warm / cold | "
             + " | ".join(cols) + " |", "|---" * (4 + len(cols)) + "|"]
    for name, w in results["workloads"].items():
        rune = w["peers"].get("rune_jit", {})
        cold, warm = rune.get("first_call_s"), rune.get("first_call_warm_disk_s")
        frac = _ratio(warm / cold) if cold and warm else "–"
        others = [seconds(w["peers"].get(p, {}).get("first_call_s")) for p in cols]
        lines.append(f"| {name} | {seconds(cold)} | {seconds(warm)} | {frac} | "
                     + " | ".join(others) + " |")
    return "\n".join(lines)


def _median(results: dict, name: str, peer: str) -> float | None:
    rec = results["workloads"].get(name, {}).get("peers", {}).get(peer, {})
    return rec.get("steady", {}).get("median")


def _target(text: str, measured: float, bound: str, want: float) -> dict:
    met = measured >= want if bound == "≥" else measured <= want
    return {"target": text, "measured": measured, "bound": bound, "want": want, "met": met}


def targets(results: dict) -> list[dict]:
    """The issues' targets that this run measured, each with its measured ratio."""
    out = []
    for name, peers, factor in SPEED_TARGETS:
        rune = _median(results, name, "rune_jit")
        times = [t for t in (_median(results, name, p) for p in peers) if t is not None]
        if rune and times:
            out.append(_target(f"{name}: {' or '.join(peers)} time / rune_jit time",
                               min(times) / rune, "≥", factor))
    plain, remat = _median(results, "W6", "rune_jit"), _median(results, "W6r", "rune_jit")
    if plain and remat:
        out.append(_target("W6r: rune_jit time with remat / without", remat / plain, "≤", 1.5))
    kept = {n: results["workloads"].get(n, {}).get("kept_bytes", {}).get("rune_jit")
            for n in ("W6", "W6r")}
    if all(isinstance(b, int) and b for b in kept.values()):
        out.append(_target("W6r: rune_jit kept bytes with remat / without",
                           kept["W6r"] / kept["W6"], "≤", 1 / 3))
    return (out + _memory_target(results) + _eager_targets(results)
            + _compile_targets(results) + _thread_targets(results.get("threads")))


def _eager_targets(results: dict) -> list[dict]:
    """Issue 18's: eager calls near NumPy and near their jitted calls, jitted calls of
    numbers, dicts and static values near the all-array dispatch of the same function."""
    out = []
    for name in EAGER_NUMPY_TARGETS:
        rune, numpy = _median(results, name, "rune_jit"), _median(results, name, "numpy")
        if rune and numpy:
            out.append(_target(f"{name}: rune_jit time / NumPy's", rune / numpy, "≤", 2.0))
    for eager, jitted, factor, us in EAGER_JIT_TARGETS:
        e, j = _median(results, eager, "rune_jit"), _median(results, jitted, "rune_jit")
        if e and j:
            out.append(_target(f"{eager}: rune_jit time / ({factor:g} x {jitted}'s + {us:g} µs)",
                               e / (factor * j + us * 1e-6), "≤", 1.0))
    mixed, arrays = _median(results, "Dmix", "rune_jit"), _median(results, "Dmix-arrays",
                                                                  "rune_jit")
    if mixed and arrays:
        out.append(_target("Dmix: rune_jit time / Dmix-arrays'", mixed / arrays, "≤", 3.0))
    return out


THREAD_TARGET = ("W4", 1.8)  # issue 17: two threads at least 1.8 times one on an idle host


def _thread_targets(threads: dict | None) -> list[dict]:
    name, want = THREAD_TARGET
    row = (threads or {}).get("rows", {}).get(name)
    if row is None or threads["threads"] < 2:
        return []
    return [_target(f"{name}: rune_jit one-thread time / {threads['threads']} threads' "
                    f"(load average {threads['load_average_before']:.2f})",
                    row["ratio"], "≥", want)]


def threads_table(threads: dict | None) -> str:
    """One thread against all, per workload, with the NumPy control and the load."""
    if not threads:
        return "(not measured: --only without `threads`)"
    lines = [f"{threads['threads']} threads (RUNE_JIT_NUM_THREADS or the CPUs this process "
             f"may use: {threads['cpus']}); load average {threads['load_average_before']:.2f} "
             f"before, {threads['load_average_after']:.2f} after", "",
             "| workload | size | one thread | all threads | ratio | bit-identical |",
             "|---|---|---|---|---|---|"]
    for name, r in threads["rows"].items():
        lines.append(f"| {name} | {r['size']} | {seconds(r['one_thread_s'])} | "
                     f"{seconds(r['all_threads_s'])} | {r['ratio']:.3g} | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    return "\n".join(lines)


def _memory_target(results: dict) -> list[dict]:
    """Issue 19: RM's gradient stores one carry a step (its tape), 1.1x at most, with remat
    on its step (RMr) and without (RM)."""
    out = []
    for name in ("RM", "RMr"):
        w = results["workloads"].get(name, {})
        stored = w.get("stored_bytes", {}).get("rune_jit")
        if isinstance(stored, int):
            carry = 8 * w["size"]["h"]
            out.append(_target(f"{name}: rune_jit bytes a call stores a step / one carry "
                               f"({carry} B)", stored / w["size"]["t"] / carry, "≤", 1.1))
    return out


def _compile_targets(results: dict) -> list[dict]:
    out = []
    for name in COMPILE_TARGET_WORKLOADS:
        peers = results["workloads"].get(name, {}).get("peers", {})
        cold = peers.get("rune_jit", {}).get("first_call_s")
        warm = peers.get("rune_jit", {}).get("first_call_warm_disk_s")
        jax = peers.get("jax", {}).get("first_call_s")
        if cold and jax:
            out.append(_target(f"{name}: rune_jit cold first call / JAX's", cold / jax, "≤", 1))
        if cold and warm:
            out.append(_target(f"{name}: rune_jit first call warm from disk / cold",
                               warm / cold, "≤", 0.2))
    return out


def targets_table(rows: list[dict]) -> str:
    lines = ["| target | measured | wanted | met |", "|---|---|---|---|"]
    lines += [f"| {t['target']} | {t['measured']:.3g} | {t['bound']} {t['want']:.3g} | "
              f"{'yes' if t['met'] else 'NO'} |" for t in rows]
    return "\n".join(lines)


def notes(results: dict) -> str:
    lines = []
    for name, w in results["workloads"].items():
        extra = [w["note"]] if w["note"] else []
        for key, what in (("kept_bytes", "kept for the backward pass"),
                          ("stored_bytes", "stored by a call (scratch memory)")):
            counted = ", ".join(_bytes(p, b, w["size"]) for p, b in w.get(key, {}).items())
            extra += [f"{what}: {counted}"] if counted else []
        lines.append(f"- {name}: {w['title']} ({w['size']})" + "".join(f"; {e}" for e in extra))
    return "\n".join(lines)


def _bytes(peer: str, counted: int | str, size: dict) -> str:
    """`counted` bytes in MiB, and a step's share of them in a loop of size["t"] steps."""
    if not isinstance(counted, int):
        return f"{peer} {counted}"
    return f"{peer} {counted / 2**20:.3g} MiB ({counted / size['t']:.4g} B a step)"


def write_json(results: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(results, f, indent=1, default=str)


def chart(results: dict, path: str) -> bool:
    """A PNG of each peer's steady time over C's and over JAX's (log scale); False
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = list(results["workloads"])
    fig, axes = plt.subplots(2, 1, figsize=(max(6, 1.1 * len(names)), 7), sharex=True)
    width = 0.8 / len(wl.PEERS)
    for ax, base in zip(axes, ("c", "jax")):
        for k, peer in enumerate(wl.PEERS):
            xs, ys = [], []
            for i, name in enumerate(names):
                r = results["workloads"][name]["peers"].get(peer, {}).get(f"ratio_to_{base}")
                if r is not None:
                    xs.append(i + (k - len(wl.PEERS) / 2 + 0.5) * width)
                    ys.append(r)
            if xs:
                ax.bar(xs, ys, width, label=peer, color=f"C{k}")  # one colour per peer
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel(f"steady time / {'C' if base == 'c' else 'JAX'}  (lower is faster)")
    by_label = {lb: h for ax in axes for h, lb in zip(*ax.get_legend_handles_labels())}
    labels = [p for p in wl.PEERS if p in by_label]
    fig.legend([by_label[p] for p in labels], labels, ncol=len(labels), fontsize="small",
               loc="lower center")
    axes[1].set_xticks(range(len(names)), names)
    axes[0].set_title(f"rune_jit bench, {results['meta']['date']}, {results['meta']['cpu']}",
                      fontsize="medium")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
