"""The special functions and the libm-backed elementwise functions stay within the
bounds docs/accuracy.md documents (tools/accuracy.py's BOUNDS), on a reduced sweep."""

import sys

import numpy as np
import pytest

from paths import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
import accuracy  # noqa: E402

POINTS = 4000


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(accuracy.ROWS))
def test_within_the_documented_bound(name, dtype, compiled):
    bound = accuracy.BOUNDS[name][0 if dtype == np.float64 else 1]
    assert accuracy.measure(name, POINTS, dtype, compiled) <= bound


def test_the_page_lists_every_function_with_its_bound():
    page = (REPO / "docs" / "accuracy.md").read_text()
    for name, (b64, b32) in accuracy.BOUNDS.items():
        assert f"| {name} |" in page and f"| {b64}, {b32} |" in page, name


def test_the_error_measure():
    x = np.array([1.0, 2.0, np.inf, np.nan])
    assert accuracy.ulps(x, x, np.dtype(np.float64), "tiny") == 0
    assert accuracy.ulps(np.nextafter(x, 3), x, np.dtype(np.float64), "tiny") == np.inf  # inf
    assert accuracy.ulps(np.nextafter(x[:2], 3), x[:2], np.dtype(np.float64), "tiny") == 1
