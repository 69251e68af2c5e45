"""rune_jit: differentiable, vectorizable loops staged into a typed IR and compiled with LLVM."""

from .version import __version__  # noqa: F401

from . import checkpoint_policies, numpy, random, tree
from . import flatten_util, tree_util
from . import compile_log, debug
from . import nn, scipy
from .python_loops import disable_jit
from .api import grad, hessian, jacfwd, jacrev, jvp, make_ir, value_and_grad, vjp, vmap
from .check import check_grads
from .control_flow import associative_scan, fori_loop, map, switch, while_loop
from .errors import ConcretizationError, GradCheckError, IterateError
from .jit import jit
from . import eager_cache  # noqa: F401 (installs the eager caches: rune_jit/eager.py)
from .ops.control import cond, stop_gradient
from .ops.custom import custom_jvp, custom_vjp
from .ops.iterate import iterate
from .ops.pure_callback import pure_callback
from .ops.remat import checkpoint, checkpoint_name, remat
from .ops.root import root
from .ops.scan import scan
from .transforms import (ShapeDtypeStruct, eval_shape, linear_transpose, linearize,
                         print_saved_residuals, saved_residuals)

__all__ = [
    "associative_scan", "check_grads", "checkpoint", "checkpoint_name", "checkpoint_policies",
    "compile_log", "ConcretizationError", "cond", "custom_jvp", "custom_vjp", "debug",
    "disable_jit", "eval_shape", "flatten_util", "fori_loop", "grad", "GradCheckError", "hessian", "iterate",
    "IterateError", "jacfwd", "jacrev", "jit", "jvp", "linear_transpose", "linearize",
    "make_ir", "map", "nn", "numpy", "print_saved_residuals", "pure_callback", "random",
    "remat", "root", "saved_residuals", "scan", "scipy", "ShapeDtypeStruct", "stop_gradient",
    "switch", "tree", "tree_util", "value_and_grad", "vjp", "vmap", "while_loop",
]
