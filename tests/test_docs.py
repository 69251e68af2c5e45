"""docs/loops.md is the tour's page: its code runs and prints exactly what it shows."""

from pathlib import Path

from rune_jit import tour

DOCS = Path(__file__).resolve().parent.parent / "docs"


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
