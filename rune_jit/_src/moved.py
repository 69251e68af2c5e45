"""rune_jit's internal modules as they were before they moved under rune_jit._src
(issue 33): `rune_jit.ir`, `rune_jit.trace`, ... still answer, with a DeprecationWarning
naming the new place. They were never API; code that reached for them keeps running
while it moves on."""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType

# each old name and its module now (python_loops held disable_jit, now call.python_mode;
# `check`, which held check_grads, is the name of rune_jit.check now, and `dtypes` JAX's
# jax.dtypes: rune_jit.dtypes)
MODULES = {name: name for name in (
    "ad_util api backend control_flow eager interpret ir jit primitive passes "
    "source_info trace tracebacks transforms version tour").split()}
MODULES.update({name: f"call.{name}" for name in (
    "arguments code_digest disk_cache dispatch eager_cache forks gc_pause guard "
    "saved_programs").split()})
MODULES["python_loops"] = "call.python_mode"


def module(name: str) -> ModuleType:
    """The internal module `name` once was `rune_jit.<name>`, with a DeprecationWarning."""
    warnings.warn(f"rune_jit.{name} is internal and moved to rune_jit._src.{MODULES[name]}; "
                  "use the public API (help(rune_jit))", DeprecationWarning, stacklevel=3)
    return importlib.import_module(f"rune_jit._src.{MODULES[name]}")
