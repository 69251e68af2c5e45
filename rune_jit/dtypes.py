"""rune_jit.dtypes: JAX's jax.dtypes, for NumPy's dtypes at every width.

`issubdtype`, `result_type` (NEP 50, Python scalars weak), `finfo`, `iinfo`,
`canonicalize_dtype`, `float0` (the dtype of JAX's tangents of integers, which rune_jit
never makes), and `extended`/`prng_key` (JAX's typed keys: rune_jit's keys are raw
uint32 keys, of neither). `bfloat16` is not provided (rune_jit's floats are float16,
float32 and float64).
"""

from ._src.jax_dtypes import (canonicalize_dtype, extended, finfo, float0, iinfo,
                               issubdtype, prng_key, result_type)

__all__ = ["canonicalize_dtype", "extended", "finfo", "float0", "iinfo", "issubdtype",
           "prng_key", "result_type"]


def __getattr__(name: str):
    from ._src import absent

    raise absent.attribute_error(__name__, name)
