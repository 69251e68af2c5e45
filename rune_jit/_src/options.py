"""JAX's configuration options, for the ones that mean something in rune_jit.

`rune_jit.config.update(name, value)` and the context managers
`rune_jit.numpy_dtype_promotion` and `rune_jit.numpy_rank_promotion` read this table: an
option rune_jit honours does what JAX's does, an option whose only setting here is the
one rune_jit always has accepts that setting, and every other value or option raises
naming it (docs/porting-from-jax.md lists them).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator


def _only(*accepted: Any, why: str) -> Callable[[Any], None]:
    """An option whose only meaningful settings here are `accepted`."""
    def check(value: Any) -> None:
        if value not in accepted:
            raise ValueError(why.format(value=value))
    return check


_OPTIONS: dict[str, Callable[[Any], None]] = {
    "jax_enable_x64": _only(True, 1, why=(
        "rune_jit computes in float64 by default and has no mode without 64-bit types: "
        "jax_enable_x64={value!r} is not supported (cast with .astype(np.float32))")),
    "jax_disable_jit": lambda value: _owners["jax_disable_jit"](bool(value)),
    "jax_platforms": _only("cpu", "", None, why=(
        "rune_jit runs on this process's CPU only: jax_platforms={value!r} is not supported")),
    "jax_platform_name": _only("cpu", "", None, why=(
        "rune_jit runs on this process's CPU only: jax_platform_name={value!r} is not "
        "supported")),
    "jax_default_matmul_precision": _only(
        None, "default", "high", "highest", "float32", "tensorfloat32", "bfloat16",
        why="jax_default_matmul_precision={value!r} is not one of JAX's precisions"),
    "jax_numpy_dtype_promotion": _only("standard", why=(
        "rune_jit promotes as NumPy 2 does (JAX's 'standard'); "
        "jax_numpy_dtype_promotion={value!r} is not supported")),
    "jax_numpy_rank_promotion": _only("allow", why=(
        "rune_jit broadcasts as NumPy does (JAX's 'allow'); "
        "jax_numpy_rank_promotion={value!r} is not supported")),
    "jax_default_prng_impl": _only("threefry2x32", why=(
        "rune_jit.random is threefry2x32 only; jax_default_prng_impl={value!r} is not "
        "supported")),
    "jax_debug_nans": lambda value: _owners["jax_debug_nans"](bool(value)),
    "jax_debug_infs": _only(False, 0, why=(
        "jax_debug_infs={value!r}: rune_jit has no inf checks yet")),
}
_values: dict[str, Any] = {
    "jax_enable_x64": True, "jax_disable_jit": False, "jax_platforms": "cpu",
    "jax_platform_name": "cpu", "jax_default_matmul_precision": None,
    "jax_numpy_dtype_promotion": "standard", "jax_numpy_rank_promotion": "allow",
    "jax_default_prng_impl": "threefry2x32", "jax_debug_nans": False, "jax_debug_infs": False,
}


# Options whose effect belongs to a module of rune_jit's: it registers the setter (this
# module imports none of rune_jit's, so that config, at the bottom, may import it).
_owners: dict[str, Callable[[Any], None]] = {}


def owns(name: str) -> Callable[[Callable], Callable]:
    """Register the decorated function as what setting option `name` does."""
    def register(setter: Callable) -> Callable:
        _owners[name] = setter
        return setter
    return register


def update(name: str, value: Any) -> None:
    """Set JAX's option `name` (`jax.config.update`) where it means something here."""
    check = _OPTIONS.get(name)
    if check is None:
        raise ValueError(f"rune_jit.config.update: the JAX option {name!r} means nothing in "
                         f"rune_jit (it reads: {', '.join(sorted(_OPTIONS))})")
    check(value)
    _values[name] = value


def read(name: str) -> Any:
    """The value of JAX's option `name`, as rune_jit has it."""
    if name not in _values:
        raise AttributeError(f"rune_jit.config has no option {name!r}")
    return _values[name]


@contextlib.contextmanager
def _scoped(name: str, value: Any) -> Iterator[None]:
    before = read(name)
    update(name, value)
    try:
        yield
    finally:
        update(name, before)


def numpy_dtype_promotion(mode: str) -> contextlib.AbstractContextManager:
    """JAX's `jax.numpy_dtype_promotion`: "standard" (NumPy 2's rules, which rune_jit
    always follows) is accepted; "strict" raises.

    >>> with rune.numpy_dtype_promotion("standard"):
    ...     print((rnp.ones(2, np.float32) + 1.0).dtype)
    float32
    """
    return _scoped("jax_numpy_dtype_promotion", mode)


def numpy_rank_promotion(mode: str) -> contextlib.AbstractContextManager:
    """JAX's `jax.numpy_rank_promotion`: "allow" (NumPy's broadcasting) is accepted;
    "warn" and "raise" raise.

    >>> with rune.numpy_rank_promotion("allow"):
    ...     print((rnp.ones((2, 3)) + rnp.ones(3)).shape)
    (2, 3)
    """
    return _scoped("jax_numpy_rank_promotion", mode)
