"""Shared fixtures: every region built during the tests is verified, and value tests
run on every backend through `backend`."""

import os
from pathlib import Path

os.environ.setdefault("RUNE_JIT_VERIFY", "1")
# the suite's programs go to a cache of its own (kept between runs, which makes a second
# run faster), not into the user's
os.environ.setdefault("RUNE_JIT_CACHE_DIR",
                      str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "rune_jit"))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rune_jit as rune  # noqa: E402
from rune_jit import config  # noqa: E402

BACKENDS = ["eager", "jit"]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """`backend(f)` is f as that backend runs it: "eager" runs the NumPy interpreter
    (loops included: it is the oracle), "jit" compiles f to native code."""
    if request.param == "eager":
        monkeypatch.setattr(config, "backend", "interpret")
        return lambda f, **kw: f
    return lambda f, **kw: rune.jit(f, **kw)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
