"""JAX's ways to make a class a pytree node: class decorators, dataclasses with data and
meta fields, static (leafless) classes, and `Partial`, a partial function whose bound
arguments are its leaves."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence, TypeVar

from .tree import register_pytree_node, register_pytree_with_keys
from .tree_keys import GetAttrKey

T = TypeVar("T", bound=type)


def register_pytree_node_class(cls: T) -> T:
    """Class decorator: `obj.tree_flatten() -> (children, aux_data)` and the classmethod
    `cls.tree_unflatten(aux_data, children)` make `cls` a node.

    >>> from rune_jit.tree_util import tree_leaves
    >>> @register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, x, k): self.x, self.k = x, k
    ...     def tree_flatten(self): return (self.x,), self.k
    ...     @classmethod
    ...     def tree_unflatten(cls, k, kids): return cls(kids[0], k)
    >>> tree_leaves(Scaled([1, 2], "k"))
    [1, 2]
    """
    register_pytree_node(cls, lambda obj: obj.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: T) -> T:
    """Class decorator: `obj.tree_flatten_with_keys() -> ([(key, child), ...], aux_data)`
    and the classmethod `cls.tree_unflatten(aux_data, children)` make `cls` a node.

    >>> from rune_jit.tree_util import GetAttrKey, keystr, tree_leaves_with_path
    >>> @register_pytree_with_keys_class
    ... class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    ...     def tree_flatten_with_keys(self):
    ...         return [(GetAttrKey("a"), self.a), (GetAttrKey("b"), self.b)], None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, kids): return cls(*kids)
    >>> [keystr(p) for p, _ in tree_leaves_with_path(Pair(1, 2))]
    ['.a', '.b']
    """
    register_pytree_with_keys(cls, lambda obj: obj.tree_flatten_with_keys(),
                              cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: T, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> T:
    """Make the dataclass `nodetype` a node whose children are its `data_fields` and whose
    aux data are its `meta_fields` (hashable, compared when structures are). With neither
    given, a field whose metadata has `static=True` is a meta field and the others are
    data fields. Usable as a decorator.

    >>> from rune_jit.tree_util import tree_flatten
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: Any
    ...     act: str = dataclasses.field(default="tanh", metadata=dict(static=True))
    >>> tree_flatten(Layer(1.5))
    ([1.5], PyTreeDef(CustomNode(Layer[('tanh',)], [*])))
    """
    if (data_fields is None) != (meta_fields is None):
        raise TypeError(f"register_dataclass({nodetype.__qualname__}): give both data_fields "
                        "and meta_fields, or neither")
    if data_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__qualname__} is not a dataclass; "
                            "give data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data, meta = list(data_fields), list(meta_fields)
    _check_fields(nodetype, data, meta, list(drop_fields))
    keys = [GetAttrKey(n) for n in data]

    def flatten_with_keys(obj):
        return ([(k, getattr(obj, n)) for k, n in zip(keys, data)],
                tuple(getattr(obj, n) for n in meta))

    def unflatten(aux, kids):
        return nodetype(**dict(zip(data, kids)), **dict(zip(meta, aux)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten)
    return nodetype


def _check_fields(nodetype: type, data: list, meta: list, drop: list) -> None:
    named = data + meta + drop
    twice = sorted({n for n in named if named.count(n) > 1})
    if twice:
        raise ValueError(f"register_dataclass({nodetype.__qualname__}): fields named more "
                         f"than once: {twice}")
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init}
        missing, unknown = sorted(init - set(named)), sorted(set(data + meta) - init)
        if missing or unknown:
            raise ValueError(f"register_dataclass({nodetype.__qualname__}): the data and "
                             f"meta fields must be the fields of __init__; missing "
                             f"{missing}, not in __init__ {unknown}")


def register_static(cls: T) -> T:
    """Make `cls` a node with no children whose instance is its aux data: it passes
    through `jit` and the transformations as a constant, compared by `==` (it must be
    hashable). Usable as a decorator.

    >>> from rune_jit.tree_util import tree_flatten
    >>> @register_static
    ... class Tag:
    ...     def __repr__(self): return "Tag"
    >>> tree_flatten((1, Tag()))
    ([1], PyTreeDef((*, CustomNode(Tag[Tag], []))))
    """
    register_pytree_node(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


class Partial(functools.partial):
    """`functools.partial` as a pytree: the bound arguments are its children (leaves
    for arrays), the function its aux data, so a Partial can be passed to and returned
    from `jit` and transformed functions.

    >>> from rune_jit.tree_util import tree_leaves
    >>> add3 = Partial(lambda a, b: a + b, 3.0)
    >>> tree_leaves(add3), add3(1.0)
    ([3.0], 4.0)
    """

    def __new__(cls, func: Callable, *args: Any, **kw: Any) -> Partial:
        if not callable(func):
            raise TypeError(f"Partial: the function given is a {type(func).__name__} "
                            f"({func!r:.60}), which is not callable")
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, kids: Partial(func, *kids[0], **kids[1]))


def static(**kwargs: Any) -> Any:
    """`dataclasses.field(**kwargs)` marked `static=True` in its metadata: a meta field
    for `register_dataclass`.

    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: Any
    ...     name: str = static(default="add")
    >>> dataclasses.fields(Op)[1].metadata["static"]
    True
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
