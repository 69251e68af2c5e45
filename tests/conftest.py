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
from rune_jit._src import config  # noqa: E402

BACKENDS = ["eager", "jit"]
MODES = ["interpret", "eager", "jit"]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """`backend(f)` is f as that backend runs it: "eager" runs the NumPy interpreter
    (loops included: it is the oracle), "jit" compiles f to native code."""
    if request.param == "eager":
        monkeypatch.setattr(config, "backend", "interpret")
        return lambda f, **kw: f
    return lambda f, **kw: rune.jit(f, **kw)


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    """`mode(f)`: f as run by the interpreter, eagerly (loops compiled as a unit), jitted."""
    if request.param == "interpret":
        monkeypatch.setattr(config, "backend", "interpret")
    return rune.jit if request.param == "jit" else (lambda f: f)


@pytest.fixture
def layers_as_written(monkeypatch):
    """Repeated layers compiled as traced, not folded into a loop over them
    (rune_jit/_src/ops/repeated_layers.py): for tests of what long programs compile to."""
    monkeypatch.setattr(config, "fold_layers", False)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# The quick run (-m "not slow") samples the exhaustive parametrisations: a test function
# with more than QUICK_SHARE cases keeps a fixed sample of them, at least one of each
# leading parameter (each primitive, each case), and the rest are marked slow, so that
# `-m slow` (CI's second command) runs them whole. The sample is fixed by the test ids,
# not by the run: the same tests run every time.
QUICK_SHARE = 60


def pytest_collection_modifyitems(config, items):
    groups: dict = {}
    for item in items:
        if getattr(item, "callspec", None) is not None:
            groups.setdefault((item.fspath, item.originalname), []).append(item)
    for group in groups.values():
        if len(group) > QUICK_SHARE:
            _sample_quick(group, QUICK_SHARE / len(group))


def _sample_quick(group: list, share: float) -> None:
    import math
    import zlib

    strata: dict = {}
    for item in group:
        strata.setdefault(_leading_id(item), []).append(item)
    for stratum in strata.values():
        ranked = sorted(stratum, key=lambda it: zlib.crc32(it.nodeid.encode()))
        for item in ranked[math.ceil(len(ranked) * share):]:
            item.add_marker(pytest.mark.slow)


def _leading_id(item) -> str:
    """The first parameter's id (the primitive or case a test is about)."""
    return item.callspec.id.split("-")[0]
