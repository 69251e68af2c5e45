"""rune_jit.numpy: NumPy's names and semantics over traced and concrete arrays.

Outside any transformation these compute with NumPy and return NumPy arrays;
inside one they stage primitives. Promotion follows NumPy 2 (NEP 50).
"""

from .._src.numpy import *  # noqa: F401, F403
from .._src.numpy import __all__  # noqa: F401
from . import linalg  # the public face of rune_jit._src.numpy.linalg


def __getattr__(name: str):
    from .._src import absent

    raise absent.attribute_error(__name__, name)
