"""Build the API reference (HTML, with pdoc) from the docstrings of rune_jit's public
modules, warnings as errors: `python tools/api_docs.py [out_dir]` (default
build/api). Needs the docs extra: pip install -e '.[docs]'."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

PUBLIC = ["rune_jit", "rune_jit.numpy", "rune_jit.numpy.linalg", "rune_jit.numpy.fft",
          "rune_jit.dtypes", "rune_jit.nn",
          "rune_jit.scipy", "rune_jit.scipy.special", "rune_jit.scipy.stats",
          "rune_jit.scipy.linalg", "rune_jit.random", "rune_jit.debug", "rune_jit.tree",
          "rune_jit.checkpoint_policies", "rune_jit.compile_log", "rune_jit.lax",
          "rune_jit.errors", "rune_jit.ops", "rune_jit.config", "rune_jit.tree_util", "rune_jit.flatten_util", "rune_jit.typing",
          "rune_jit.custom_derivatives", "rune_jit.nn.initializers",
          "rune_jit.scipy.sparse", "rune_jit.scipy.sparse.linalg",
          "rune_jit.example_libraries", "rune_jit.example_libraries.optimizers",
          "rune_jit.example_libraries.stax", "rune_jit.experimental",
          "rune_jit.experimental.checkify"]


def specs() -> list[str]:
    """The package, less every module not in PUBLIC (pdoc's "!" patterns)."""
    import pkgutil

    import rune_jit

    names = [m.name for m in pkgutil.walk_packages(rune_jit.__path__, "rune_jit.")]
    return ["rune_jit"] + [f"!{n}" for n in names if n not in PUBLIC]


def main(out: str = "build/api") -> None:
    import pdoc

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdoc.pdoc(*specs(), output_directory=Path(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
