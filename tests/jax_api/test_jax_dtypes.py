"""rune_jit.dtypes: JAX's jax.dtypes module, as JAX library code uses it."""

import warnings

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp


def test_issubdtype_and_result_type_are_numpys_with_weak_scalars():
    d = rune.dtypes
    assert d.issubdtype(np.float32, np.floating) and not d.issubdtype(np.int8, np.inexact)
    assert d.issubdtype(rune.jit(lambda x: x * 2)(np.ones(2, np.float16)).dtype, np.floating)
    assert d.result_type(np.float32, 1.0) == np.float32
    assert d.result_type(np.int8, np.int16) == np.int16
    assert d.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert d.iinfo(np.int8).max == 127


def test_keys_and_gradients_are_not_of_jaxs_extended_dtypes():
    """rune_jit's keys are raw uint32 keys and its tangents of integers are floats: JAX
    code that branches on typed keys or float0 takes the other branch, as for JAX's raw
    keys."""
    d = rune.dtypes
    key = rune.random.PRNGKey(0)
    assert not d.issubdtype(key.dtype, d.prng_key) and not d.issubdtype(key.dtype, d.extended)
    assert d.issubdtype(d.prng_key, d.extended)
    g = rune.grad(lambda x, n: x * n, argnums=0)(2.0, 3)
    assert np.asarray(g).dtype != d.float0
    assert d.float0.itemsize == 0


def test_canonicalize_dtype_is_the_dtype_at_every_width():
    for t in (np.float16, np.int64, np.complex64, bool):
        assert rune.dtypes.canonicalize_dtype(t) == np.dtype(t)
    with pytest.raises(TypeError, match="float128 is not supported"):
        rune.dtypes.canonicalize_dtype(np.longdouble)


def test_bfloat16_says_why_it_is_absent_and_the_module_is_public():
    with pytest.raises(AttributeError, match="jax.dtypes.bfloat16 is not provided"):
        rune.dtypes.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once an internal module's old name: now public
        assert rune.dtypes.issubdtype(rnp.float64, rnp.floating)
