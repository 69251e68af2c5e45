"""The primitives. Each module owns every rule of what it defines."""

from . import (control, elementwise, index, iterate, linalg, reduce, remat, root,  # noqa: F401
               scan, shape)
