"""ns per element of a jitted map of one math function over inputs from one range at a
time (issue 41, item 4): the core range, results that underflow (to subnormal, to 0) or
overflow, subnormal inputs, huge trigonometric arguments, arrays all NaN and all inf.

    python bench/math_ranges.py [--functions exp,log] [--dtypes float64] [--n 100000]
                                [--repeat 31] [--peers numpy,jax]
    RUNE_JIT_CPU=haswell XLA_FLAGS=--xla_cpu_max_isa=AVX2 python bench/math_ranges.py

rune_jit, JAX (float64 enabled) and NumPy in one process, one thread each
(RUNE_JIT_NUM_THREADS=1, XLA's single-threaded elementwise loops), their calls
interleaved repeat by repeat (so that load from other processes falls on all alike):
the median of `repeat` calls. Each range's rune_jit values are checked against NumPy's:
NaN, ±inf and zeros in the same places, the rest within ULPS units in the last place
(subnormals counted in their own ulps, so a flush to zero fails); the output says which
ranges pass, and whether JAX's values do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

ULPS = 4  # the documented bounds are 1 (rune_jit's own) and NumPy's own 0.5-4
TINY = {"float64": 2.0 ** -1022, "float32": 2.0 ** -126}  # the smallest normal
SUB = {"float64": 2.0 ** -1074, "float32": 2.0 ** -149}  # the smallest subnormal


def _uniform(low: float, high: float):
    return lambda rng, n, dtype: rng.uniform(low, high, n)


def _subnormal(signed: bool):
    """Subnormals spread over their exponents (log-uniform), both signs if `signed`."""
    def draw(rng, n, dtype):
        v = np.exp2(rng.uniform(np.log2(SUB[dtype]), np.log2(TINY[dtype]), n))
        return v * rng.choice([-1.0, 1.0], n) if signed else v
    return draw


def _const(value: float):
    return lambda rng, n, dtype: np.full(n, value)


def _by_dtype(f64, f32):
    return lambda rng, n, dtype: (f64 if dtype == "float64" else f32)(rng, n, dtype)


SPECIAL = {"subnormal x": _subnormal(True), "all NaN": _const(np.nan),
           "all inf": _const(np.inf)}
POSITIVE_SPECIAL = {**SPECIAL, "subnormal x": _subnormal(False)}
TRIG = {"core [-10, 10]": _uniform(-10, 10), "|x| in [1e6, 1e7]": _uniform(1e6, 1e7),
        "|x| in [1e20, 1e22]": _uniform(1e20, 1e22), **SPECIAL}
# function -> range name -> draw(rng, n, dtype) (float64 values, cast to dtype after)
RANGES = {
    "exp": {"core [-5, 0]": _uniform(-5, 0),
            "subnormal result": _by_dtype(_uniform(-744, -709), _uniform(-103, -88)),
            "result 0": _by_dtype(_uniform(-760, -746), _uniform(-120, -104)),
            "overflow": _by_dtype(_uniform(710, 720), _uniform(89, 100)), **SPECIAL},
    "exp2": {"core [-5, 5]": _uniform(-5, 5),
             "subnormal result": _by_dtype(_uniform(-1074, -1023), _uniform(-149, -127)),
             "result 0": _by_dtype(_uniform(-1100, -1076), _uniform(-170, -151)),
             "overflow": _by_dtype(_uniform(1024, 1100), _uniform(128, 140)), **SPECIAL},
    "expm1": {"core [-2, 2]": _uniform(-2, 2),
              "result -1": _by_dtype(_uniform(-760, -740), _uniform(-120, -104)),
              "overflow": _by_dtype(_uniform(710, 720), _uniform(89, 100)), **SPECIAL},
    "log": {"core [0.5, 2]": _uniform(0.5, 2), **POSITIVE_SPECIAL},
    "log2": {"core [0.5, 2]": _uniform(0.5, 2), **POSITIVE_SPECIAL},
    "log1p": {"core [-0.5, 2]": _uniform(-0.5, 2), **POSITIVE_SPECIAL},
    "sin": TRIG, "cos": TRIG, "tan": TRIG,
    "tanh": {"core [-5, 5]": _uniform(-5, 5), "saturated [20, 40]": _uniform(20, 40),
             **SPECIAL},
}
# power: x ** y, x and y drawn per range
POWER = {
    "core x [0.1, 10], y [-5, 5]": (_uniform(0.1, 10), _uniform(-5, 5)),
    "subnormal result": (_const(2.0), _by_dtype(_uniform(-1074, -1023), _uniform(-149, -127))),
    "result 0": (_const(2.0), _by_dtype(_uniform(-1100, -1076), _uniform(-170, -151))),
    "overflow": (_const(2.0), _by_dtype(_uniform(1025, 1100), _uniform(129, 140))),
    "subnormal x": (_subnormal(False), _uniform(0.5, 1.0)),
    "all NaN": (_const(np.nan), _const(np.nan)),
    "all inf": (_const(np.inf), _uniform(0.5, 1.0)),
}
FUNCTIONS = (*RANGES, "power")
DTYPES = ("float64", "float32")


def ranges(name: str) -> dict:
    return POWER if name == "power" else {k: (v,) for k, v in RANGES[name].items()}


def inputs(name: str, label: str, dtype: str, n: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    return tuple(draw(rng, n, dtype).astype(dtype) for draw in ranges(name)[label])


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between finite a and b (subnormals in their own units: the
    distance of the bit patterns, ordered through zero)."""
    it = np.int64 if a.dtype == np.float64 else np.int32
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    top = np.int64(np.iinfo(it).min)
    ia = np.where(ia < 0, top - ia, ia)  # negative floats below the positive ones
    ib = np.where(ib < 0, top - ib, ib)
    return np.abs(ia - ib)


def agrees(got: np.ndarray, want: np.ndarray) -> tuple[bool, float]:
    """(whether got is NumPy's `want`: NaN, inf and 0 where it has them, else within ULPS;
    the largest distance in ulps)."""
    got = np.asarray(got, dtype=want.dtype)
    nan = np.isnan(want)
    if not np.array_equal(nan, np.isnan(got)):
        return False, float("inf")
    special = ~nan & (np.isinf(want) | (want == 0))
    if not np.array_equal(got[special], want[special]):
        return False, float("inf")
    rest = ~nan & ~special
    worst = float(ulp_distance(got[rest], want[rest]).max()) if rest.any() else 0.0
    return worst <= ULPS, worst


def median_ns(fns: dict, args: tuple, n: int, repeat: int) -> dict:
    """Each of `fns` called on args `repeat` times, interleaved: median ns per element."""
    times: dict = {peer: [] for peer in fns}
    for _ in range(repeat):
        for peer, fn in fns.items():
            start = time.perf_counter()
            fn(*args)
            times[peer].append(time.perf_counter() - start)
    return {peer: statistics.median(t) / n * 1e9 for peer, t in times.items()}


def peers(name: str, wanted: list[str]) -> dict:
    """peer -> the function, made callable that returns a finished NumPy array."""
    import rune_jit as rune
    import rune_jit.numpy as rnp

    fns = {"rune_jit": rune.jit(getattr(rnp, name)), "numpy": getattr(np, name)}
    if "jax" in wanted:
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            print("jax: not importable, left out")
        else:
            jax.config.update("jax_enable_x64", True)
            f = jax.jit(getattr(jnp, name))
            fns["jax"] = lambda *a: f(*a).block_until_ready()
    return {p: fns[p] for p in ("rune_jit", "jax", "numpy") if p in fns and
            (p == "rune_jit" or p in wanted)}


def measure(name: str, dtype: str, n: int, repeat: int, wanted: list[str]) -> list[dict]:
    fns = peers(name, wanted)
    rows = []
    for label in ranges(name):
        args = inputs(name, label, dtype, n)
        with np.errstate(all="ignore"):
            want = np.asarray(getattr(np, name)(*args))
            checks = {p: agrees(np.asarray(fns[p](*args)), want) for p in fns if p != "numpy"}
        ns = median_ns(fns, args, n, repeat)
        rows.append(dict(function=name, dtype=dtype, range=label, ns=ns, checks=checks))
    return rows


def report(rows: list[dict]) -> None:
    """A Markdown table: ns per element per peer, rune_jit / JAX, rune_jit's range over
    its core range, and the value checks."""
    have_jax = any("jax" in r["ns"] for r in rows)
    head = "| function | dtype | range | rune_jit | " + ("JAX | " if have_jax else "")
    head += "NumPy | rune / JAX | / core | rune = NumPy (max ulp) |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    core = {}
    for r in rows:
        ns = r["ns"]
        key = (r["function"], r["dtype"])
        core.setdefault(key, ns["rune_jit"])
        ok, worst = r["checks"]["rune_jit"]
        jax_cells = f"{ns['jax']:.2f} | " if have_jax else ""
        ratio = f"{ns['rune_jit'] / ns['jax']:.2f}" if "jax" in ns else "-"
        jax_note = ""
        if "jax" in r["checks"] and not r["checks"]["jax"][0]:
            jax_note = " (JAX's differ)"
        print(f"| {r['function']} | {r['dtype']} | {r['range']} | {ns['rune_jit']:.2f} | "
              f"{jax_cells}{ns['numpy']:.2f} | {ratio} | {ns['rune_jit'] / core[key]:.2f} | "
              f"{'yes' if ok else 'NO'} ({worst:g}){jax_note} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=31)
    ap.add_argument("--peers", default="numpy,jax")
    args = ap.parse_args()
    np.seterr(all="ignore")  # NumPy's overflow and underflow in the timed calls
    rows = []
    for name in args.functions.split(","):
        for dtype in args.dtypes.split(","):
            rows += measure(name, dtype, args.n, args.repeat, args.peers.split(","))
    report(rows)
    failed = [r for r in rows if not r["checks"]["rune_jit"][0]]
    print(f"\nrune_jit's values are NumPy's in {len(rows) - len(failed)} of {len(rows)} ranges"
          + ("" if not failed else ": not in " + ", ".join(
              f"{r['function']} {r['dtype']} {r['range']}" for r in failed)))


if __name__ == "__main__":
    os.environ.setdefault("RUNE_JIT_NUM_THREADS", "1")
    # appended: a target's flags (--xla_cpu_max_isa=AVX2, bench/targets.py) are kept
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen"
                               "=false intra_op_parallelism_threads=1").strip()
    main()
