"""Pytrees: nested containers of arrays, flattened with the key path to every leaf.

Containers (nodes) are tuple, list, dict (keys sorted), OrderedDict and defaultdict,
None (no leaves), namedtuple, dataclass instances (registered or not: see
docs/porting-from-jax.md), and classes given to `register_pytree_node` and its
variants. Everything else is a leaf.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Iterable, Iterator

from .tree_keys import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, SequenceKey,
                        keystr)


@dataclasses.dataclass(frozen=True)
class Node:
    """How to take one kind of container apart and put it back together."""

    split: Callable[[Any], tuple[list, Any, tuple | None]]  # -> children, aux, keys or None
    rebuild: Callable[[Any, list], Any]  # (aux, children) -> container
    keys: Callable[[Any, int], tuple] | None = None  # (aux, n) -> keys, when split gives None


_registry: dict[type, Node] = {}
_implicit: dict[type, Node] = {}  # namedtuple and dataclass classes met so far


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Iterable, Any]],
                         unflatten_func: Callable[[Any, list], Any]) -> None:
    """Make `nodetype` a container: `flatten_func(obj) -> (children, aux_data)`,
    `unflatten_func(aux_data, children) -> obj`. Its children's keys are
    `FlattenedIndexKey`s.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, kids: Pair(*kids))
    >>> flatten(Pair(1, (2, 3)))
    ([1, 2, 3], PyTreeDef(CustomNode(Pair[None], [*, (*, *)])))
    """
    def split(obj):
        kids, aux = _pair(flatten_func(obj), nodetype, "flatten function")
        return _sequence(kids, nodetype, "flatten function"), aux, None

    _registry[nodetype] = Node(split, unflatten_func,
                               lambda aux, n: tuple(map(FlattenedIndexKey, range(n))))


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Any]],
    unflatten_func: Callable[[Any, list], Any],
    flatten_func: Callable[[Any], tuple[Iterable, Any]] | None = None,
) -> None:
    """Make `nodetype` a container whose children have keys:
    `flatten_with_keys(obj) -> ([(key, child), ...], aux_data)`. `flatten_func` is
    accepted as in JAX; the keys and children always come from `flatten_with_keys`.

    >>> class Named:
    ...     def __init__(self, **kw): self.kw = kw
    >>> register_pytree_with_keys(Named, lambda n: ([(GetAttrKey(k), v) for k, v in
    ...     sorted(n.kw.items())], tuple(sorted(n.kw))), lambda ks, vs: Named(**dict(zip(ks, vs))))
    >>> [keystr(p) for p in leaf_keypaths(flatten(Named(u=1, v=2))[1])]
    ['.u', '.v']
    """
    def split(obj):
        pairs, aux = _pair(flatten_with_keys(obj), nodetype, "flatten_with_keys function")
        pairs = [_pair(p, nodetype, "flatten_with_keys function's (key, child)")
                 for p in _sequence(pairs, nodetype, "flatten_with_keys function")]
        return [c for _, c in pairs], aux, tuple(k for k, _ in pairs)

    _registry[nodetype] = Node(split, unflatten_func)


def register(cls: type, flatten: Callable[[Any], tuple[Iterable, Any]],
             unflatten: Callable[[Any, list], Any]) -> type:
    """`register_pytree_node`, returning `cls` (rune_jit's older spelling)."""
    register_pytree_node(cls, flatten, unflatten)
    return cls


def _pair(got: Any, nodetype: type, what: str) -> tuple:
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise TypeError(f"the {what} of pytree node type {nodetype.__qualname__} returned "
                        f"{_brief(got)}, not a pair (children, aux_data)")
    return tuple(got)


def _sequence(kids: Any, nodetype: type, what: str) -> list:
    try:
        return list(kids)
    except TypeError:
        raise TypeError(f"the {what} of pytree node type {nodetype.__qualname__} returned "
                        f"children that are {_brief(kids)}, not a sequence") from None


def _brief(x: Any) -> str:
    n = f" of length {len(x)}" if isinstance(x, (tuple, list)) else ""
    return f"a {type(x).__name__}{n}"


def _seq_keys(aux, n):
    return tuple(map(SequenceKey, range(n)))


def _dict(obj):
    keys = tuple(sorted(obj))
    return [obj[k] for k in keys], keys, None


def _ordered(obj):
    return list(obj.values()), tuple(obj), None


def _default(obj):
    kids, keys, _ = _dict(obj)
    return kids, (obj.default_factory, keys), None


def _dict_keys(keys, n):
    return tuple(map(DictKey, keys))


_registry[tuple] = Node(lambda o: (list(o), None, None), lambda aux, kids: tuple(kids),
                        _seq_keys)
_registry[list] = Node(lambda o: (list(o), None, None), lambda aux, kids: list(kids),
                       _seq_keys)
_registry[dict] = Node(_dict, lambda keys, kids: dict(zip(keys, kids)), _dict_keys)
_registry[collections.OrderedDict] = Node(
    _ordered, lambda keys, kids: collections.OrderedDict(zip(keys, kids)), _dict_keys)
_registry[collections.defaultdict] = Node(
    _default, lambda aux, kids: collections.defaultdict(aux[0], zip(aux[1], kids)),
    lambda aux, n: _dict_keys(aux[1], n))
_registry[type(None)] = Node(lambda obj: ([], None, None), lambda aux, kids: None,
                             lambda aux, n: ())


def _node_of(obj: Any) -> Node | None:
    cls = type(obj)
    node = _registry.get(cls) or _implicit.get(cls)
    if node is not None:
        return node
    if isinstance(obj, tuple) and hasattr(cls, "_fields"):
        node = _fields_node(list(cls._fields), lambda aux, kids: cls(*kids))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj) if f.init]
        node = _fields_node(names, lambda aux, kids: cls(**dict(zip(names, kids))))
    else:
        return None
    _implicit[cls] = node
    return node


def _fields_node(names: list[str], rebuild: Callable) -> Node:
    keys = tuple(map(GetAttrKey, names))
    return Node(lambda o: ([getattr(o, n) for n in names], None, None), rebuild,
                lambda aux, n: keys)


class PyTreeDef:
    """The shape of a pytree with its leaves taken out; equal structures compare equal.

    >>> td = flatten((1, {"a": 2, "b": None}))[1]
    >>> td, td.num_leaves, td.num_nodes
    (PyTreeDef((*, {'a': *, 'b': None})), 2, 5)
    >>> td.unflatten([5, 6]), td.children()
    ((5, {'a': 6, 'b': None}), [PyTreeDef(*), PyTreeDef({'a': *, 'b': None})])
    """

    __slots__ = ("kind", "aux", "_kids", "num_leaves", "num_nodes", "_node", "_keys", "_key",
                 "_hash")

    def __init__(self, kind: type | None, aux: Any, kids: tuple, node: Node | None = None,
                 keys: tuple | None = None):
        self.kind = kind  # None marks a leaf
        self.aux = aux
        self._kids = kids
        self._node = node
        self._keys = keys  # the key of each child, made when first asked for
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in kids)
        self.num_nodes = 1 + sum(c.num_nodes for c in kids)
        # jit looks signatures up by structure on every call: compare and hash once
        self._key = (kind, _hashable(aux), tuple(c._key for c in kids))
        self._hash = None

    @property
    def keys(self) -> tuple[KeyEntry, ...]:
        """The key of each child, e.g. (DictKey('w'), DictKey('x'))."""
        if self._keys is None:
            self._keys = () if self.kind is None else self._node.keys(self.aux, len(self._kids))
        return self._keys

    def children(self) -> list[PyTreeDef]:
        """The structures of this node's children (none for a leaf)."""
        return list(self._kids)

    def node_data(self) -> tuple[type, Any] | None:
        """(the node's type, its aux data), or None for a leaf."""
        return None if self.kind is None else (self.kind, self.aux)

    def unflatten(self, leaves: Iterable) -> Any:
        """This structure with `leaves` in it."""
        return unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list:
        """The subtrees of `tree` at this structure's leaves; `tree` must have this
        structure down to them (a ValueError names the first path where it does not)."""
        out: list = []
        _up_to(self, tree, (), out)
        return out

    def fill(self, leaves: list) -> Any:
        """This structure with `leaves` in it (unflatten, quick for a lone leaf)."""
        return leaves[0] if self.kind is None else unflatten(self, leaves)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key == other._key

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key)
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({_show(self)})"


TreeDef = PyTreeDef  # rune_jit's older name


def _show(td: PyTreeDef) -> str:
    if td.kind is None:
        return "*"
    kids = [_show(c) for c in td._kids]
    if td.kind is tuple:
        return f"({kids[0]},)" if len(kids) == 1 else f"({', '.join(kids)})"
    if td.kind is list:
        return f"[{', '.join(kids)}]"
    if td.kind is dict:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(td.aux, kids)) + "}"
    if td.kind is type(None):
        return "None"
    name = (f"namedtuple[{td.kind.__name__}]" if _is_namedtuple(td.kind)
            else f"{td.kind.__name__}[{td.aux}]")
    return f"CustomNode({name}, [{', '.join(kids)}])"


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _hashable(aux):
    return tuple(aux) if isinstance(aux, list) else aux


LEAF = PyTreeDef(None, None, ())


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """(the leaves of `tree`, its structure); `is_leaf(x)` true makes `x` a leaf.

    >>> flatten({"b": [1, 2], "a": None})
    ([1, 2], PyTreeDef({'a': None, 'b': [*, *]}))
    """
    out: list = []
    return out, _flatten_into(out, tree, is_leaf)


def _flatten_into(out: list, obj: Any, is_leaf) -> PyTreeDef:
    # recursion through a module function: a recursive closure is a reference cycle that
    # would keep the caller's arrays alive until the garbage collector runs
    node = None if (is_leaf is not None and is_leaf(obj)) else _node_of(obj)
    if node is None:
        out.append(obj)
        return LEAF
    kids, aux, keys = node.split(obj)
    subtrees = tuple(_flatten_into(out, k, is_leaf) for k in kids)
    return PyTreeDef(type(obj), aux, subtrees, node, keys)


def leaf_keypaths(treedef: PyTreeDef) -> list[tuple[KeyEntry, ...]]:
    """The key path of every leaf of `treedef`."""
    return _per_leaf(treedef, lambda key, rest: (key, *rest), ())


def leaf_paths(treedef: PyTreeDef) -> list[str]:
    """The path of every leaf of `treedef` as text (`keystr`), e.g. "[0]['w'].b". Use it
    rather than flattening a tree rebuilt with stand-in leaves: stand-ins that are
    dataclasses (like ir.Type) would be flattened too."""
    return _per_leaf(treedef, lambda key, rest: str(key) + rest, "")


def _per_leaf(td: PyTreeDef, step: Callable[[KeyEntry, Any], Any], root: Any) -> list:
    # each leaf's path, built from the leaf up: step(key, path below the key)
    if td.kind is None:
        return [root]
    return [step(key, p) for key, c in zip(td.keys, td._kids) for p in _per_leaf(c, step, root)]


def unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """The tree of structure `treedef` with `leaves` in it.

    >>> unflatten(flatten((0, [0]))[1], [1, 2])
    (1, [2])
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten: the structure {treedef} has {treedef.num_leaves} "
                         f"leaves, but {len(leaves)} were given")
    return _build(treedef, iter(leaves))


def _build(td: PyTreeDef, it: Iterator) -> Any:
    # a module function, not a recursive closure: such a closure is a reference cycle,
    # which would keep every leaf alive until the garbage collector runs
    if td.kind is None:
        return next(it)
    return td._node.rebuild(td.aux, [_build(c, it) for c in td._kids])


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `tree`, in order.

    >>> leaves({"b": 1, "a": (2, None)})
    [2, 1]
    """
    return flatten(tree, is_leaf)[0]


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of `tree`.

    >>> structure([1, (2, 3)])
    PyTreeDef([*, (*, *)])
    """
    return flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f` applied to the leaves of `tree` and the matching subtrees of `rest` (each
    must have `tree`'s structure down to its leaves).

    >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    flat, treedef = flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return unflatten(treedef, [f(*xs) for xs in zip(flat, *others)])


def flatten_as(treedef: PyTreeDef, tree: Any, what: str = "value",
               is_leaf: Callable[[Any], bool] | None = None) -> list:
    """Flatten `tree`, which must have the structure `treedef`."""
    flat, other = flatten(tree, is_leaf)
    if other != treedef:
        where, got, want = first_difference(other, treedef)
        raise TypeError(f"{what} has structure {other}, expected {treedef} (at "
                        f"{where or 'the root'}: {got} where {want} was expected)")
    return flat


def first_difference(a: PyTreeDef, b: PyTreeDef) -> tuple[str, str, str]:
    """(the path where two unequal structures first differ, what each has there)."""
    if a.kind is b.kind and _hashable(a.aux) == _hashable(b.aux) and len(a._kids) == len(
            b._kids):
        for key, x, y in zip(a.keys, a._kids, b._kids):
            if x != y:
                where, got, want = first_difference(x, y)
                return str(key) + where, got, want
    return "", _what(a), _what(b)


def _what(td: PyTreeDef) -> str:
    return "a leaf" if td.kind is None else f"a {td.kind.__name__} {_show(td)}"


def _up_to(td: PyTreeDef, x: Any, path: tuple, out: list) -> None:
    if td.kind is None:
        out.append(x)
        return
    node = _node_of(x)
    kids, aux, _ = node.split(x) if node is not None else ([], None, None)
    if node is None or type(x) is not td.kind or len(kids) != len(td._kids) or (
            _hashable(aux) != _hashable(td.aux)):
        raise ValueError(f"at {keystr(path) or 'the root'} the tree has {_brief(x)} where "
                         f"the structure {td} has {_what(td)}")
    for kid, key, c in zip(kids, td.keys, td._kids):
        _up_to(c, kid, (*path, key), out)


def broadcast_prefix(prefix: Any, treedef: PyTreeDef, what: str = "prefix") -> list:
    """One entry of `prefix` per leaf of `treedef`; a leaf of `prefix` covers a subtree."""
    out: list = []
    _prefix_into(out, prefix, treedef, "", what)
    return out


def _prefix_into(out: list, pre: Any, td: PyTreeDef, path: str, what: str) -> None:
    # None in a prefix is a leaf: it means "not mapped" for the whole subtree.
    if td.kind is None or pre is None or _node_of(pre) is None:
        out.extend([pre] * td.num_leaves)
        return
    kids, aux, _ = _node_of(pre).split(pre)
    if type(pre) is not td.kind or len(kids) != len(td._kids) or (
        _hashable(aux) != _hashable(td.aux)
    ):
        raise ValueError(
            f"{what} at {path or 'the root'} is {type(pre).__name__} with "
            f"{len(kids)} children, which does not match the structure {td} there"
        )
    for k, key, c in zip(kids, td.keys, td._kids):
        _prefix_into(out, k, c, path + str(key), what)


_PLAIN = {tuple: "tuple", list: "list", dict: "dict", type(None): "none"}


def to_json(td: PyTreeDef) -> Any:
    """`td` as JSON (a leaf is 0), or None if it holds a container other than a tuple,
    list, None or dict with string keys (one whose class may change between processes)."""
    if td.kind is None:
        return 0
    name = _PLAIN.get(td.kind)
    kids = [to_json(c) for c in td._kids]
    if name is None or any(k is None for k in kids):
        return None
    if td.kind is dict:
        return {name: dict(zip(td.aux, kids))} if all(isinstance(k, str) for k in td.aux) \
            else None
    return {name: kids}


def from_json(data: Any) -> PyTreeDef:
    """The structure `to_json` wrote."""
    def build(d):
        if d == 0:
            return 0
        ((name, kids),) = d.items()
        if name == "dict":
            return {k: build(v) for k, v in kids.items()}
        return {"tuple": tuple, "list": list, "none": lambda _: None}[name](map(build, kids))

    return flatten(build(data))[1]
