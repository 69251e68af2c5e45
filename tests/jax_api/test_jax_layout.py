"""JAX's top-level vocabulary under rune_jit: options, devices, staging names, and the
error for a JAX name rune_jit does not provide."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp


def test_enable_x64_is_accepted_and_other_settings_name_themselves():
    rune.config.update("jax_enable_x64", True)
    assert rune.config.jax_enable_x64 is True
    assert rune.jit(lambda x: x * 2)(1.0).dtype == np.float64
    with pytest.raises(ValueError, match="jax_enable_x64=False"):
        rune.config.update("jax_enable_x64", False)
    with pytest.raises(ValueError, match="'jax_compilation_cache_dir' means nothing"):
        rune.config.update("jax_compilation_cache_dir", "/tmp")
    with pytest.raises(ValueError, match="jax_platforms='gpu'"):
        rune.config.update("jax_platforms", "gpu")
    with pytest.raises(AttributeError, match="jax_nonsense"):
        rune.config.jax_nonsense


def test_disable_jit_option_runs_steps_in_python():
    seen = []

    def step(c, x):
        seen.append(type(c))
        return c + x, None

    f = rune.jit(lambda xs: rune.scan(step, 0.0, xs)[0])
    rune.config.update("jax_disable_jit", True)
    try:
        assert float(f(np.array([1.0, 2.0]))) == 3.0
        assert seen == [float, np.ndarray]  # Python runs each step on NumPy values
    finally:
        rune.config.update("jax_disable_jit", False)
    seen.clear()
    assert float(f(np.array([1.0, 2.0, 3.0]))) == 6.0
    assert seen and not {float, np.ndarray} & set(seen)  # traced, compiled


def test_promotion_modes_accept_numpys_and_refuse_others():
    with rune.numpy_dtype_promotion("standard"):
        assert (rnp.ones(2, np.float32) + 1.0).dtype == np.float32
    with pytest.raises(ValueError, match="'strict'"):
        with rune.numpy_dtype_promotion("strict"):
            pass
    assert rune.config.jax_numpy_dtype_promotion == "standard"
    with pytest.raises(ValueError, match="'raise'"):
        with rune.numpy_rank_promotion("raise"):
            pass


def test_one_cpu_device():
    (dev,) = rune.devices()
    assert dev.platform == "cpu" and rune.local_devices() == [dev]
    assert rune.device_count() == rune.local_device_count() == 1
    assert rune.default_backend() == "cpu"
    with pytest.raises(ValueError, match="'gpu'"):
        rune.devices("gpu")
    tree = {"a": [1.0, np.arange(3)]}
    put = rune.device_put(tree, dev)
    assert isinstance(put["a"][0], np.ndarray) and put["a"][0].dtype == np.float64
    np.testing.assert_array_equal(rune.device_get(put)["a"][1], np.arange(3))
    with pytest.raises(ValueError, match="not a device"):
        rune.device_put(1.0, "cuda:0")
    x = rnp.ones(3)
    assert rune.block_until_ready(x) is x


def test_device_put_and_typeof_under_transformations():
    def f(x):
        t = rune.typeof(x)
        assert t.shape == (3,) and t.dtype == np.float64
        return rnp.sum(rune.device_put(x) ** 2)

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(rune.grad(f)(x), 2 * x)
    np.testing.assert_allclose(rune.jit(rune.grad(f))(x), 2 * x)
    np.testing.assert_allclose(rune.vmap(rune.grad(f))(np.stack([x, x])), 2 * np.stack([x, x]))


def test_named_call_scope_and_compile_time_eval_change_nothing():
    def layer(x):
        with rune.named_scope("layer"):
            with rune.ensure_compile_time_eval():
                k = rnp.arange(4).sum()
                assert isinstance(k, (np.ndarray, np.generic))  # concrete while tracing
            return rnp.tanh(x) * k

    f = rune.named_call(layer, name="dense")
    assert f.__name__ == "dense"
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(rune.jit(f)(x), np.tanh(x) * 6)
    rune.check_grads(f, (x,), modes=("fwd", "rev"))
    np.testing.assert_allclose(rune.scan(lambda c, r: (c + f(r), None), 0.0, x)[0],
                               np.sum(np.tanh(x) * 6))


def test_jax_spellings_of_existing_names():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(rune.jacobian(lambda v: v * v)(x), np.diag(2 * x))
    assert "sin" in str(rune.make_jaxpr(rnp.sin)(x))
    assert rune.__version_info__ == tuple(int(p) for p in rune.__version__.split("."))
    assert rune.custom_derivatives.custom_vjp is rune.custom_vjp


def test_a_jax_name_not_provided_says_so_and_names_the_spelling():
    with pytest.raises(AttributeError, match=r"jax\.pmap is not provided.*use rune_jit\.vmap"):
        rune.pmap
    with pytest.raises(AttributeError, match="jax.sharding is not provided"):
        rune.sharding
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        rune.no_such_name
    assert not hasattr(rune, "pmap")


def test_jax_numpy_names_not_provided_say_why():
    with pytest.raises(AttributeError, match=r"jax\.numpy\.bfloat16 is not provided"):
        rnp.bfloat16
    with pytest.raises(AttributeError, match=r"jax\.lax\.psum is not provided"):
        rune.lax.psum
