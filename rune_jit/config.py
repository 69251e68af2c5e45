"""Settings read from the environment once, at import."""

from __future__ import annotations

import os

# Verify every region a trace or pass builds (the test suite turns this on).
verify_regions: bool = os.environ.get("RUNE_JIT_VERIFY", "") not in ("", "0")

# "native" runs each loop called outside jit as compiled code; "interpret" runs
# everything through the NumPy interpreter (the oracle the tests compare with).
backend: str = os.environ.get("RUNE_JIT_BACKEND", "native")
if backend not in ("native", "interpret"):
    raise ValueError(f"RUNE_JIT_BACKEND must be 'native' or 'interpret', got {backend!r}")


def _num_threads() -> int:
    """RUNE_JIT_NUM_THREADS: threads compiled code runs independent lanes on (the caller
    among them); default the CPUs this process may use."""
    raw = os.environ.get("RUNE_JIT_NUM_THREADS", "").strip()
    if not raw:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"RUNE_JIT_NUM_THREADS must be a positive integer, got {raw!r}")
    return n


# Threads compiled code may use (backend/cpu/threads.py); 1 compiles serial code only.
num_threads: int = _num_threads()
