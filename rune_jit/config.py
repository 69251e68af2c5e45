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
