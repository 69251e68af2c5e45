"""JAX's `jax.custom_derivatives` layout: rune_jit's custom derivative rules
(docs/custom-derivatives.md)."""

from ._src.control_flow.custom import custom_jvp, custom_vjp

__all__ = ["custom_jvp", "custom_vjp"]
