"""The public face: `dir(rune_jit)` is the documented API (`__all__`), the API reference
covers every public module, and the internal modules' old names still answer, with a
DeprecationWarning naming where they went (issue 33)."""

import importlib
import subprocess
import sys
import types

import pytest

import rune_jit as rune

from paths import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from api_docs import PUBLIC  # noqa: E402


def test_dir_is_the_documented_api():
    """`__all__`, and the public subpackages imported on demand (example_libraries, as
    JAX's) once something imported them."""
    public = {n for n in dir(rune) if not n.startswith("_")}
    on_demand = {name.split(".")[1] for name in PUBLIC if name.count(".") == 1}
    assert set(rune.__all__) <= public <= set(rune.__all__) | on_demand


def test_the_api_reference_covers_every_public_module():
    modules = {f"rune_jit.{n}" for n in rune.__all__
               if isinstance(getattr(rune, n), types.ModuleType)}
    assert modules <= set(PUBLIC)
    for name in PUBLIC:
        module = importlib.import_module(name)
        assert module.__doc__, f"{name} has no docstring"
        assert not name.startswith("rune_jit._src")


# classes that carry their public path as __module__ on purpose (tracebacks, reprs)
RELABELLED = {"rune_jit.Array", "rune_jit.errors.CheckError", "rune_jit.errors.ConcretizationError",
              "rune_jit.errors.GradCheckError", "rune_jit.errors.IterateError",
              "rune_jit.errors.UnsupportedPlatformError"}


def test_public_modules_only_re_export():
    """Nothing a public module defines is its own: its functions and classes live in _src."""
    for name in PUBLIC:
        module = importlib.import_module(name)
        own = [k for k, v in vars(module).items()
               if isinstance(v, (types.FunctionType, type)) and not k.startswith("_")
               and getattr(v, "__module__", "") == name and f"{name}.{k}" not in RELABELLED]
        assert not own, f"{name} defines {own}: move them under rune_jit/_src"
        inner = [k for k, v in vars(module).items() if isinstance(v, types.ModuleType)
                 and v.__name__.startswith("rune_jit._src") and not k.startswith("_")
                 and f"{name}.{k}" != "rune_jit.config"]  # the settings themselves
        assert not inner, f"{name}.{inner} are internal modules: import the public faces"


def test_numpy_linalg_is_the_public_face_whatever_was_imported_first():
    """CI regression: with rune_jit._src.numpy imported first, rnp.linalg was the internal module."""
    code = ("import rune_jit._src.numpy, rune_jit.numpy as rnp; "
            "print(rnp.linalg.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    assert out.strip() == "rune_jit.numpy.linalg"


@pytest.mark.parametrize("old", ["ir", "trace", "passes", "backend"])
def test_internal_modules_old_names_warn_and_answer(old):
    with pytest.warns(DeprecationWarning, match=f"rune_jit._src.{old}"):
        module = getattr(rune, old)
    assert module is importlib.import_module(f"rune_jit._src.{old}")


def test_absent_names_still_raise_attribute_error():
    with pytest.raises(AttributeError):
        rune.no_such_name
