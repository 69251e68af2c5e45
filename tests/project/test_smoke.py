import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp


def test_grad_of_sin_times_x(backend):
    f = backend(rune.grad(lambda x: rnp.sum(rnp.sin(x) * x)))
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(f(x), np.cos(x) * x + np.sin(x), rtol=1e-14)


def test_results_are_writable_ndarrays():
    out = rune.vmap(lambda x: x * 2)(np.ones(3))
    assert isinstance(out, np.ndarray) and out.flags.writeable
