"""rune_jit: differentiable, vectorizable loops staged into a typed IR and compiled with LLVM."""

from .version import __version__  # noqa: F401

from . import checkpoint_policies, numpy, tree
from .api import grad, hessian, jacfwd, jacrev, jvp, make_ir, value_and_grad, vjp, vmap
from .check import check_grads
from .control_flow import associative_scan, fori_loop, map, switch, while_loop
from .errors import ConcretizationError, GradCheckError, IterateError
from .jit import jit
from .ops.control import cond, stop_gradient
from .ops.custom import custom_jvp, custom_vjp
from .ops.iterate import iterate
from .ops.remat import checkpoint, checkpoint_name, remat
from .ops.root import root
from .ops.scan import scan
from .transforms import (ShapeDtypeStruct, eval_shape, linear_transpose, linearize,
                         print_saved_residuals, saved_residuals)

__all__ = [
    "associative_scan", "check_grads", "checkpoint", "checkpoint_name", "checkpoint_policies",
    "ConcretizationError", "cond", "custom_jvp", "custom_vjp", "eval_shape", "fori_loop",
    "grad", "GradCheckError", "hessian", "iterate", "IterateError", "jacfwd", "jacrev", "jit",
    "jvp", "linear_transpose", "linearize", "make_ir", "map", "numpy", "print_saved_residuals",
    "remat", "root", "saved_residuals", "scan", "ShapeDtypeStruct", "stop_gradient", "switch",
    "tree", "value_and_grad", "vjp", "vmap", "while_loop",
]
