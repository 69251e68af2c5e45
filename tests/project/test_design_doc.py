"""docs/design.md's list of the arrows between layers is the code's (issue 33): a new
import across layers shows up here until the page says so."""

import functools
import re
import sys

import pytest

from paths import REPO

sys.path.insert(0, str(REPO / "tools"))
import import_cycles  # noqa: E402


def test_the_layer_arrows_on_the_page_are_the_codes():
    page = (REPO / "docs" / "design.md").read_text()
    block = re.search(r"<!-- layer arrows: tools/import_cycles.py -->\n```text\n(.*?)```",
                      page, re.S).group(1)
    listed = [line.split("(")[0].strip() for line in block.splitlines() if line.strip()]
    assert listed == import_cycles.arrows(_import_graph(), "rune_jit")


@functools.lru_cache(maxsize=None)  # read once for every test here
def _import_graph() -> dict:
    root = REPO / "rune_jit"
    paths = sorted(root.rglob("*.py"))
    modules = {import_cycles.module_name(p, root) for p in paths}
    return {import_cycles.module_name(p, root): import_cycles.imports(p, root, modules)
            for p in paths}


# the layers each of these may import (besides itself), and why it may import no other
BELOW = {
    # ops/ holds meaning only: a user spelling (pytrees of arguments, eager caches,
    # Python fallbacks) that reaches above it belongs in control_flow/ (issue 33)
    "ops": {"passes", "pytrees", "core"},
    # how a call runs: it traces and compiles, but calls no transformation and no
    # library (tracing a call is call/tracing.py's, an array value is values.py's)
    "call path": {"backend", "ops", "passes", "pytrees", "core"},
}


@pytest.mark.parametrize("low", sorted(BELOW))
def test_a_low_layer_imports_nothing_above_it(low):
    allowed = BELOW[low] | {low}
    above = sorted(f"{a} -> {b}" for a, bs in _import_graph().items()
                   if import_cycles.layer(a, "rune_jit") == low for b in bs
                   if import_cycles.layer(b, "rune_jit") not in allowed)
    assert not above, above


def test_every_module_has_a_layer_of_its_own_choosing():
    """A module under _src that no layer names falls to "core" by its empty prefix only
    if it is _src's own __init__: a new module must be placed in LAYERS."""
    src = REPO / "rune_jit" / "_src"
    unplaced = []
    for path in sorted(src.glob("*")):
        name = path.stem if path.suffix == ".py" else path.name
        if name.startswith("__") or name == "__pycache__":
            continue
        if not any(p == f"_src.{name}" for ps in import_cycles.LAYERS.values() for p in ps):
            unplaced.append(name)
    assert not unplaced, f"add {unplaced} to LAYERS in tools/import_cycles.py"
