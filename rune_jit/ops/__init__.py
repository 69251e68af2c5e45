"""The primitives. Each module owns every rule of what it defines."""

from . import control, elementwise, index, linalg, reduce, shape  # noqa: F401  (registers them)
