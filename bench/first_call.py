"""Time each peer's first call of each workload in this fresh process; print JSON.

    python bench/first_call.py MODE W1,W2 rune_jit,jax

Each peer's one-time start-up (LLVM or XLA initialization) is paid by a trivial function
first (its `warm_up` hook), so a first call measures what the workload itself costs: trace,
compile, run, and whatever the peer's `first_call` hook does (C: compile c_ref.c).
"""

from __future__ import annotations

import json
import sys

import harness
import workloads as wl


def main(mode: str, names: str, peers: str) -> None:
    modules = {p: harness.load(p) for p in peers.split(",")}
    for module in modules.values():
        if hasattr(module, "warm_up"):
            module.warm_up()
    out: dict = {}
    for name in names.split(","):
        w = wl.BY_NAME[name]
        inp = wl.inputs(w, mode)
        out[name] = {p: ({"error": m} if isinstance(m, str) else
                         harness.time_first_call(m, p, name, inp))
                     for p, m in modules.items() if p in w.peers}
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
