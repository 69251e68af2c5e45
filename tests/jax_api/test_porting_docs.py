"""docs/porting-from-jax.md tells the truth: its coverage table is what
docs/jax_coverage.py measures now, every name it lists as absent raises the error it
describes, and the coverage stays at the issue's bars."""

import importlib.util
import re

import pytest

import rune_jit as rune
from rune_jit._src import absent
from paths import REPO

DOCS = REPO / "docs"


def coverage_script():
    spec = importlib.util.spec_from_file_location("jax_coverage", DOCS / "jax_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_coverage_table_is_current():
    script = coverage_script()
    page = (DOCS / "porting-from-jax.md").read_text()
    shown = re.search(r"<!-- coverage table: .*? -->\n\n(.*?)\n<!-- end of coverage table -->",
                      page, re.S).group(1)
    assert shown == script.table(script.coverage(script.census())), (
        "docs/porting-from-jax.md's table is stale: paste `python docs/jax_coverage.py "
        "--table` into it")


def test_coverage_stays_at_the_bars():
    script = coverage_script()
    cov = script.coverage(script.census())
    assert cov["uses_present"] / cov["uses"] >= 0.97
    assert cov["top300"] >= 285


@pytest.mark.parametrize("module,name", [(m, n) for m, names in absent.ABSENT.items()
                                         for n in names])
def test_each_absent_name_says_it_is_not_provided(module, name):
    mod = importlib.import_module(module)
    with pytest.raises(AttributeError, match=rf"JAX's jax[.\w]*\.{name} is not provided"):
        getattr(mod, name)
    assert name not in getattr(mod, "__all__", ())
    assert rune.__name__ == "rune_jit"
