"""JAX's `jax.custom_derivatives` layout: rune_jit's custom derivative rules
(docs/custom-derivatives.md)."""

from ._src.ops.custom import custom_jvp, custom_vjp

__all__ = ["custom_jvp", "custom_vjp"]
