"""Every example in rune_jit's docstrings runs and prints what it shows (doctest), in
each module of the package, with `np`, `rune`, `rnp` and the module's own names in
scope."""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

# The package's modules less the entry point (python -m rune_jit runs the tour)
MODULES = sorted(m.name for m in pkgutil.walk_packages(rune.__path__, "rune_jit.")
                 if not m.name.endswith("__main__"))
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def examples(module_name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(module_name)
    globs = {"np": np, "rune": rune, "rnp": rnp, **vars(module)}
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module_name, globs=globs) if t.examples]


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    with np.printoptions(legacy=False):
        for test in examples(module_name):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring examples failed in {module_name}"


def test_the_public_functions_have_examples():
    """The top-level API documents itself with an example each."""
    missing = [name for name in rune.__all__
               if callable(getattr(rune, name)) and not isinstance(getattr(rune, name), type)
               and ">>>" not in (getattr(rune, name).__doc__ or "")]
    assert not missing, sorted(missing)
