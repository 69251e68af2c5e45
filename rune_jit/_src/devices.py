"""JAX's device vocabulary where it has an honest meaning on one CPU process.

rune_jit runs in this process, on its CPU: there is one device, values live in NumPy
arrays, and a call returns once its results are computed. So `devices()` lists that one
device, `device_put` makes an array, `device_get` makes NumPy values, and
`block_until_ready` returns its argument. Sharding and multi-device maps have no meaning
here and are absent (docs/porting-from-jax.md).
"""

from __future__ import annotations

import platform
from typing import Any

import numpy as np


class Device:
    """This process's CPU, the one device rune_jit computes on.

    >>> rune.devices()
    [CpuDevice(id=0)]
    >>> rune.devices()[0].platform
    'cpu'
    """

    id = 0
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0

    def __repr__(self) -> str:
        return "CpuDevice(id=0)"

    def __str__(self) -> str:
        return f"TFRT_CPU_0 ({platform.machine()})"


_CPU = Device()


def _backend_name(backend: str | None) -> None:
    if backend not in (None, "cpu"):
        raise ValueError(f"rune_jit runs on this process's CPU only: no backend {backend!r}")


def devices(backend: str | None = None) -> list[Device]:
    """The devices rune_jit computes on: this process's CPU.

    >>> len(rune.devices())
    1
    """
    _backend_name(backend)
    return [_CPU]


def local_devices(process_index: int | None = None, backend: str | None = None
                  ) -> list[Device]:
    """The devices of this process: its CPU.

    >>> rune.local_devices() == rune.devices()
    True
    """
    _backend_name(backend)
    return [_CPU]


def device_count(backend: str | None = None) -> int:
    """1: this process's CPU.

    >>> rune.device_count()
    1
    """
    _backend_name(backend)
    return 1


def local_device_count(backend: str | None = None) -> int:
    """1: this process's CPU.

    >>> rune.local_device_count()
    1
    """
    _backend_name(backend)
    return 1


def default_backend() -> str:
    """ "cpu".

    >>> rune.default_backend()
    'cpu'
    """
    return "cpu"


def process_index() -> int:
    """0: rune_jit runs in one process.

    >>> rune.process_index()
    0
    """
    return 0


def process_count() -> int:
    """1: rune_jit runs in one process.

    >>> rune.process_count()
    1
    """
    return 1


def device_put(x: Any, device: Any = None, **_: Any) -> Any:
    """`x` with its leaves as arrays (NumPy arrays, or traced values as they are); the
    device, if given, must be this process's CPU.

    >>> rune.device_put([1.0, 2])
    [array(1.), array(2)]
    """
    from .tree import tree_map

    if device is not None and not isinstance(device, Device):
        raise ValueError(f"rune_jit.device_put: {device!r} is not a device of this process")
    return tree_map(_array, x)


def device_get(x: Any) -> Any:
    """`x` with its leaves as NumPy values (what rune_jit's results already are).

    >>> rune.device_get({"a": rnp.ones(2)})
    {'a': array([1., 1.])}
    """
    from .tree import tree_map

    return tree_map(_array, x)


def block_until_ready(x: Any) -> Any:
    """`x`: rune_jit's calls return once their results are computed.

    >>> rune.block_until_ready(rnp.arange(3))
    array([0, 1, 2])
    """
    return x


def _array(leaf: Any) -> Any:
    from .trace import Tracer

    return leaf if isinstance(leaf, Tracer) else np.asarray(leaf)
