"""The user's spellings of control flow, in one place: each module takes pytrees,
checks what the user's functions return, asks the eager caches, runs the Python path of
disable_jit, and binds its primitive's flat form from `ops/` (which knows none of this).

    scan.py          scan                      iterate.py     iterate
    cond.py          cond, stop_gradient       root.py        root
    jax_loops.py     fori_loop, while_loop, switch, map, associative_scan (JAX's spellings)
    remat.py         remat, checkpoint, checkpoint_name
    custom.py        custom_jvp, custom_vjp
    callbacks.py     debug.callback, pure_callback
    linear_solve.py  the user's solver of root's tangent system (linear_solve=, lax.custom_root)
    carry.py         the check of the carry a step returns
    python_loops.py  the loops as Python while disable_jit is on
"""

from .callbacks import debug_callback, pure_callback
from .cond import cond, stop_gradient
from .custom import custom_jvp, custom_vjp
from .iterate import iterate
from .jax_loops import associative_scan, fori_loop, map, switch, while_loop
from .remat import checkpoint, checkpoint_name, remat
from .root import root
from .scan import scan

__all__ = ["associative_scan", "checkpoint", "checkpoint_name", "cond", "custom_jvp",
           "custom_vjp", "debug_callback", "fori_loop", "iterate", "map", "pure_callback",
           "remat", "root", "scan", "stop_gradient", "switch", "while_loop"]
