"""Record jax.random's outputs for tests/jax_api/test_random.py (which never imports JAX).

Run once with JAX installed, from the repository's root:

    python tests/data/make_jax_random.py

It writes tests/data/jax_random.npz: every case below, one array each, and the cases
themselves (as JSON under "cases") so that the test replays exactly what was recorded.
A case is (name, mode, function, seed, keyword arguments); mode "x64" runs JAX with
jax_enable_x64 (rune_jit's defaults are JAX's there), "x32" without it (JAX's defaults:
float32, int32; keys from 32-bit seeds).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "jax_random.npz"
SEEDS = [0, 1, 42, 2**31 - 1, 123456789]
BIG_SEEDS = [-1, -12345, 2**40 + 7, -(2**63)]  # high words differ from x32's


def cases() -> list[tuple]:
    out = []
    for seed in SEEDS:
        s = f"s{seed}"
        out += [
            (f"key_{s}", "x64", "key", seed, {}),
            (f"split2_{s}", "x64", "split", seed, {"num": 2}),
            (f"split5_{s}", "x64", "split", seed, {"num": 5}),
            (f"split2x3_{s}", "x64", "split", seed, {"num": [2, 3]}),
            *[(f"fold_in{d}_{s}", "x64", "fold_in", seed, {"data": d})
              for d in (0, 1, 7, 2**31, 2**32 - 1)],
            *[(f"bits_{w}_{s}", "x64", "bits", seed, {"shape": [7], "dtype": f"uint{w}"})
              for w in (8, 16, 32, 64)],
            (f"bits_scalar_{s}", "x64", "bits", seed, {"shape": [], "dtype": "uint32"}),
            (f"uniform64_{s}", "x64", "uniform", seed, {"shape": [1000]}),
            (f"uniform32_{s}", "x64", "uniform", seed, {"shape": [1000], "dtype": "float32"}),
            (f"uniform16_{s}", "x64", "uniform", seed, {"shape": [200], "dtype": "float16"}),
            (f"uniform_range64_{s}", "x64", "uniform", seed,
             {"shape": [4, 50], "minval": -3.5, "maxval": 5.25}),
            (f"uniform_range32_{s}", "x64", "uniform", seed,
             {"shape": [200], "dtype": "float32", "minval": -2.0, "maxval": 7.0}),
            (f"uniform_scalar_{s}", "x64", "uniform", seed, {"shape": []}),
            (f"uniform_x32_{s}", "x32", "uniform", seed, {"shape": [500]}),
            (f"normal64_{s}", "x64", "normal", seed, {"shape": [4096]}),
            (f"normal32_{s}", "x64", "normal", seed, {"shape": [4096], "dtype": "float32"}),
            (f"normal_x32_{s}", "x32", "normal", seed, {"shape": [4096]}),
            (f"randint_{s}", "x64", "randint", seed, {"shape": [300], "minval": -10,
                                                      "maxval": 10}),
            (f"randint_wide_{s}", "x64", "randint", seed,
             {"shape": [300], "minval": -(2**62), "maxval": 2**62 + 12345}),
            (f"randint_full_{s}", "x64", "randint", seed,
             {"shape": [100], "minval": -(2**63), "maxval": 2**63 - 1}),
            (f"randint_int32_{s}", "x64", "randint", seed,
             {"shape": [300], "minval": 0, "maxval": 1000, "dtype": "int32"}),
            (f"randint_uint8_{s}", "x64", "randint", seed,
             {"shape": [300], "minval": 0, "maxval": 256, "dtype": "uint8"}),
            (f"randint_int8_{s}", "x64", "randint", seed,
             {"shape": [300], "minval": -100, "maxval": 100, "dtype": "int8"}),
            (f"randint_uint32_{s}", "x64", "randint", seed,
             {"shape": [300], "minval": 5, "maxval": 2**32 - 3, "dtype": "uint32"}),
            (f"randint_empty_span_{s}", "x64", "randint", seed,
             {"shape": [10], "minval": 4, "maxval": 4}),
            (f"randint_x32_{s}", "x32", "randint", seed,
             {"shape": [300], "minval": -50, "maxval": 77}),
            (f"bernoulli_{s}", "x64", "bernoulli", seed, {"p": 0.3, "shape": [500]}),
            (f"permutation_{s}", "x64", "permutation", seed, {"x": 20}),
            (f"permutation_rows_{s}", "x64", "permutation", seed,
             {"x": np.arange(12.0).reshape(4, 3).tolist()}),
            (f"choice_{s}", "x64", "choice", seed, {"a": 30, "shape": [8]}),
            (f"choice_noreplace_{s}", "x64", "choice", seed,
             {"a": 30, "shape": [8], "replace": False}),
            (f"exponential_{s}", "x64", "exponential", seed, {"shape": [500]}),
            (f"gumbel_{s}", "x64", "gumbel", seed, {"shape": [500]}),
            (f"laplace_{s}", "x64", "laplace", seed, {"shape": [500]}),
            (f"logistic_{s}", "x64", "logistic", seed, {"shape": [500]}),
            (f"truncated_normal_{s}", "x64", "truncated_normal", seed,
             {"lower": -1.5, "upper": 0.75, "shape": [500]}),
        ]
    for seed in BIG_SEEDS:
        out += [(f"key_big{seed}", "x64", "key", seed, {}),
                (f"uniform_big{seed}", "x64", "uniform", seed, {"shape": [20]})]
    out += [(f"key_x32_minus{n}", "x32", "key", -n, {}) for n in (1, 12345)]
    return out


def record(mode: str) -> dict:
    """Run JAX in `mode` for the cases of that mode (a fresh process per mode: x64 is
    set before JAX computes anything)."""
    import jax

    jax.config.update("jax_enable_x64", mode == "x64")
    import jax.numpy as jnp
    import jax.random as jr

    results = {}
    for name, m, fn, seed, kw in cases():
        if m != mode:
            continue
        key = jr.PRNGKey(seed if mode == "x64" else np.int32(seed))
        kw = dict(kw)
        if "dtype" in kw:
            kw["dtype"] = jnp.dtype(kw["dtype"])
        if "shape" in kw:
            kw["shape"] = tuple(kw["shape"])
        if fn == "split":
            kw["num"] = tuple(kw["num"]) if isinstance(kw["num"], list) else kw["num"]
        if fn == "permutation" and isinstance(kw["x"], list):
            kw["x"] = jnp.asarray(kw["x"])
        results[name] = np.asarray(key if fn == "key" else getattr(jr, fn)(key, **kw))
    return results


def main() -> None:
    if len(sys.argv) == 2:  # a child: record one mode
        np.savez(sys.argv[1] + ".part.npz", **record(Path(sys.argv[1]).name))
        return
    parts = {}
    for mode in ("x64", "x32"):
        stem = OUT.parent / mode
        subprocess.run([sys.executable, __file__, str(stem)], check=True)
        with np.load(f"{stem}.part.npz") as part:
            parts.update({k: part[k] for k in part.files})
        Path(f"{stem}.part.npz").unlink()
    import jax

    spec = [{"name": n, "mode": m, "fn": f, "seed": s, "kwargs": kw}
            for n, m, f, s, kw in cases()]
    np.savez_compressed(OUT, cases=json.dumps({"jax": jax.__version__, "cases": spec}),
                        **parts)
    print(f"wrote {len(parts)} arrays to {OUT}")


if __name__ == "__main__":
    main()
