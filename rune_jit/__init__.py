"""rune_jit: differentiable, vectorizable loops staged into a typed IR and compiled with LLVM."""

from .version import __version__  # noqa: F401

from . import numpy, tree
from .api import grad, hessian, jacfwd, jacrev, jvp, make_ir, value_and_grad, vjp, vmap
from .check import check_grads
from .errors import ConcretizationError, GradCheckError, IterateError
from .jit import jit
from .ops.control import cond, stop_gradient
from .ops.custom import custom_jvp, custom_vjp
from .ops.iterate import iterate
from .ops.remat import remat
from .ops.root import root
from .ops.scan import scan

__all__ = [
    "check_grads", "ConcretizationError", "cond", "custom_jvp", "custom_vjp", "grad",
    "GradCheckError", "hessian", "iterate", "IterateError", "jacfwd", "jacrev", "jit", "jvp",
    "make_ir", "numpy", "remat", "root", "scan", "stop_gradient", "tree", "value_and_grad",
    "vjp", "vmap",
]
