"""Key paths: the steps from the root of a pytree to one of its leaves, as JAX names them.

A step is a `KeyEntry`: `SequenceKey(i)` into a tuple or list, `DictKey(k)` into a dict,
`GetAttrKey(name)` into a namedtuple or dataclass field, `FlattenedIndexKey(i)` into the
i-th child of a node registered without keys. `keystr` prints a path as Python would
spell the access, which is how error messages name a leaf.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence


class KeyEntry:
    """One step of a key path; its `str` is the step as Python spells the access."""

    __slots__ = ()
    _field = ""

    @property
    def _value(self) -> Any:
        return getattr(self, self._field)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value

    def __hash__(self) -> int:
        return hash((type(self), self._value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={self._value!r})"


class SequenceKey(KeyEntry):
    """The `idx`-th item of a tuple or list.

    >>> str(SequenceKey(0)), SequenceKey(0)
    ('[0]', SequenceKey(idx=0))
    """

    __slots__ = ("idx",)
    _field = "idx"

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


class DictKey(KeyEntry):
    """The entry `key` of a dict.

    >>> str(DictKey("w")), DictKey("w")
    ("['w']", DictKey(key='w'))
    """

    __slots__ = ("key",)
    _field = "key"

    def __init__(self, key: Hashable):
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class GetAttrKey(KeyEntry):
    """The attribute `name` (a namedtuple's or dataclass's field).

    >>> str(GetAttrKey("b")), GetAttrKey("b")
    ('.b', GetAttrKey(name='b'))
    """

    __slots__ = ("name",)
    _field = "name"

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(KeyEntry):
    """The `key`-th child of a node registered without keys (`register_pytree_node`).

    >>> str(FlattenedIndexKey(1)), FlattenedIndexKey(1)
    ('[<flat index 1>]', FlattenedIndexKey(key=1))
    """

    __slots__ = ("key",)
    _field = "key"

    def __init__(self, key: int):
        self.key = key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyPath = tuple[KeyEntry, ...]


def keystr(keys: Sequence[KeyEntry], *, simple: bool = False, separator: str = "") -> str:
    """`keys` as text: as Python spells the access (`simple=False`), or the bare keys
    joined by `separator`.

    >>> path = (DictKey("w"), GetAttrKey("b"), SequenceKey(0))
    >>> keystr(path), keystr(path, simple=True, separator="/")
    ("['w'].b[0]", 'w/b/0')
    """
    return separator.join(str(k._value if simple else k) for k in keys)
