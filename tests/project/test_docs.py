"""The docs' code runs and prints what they show: docs/loops.md is the tour's page, and
every other page's ```python blocks run in one namespace, each ```text block right after
one being what it prints."""

import contextlib
import io
import re

import numpy as np
import pytest

from rune_jit._src import tour
from rune_jit._src.primitive import Primitive
from paths import REPO

DOCS = REPO / "docs"
BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.S)
PAGES = sorted(p.name for p in DOCS.glob("*.md")
               if p.name != "loops.md" and "```python" in p.read_text())


def test_loops_page_is_the_tour_and_its_outputs_are_real():
    page = tour.markdown(tour.run_steps())
    assert (DOCS / "loops.md").read_text() == page, (
        "docs/loops.md is stale or an output changed: regenerate it with "
        "`python -m rune_jit --markdown > docs/loops.md` and review the diff")


def test_tour_shows_the_seed_results():
    outputs = dict((step.title, out) for step, out in tour.run_steps())
    assert "[1.0, 4.000000000000051, 1000.0]" in outputs["Lanes apart"]
    assert outputs["Too few steps"].strip() == (
        "rune_jit.iterate: until is still false after max_steps = 3 steps, in lane 1")
    assert "[0.25, 0.16666666666666666]" in outputs["Roots"]
    assert "agree within 1e-12: True" in outputs["Rematerialization"]


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs_and_prints_what_the_page_shows(page):
    blocks = BLOCK.findall((DOCS / page).read_text())
    namespace: dict = {}
    registered = set(Primitive.registry)
    try:
        for i, (kind, code) in enumerate(blocks):
            if kind != "python":
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out), np.printoptions(suppress=True):
                exec(compile(code, f"{page} block {i}", "exec"), namespace)
            shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" \
                else ""
            assert out.getvalue() == shown, f"{page} block {i} printed:\n{out.getvalue()}"
    finally:  # a page may define primitives: they are the page's, not the suite's
        for name in set(Primitive.registry) - registered:
            del Primitive.registry[name]
