"""How a call runs: a jitted function's call from its arguments to its results
(jitted.py, whose `Jitted._slow` reads top to bottom), and the tiers and caches it
passes through in order: the native entry (dispatch.py plans it for the call's
structure), the quick key of plain arguments (arguments.py), the signature cache,
saved programs (saved_programs.py, keyed by code_digest.py), tracing (tracing.py,
weak_ints.py) and compiling (the backend; its disk cache, disk_cache.py). The eager
caches (eager_cache.py, guard.py) give the same tiers to transformed functions and
loops called outside jit; python_mode.py is `disable_jit`; compile_log.py,
gc_pause.py and forks.py serve them all."""
