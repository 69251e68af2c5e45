"""Settings read from the environment once, at import."""

from __future__ import annotations

import os

# Verify every region a trace or pass builds (the test suite turns this on).
verify_regions: bool = os.environ.get("RUNE_JIT_VERIFY", "") not in ("", "0")
