"""rune_jit on Dask's distributed scheduler: a LocalCluster of two worker processes on
127.0.0.1 runs jitted functions (a scan, an iterate, a gradient) through client.map,
client.submit, dask.array.map_blocks and dask.delayed, and each result equals the one
computed in this process. Needs the dask extra (pip install -e '.[dask]'), which CI
installs."""

import numpy as np
import pytest

import rune_jit as rune
import pickled_functions as pf

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.slow

CHUNKS = [np.linspace(1.0, 2.0, 4) * k for k in (1, 2, 3)]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_client_map_and_submit(client):
    got = client.gather(client.map(pf.running_product, CHUNKS))
    assert [float(g) for g in got] == [float(pf.running_product(c)) for c in CHUNKS]
    sqrt = client.submit(rune.jit(rune.vmap(pf.newton_sqrt)), CHUNKS[2]).result()
    np.testing.assert_allclose(sqrt, np.sqrt(CHUNKS[2]), rtol=1e-12)
    lam = client.submit(rune.jit(lambda x: rune.grad(pf.power_sum)(x, 3)), CHUNKS[1]).result()
    np.testing.assert_allclose(lam, 3 * CHUNKS[1] ** 2)


def test_map_blocks_over_a_chunked_array(client):
    x = da.from_array(np.linspace(1.0, 100.0, 1000), chunks=250)
    roots = x.map_blocks(rune.jit(rune.vmap(pf.newton_sqrt)), dtype=np.float64)
    np.testing.assert_allclose(roots.compute(), np.sqrt(np.linspace(1.0, 100.0, 1000)),
                               rtol=1e-12)


def test_delayed_gradients(client):
    parts = [dask.delayed(pf.grad_of_power_sum)(c, 2) for c in CHUNKS]
    total = dask.delayed(sum)([dask.delayed(np.sum)(p) for p in parts])
    assert np.isclose(total.compute(), sum(np.sum(2 * c) for c in CHUNKS))
