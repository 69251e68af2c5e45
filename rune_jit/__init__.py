"""rune_jit: differentiable, vectorizable loops staged into a typed IR and compiled with LLVM."""

from ._src.version import __version__  # noqa: F401

from . import checkpoint_policies, numpy, random, tree
from . import flatten_util, tree_util
from . import compile_log, debug, dtypes, errors, ops
from . import nn, scipy
from . import experimental
from ._src.call.python_mode import disable_jit
from ._src.api import grad, hessian, jacfwd, jacrev, jvp, make_ir, value_and_grad, vjp, vmap
from ._src.check import check_grads
from ._src.checkify import check
from ._src.control_flow import (associative_scan, checkpoint, checkpoint_name, cond, custom_jvp,
                                custom_vjp, fori_loop, iterate, map, pure_callback, remat,
                                root, scan, stop_gradient, switch, while_loop)
from ._src.errors import CheckError, ConcretizationError, GradCheckError, IterateError
from ._src.jit import jit
from ._src.call import eager_cache as _eager_cache  # noqa: F401 (installs the eager caches)
from ._src.transforms import (ShapeDtypeStruct, eval_shape, linear_transpose, linearize,
                              print_saved_residuals, saved_residuals)
from ._src import config
import sys as _sys
_sys.modules[__name__ + ".config"] = config  # `import rune_jit.config`, as `jax.config`
from . import custom_derivatives, lax, typing
from ._src.array_type import Array
from ._src import absent as _absent, moved as _moved
from ._src.ops import checkpointed_scan as _checkpointed_scan  # noqa: F401 (its reverse mode)
from ._src.devices import (Device, block_until_ready, default_backend, device_count,
                           device_get, device_put, devices, local_device_count, local_devices,
                           process_count, process_index)
from ._src.options import numpy_dtype_promotion, numpy_rank_promotion
from ._src.staging_names import ensure_compile_time_eval, named_call, named_scope, typeof

# JAX's spellings of names rune_jit has under its own
make_jaxpr = make_ir
jacobian = jacrev
__version_info__ = tuple(int(part) for part in __version__.split(".")[:3])

__all__ = [
    "associative_scan", "check", "check_grads", "CheckError", "checkpoint", "checkpoint_name", "checkpoint_policies",
    "compile_log", "ConcretizationError", "cond", "custom_jvp", "custom_vjp", "debug", "dtypes",
    "disable_jit", "eval_shape", "flatten_util", "fori_loop", "grad", "GradCheckError",
    "hessian", "iterate",
    "IterateError", "jacfwd", "jacrev", "jit", "jvp", "lax", "linear_transpose", "linearize",
    "make_ir", "map", "nn", "numpy", "print_saved_residuals", "pure_callback", "random",
    "remat", "root", "saved_residuals", "scan", "scipy", "ShapeDtypeStruct", "stop_gradient",
    "switch", "tree", "tree_util", "value_and_grad", "vjp", "vmap", "while_loop",
    "Array", "block_until_ready", "config", "custom_derivatives", "default_backend", "Device",
    "device_count", "device_get", "device_put", "devices", "ensure_compile_time_eval",
    "jacobian", "local_device_count", "local_devices", "make_jaxpr", "named_call",
    "named_scope", "numpy_dtype_promotion", "numpy_rank_promotion", "process_count",
    "process_index", "typeof", "typing", "errors", "ops", "experimental",
]


def __getattr__(name: str):
    if name in _moved.MODULES:
        return _moved.module(name)
    raise _absent.attribute_error(__name__, name)
