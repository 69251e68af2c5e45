"""rune_jit.numpy: NumPy's names and semantics over traced and concrete arrays.

Outside any transformation these compute with NumPy and return NumPy arrays;
inside one they stage primitives. Promotion follows NumPy 2 (NEP 50).
"""

from .._src.numpy import *  # noqa: F401, F403
from .._src.numpy import __all__  # noqa: F401
import importlib as _importlib

# `from . import linalg` would keep the internal module the star import bound when
# rune_jit._src.numpy was imported first: import the public faces by their full names.
linalg = _importlib.import_module(f"{__name__}.linalg")
fft = _importlib.import_module(f"{__name__}.fft")


def __getattr__(name: str):
    from .._src import absent

    raise absent.attribute_error(__name__, name)
