"""Pytrees: nested containers of arrays, flattened with the path to every leaf.

Containers are tuple, list, dict (keys sorted), None (no leaves), namedtuple,
dataclass instances, and classes given to `register`. Everything else is a leaf.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Iterator


@dataclasses.dataclass(frozen=True)
class Node:
    """How to take one kind of container apart and put it back together."""

    children: Callable[[Any], tuple[list, Any, list[str]]]  # -> children, aux, key strings
    rebuild: Callable[[Any, list], Any]


_registry: dict[type, Node] = {}


def register(
    cls: type,
    flatten: Callable[[Any], tuple[Iterable, Any]],
    unflatten: Callable[[Any, list], Any],
) -> type:
    """Make `cls` a container: `flatten(obj) -> (children, aux)`, `unflatten(aux, children)`."""

    def children(obj):
        kids, aux = flatten(obj)
        kids = list(kids)
        return kids, aux, [f"[{i}]" for i in range(len(kids))]

    _registry[cls] = Node(children, unflatten)
    return cls


def _sequence(obj):
    return list(obj), None, [f"[{i}]" for i in range(len(obj))]


def _dict(obj):
    keys = sorted(obj)
    return [obj[k] for k in keys], keys, [f"[{k!r}]" for k in keys]


_registry[tuple] = Node(_sequence, lambda aux, kids: tuple(kids))
_registry[list] = Node(_sequence, lambda aux, kids: list(kids))
_registry[dict] = Node(_dict, lambda keys, kids: dict(zip(keys, kids)))
_registry[type(None)] = Node(lambda obj: ([], None, []), lambda aux, kids: None)


def _node_of(obj: Any) -> Node | None:
    cls = type(obj)
    node = _registry.get(cls)
    if node is not None:
        return node
    if isinstance(obj, tuple) and hasattr(cls, "_fields"):
        return Node(
            lambda o: (list(o), None, [f".{f}" for f in cls._fields]),
            lambda aux, kids: cls(*kids),
        )
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj) if f.init]
        return Node(
            lambda o: ([getattr(o, n) for n in names], None, [f".{n}" for n in names]),
            lambda aux, kids: cls(**dict(zip(names, kids))),
        )
    return None


class TreeDef:
    """The shape of a pytree with its leaves taken out."""

    __slots__ = ("kind", "aux", "children", "num_leaves", "_rebuild", "keys", "_key", "_hash")

    def __init__(self, kind: type | None, aux: Any, children: tuple, rebuild=None,
                 keys: tuple[str, ...] = ()):
        self.kind = kind  # None marks a leaf
        self.aux = aux
        self.children = children
        self._rebuild = rebuild
        self.keys = keys  # the path step to each child, e.g. "['w']" or ".b"
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        # jit looks signatures up by structure on every call: compare and hash once
        self._key = (kind, _hashable(aux), tuple(c._key for c in children))
        self._hash = None

    def fill(self, leaves: list) -> Any:
        """This structure with `leaves` in it (unflatten, quick for a lone leaf)."""
        return leaves[0] if self.kind is None else unflatten(self, leaves)

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self._key == other._key

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key)
        return self._hash

    def __repr__(self):
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        return f"{self.kind.__name__}({inner})"


def _hashable(aux):
    return tuple(aux) if isinstance(aux, list) else aux


LEAF = TreeDef(None, None, ())


def flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """-> ([(path, leaf)], treedef); a path is a string like "[0]['w'].b"."""
    out: list[tuple[str, Any]] = []
    treedef = _flatten_into(out, tree, "", is_leaf)
    return out, treedef


def _flatten_into(out: list, obj: Any, path: str, is_leaf) -> TreeDef:
    # recursion through a module function: a recursive closure is a reference cycle that
    # would keep the caller's arrays alive until the garbage collector runs
    node = None if (is_leaf and is_leaf(obj)) else _node_of(obj)
    if node is None:
        out.append((path, obj))
        return LEAF
    kids, aux, keys = node.children(obj)
    subtrees = tuple(_flatten_into(out, k, path + key, is_leaf) for k, key in zip(kids, keys))
    return TreeDef(type(obj), aux, subtrees, node.rebuild, tuple(keys))


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    pairs, treedef = flatten_with_path(tree, is_leaf)
    return [leaf for _, leaf in pairs], treedef


def leaf_paths(treedef: TreeDef) -> list[str]:
    """The path of every leaf of `treedef`. Use it rather than flattening a tree
    rebuilt with stand-in leaves: stand-ins that are dataclasses (like ir.Type)
    would be flattened too."""
    if treedef.kind is None:
        return [""]
    return [key + p for key, c in zip(treedef.keys, treedef.children) for p in leaf_paths(c)]


def unflatten(treedef: TreeDef, leaves: Iterable) -> Any:
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten: the structure {treedef} has {treedef.num_leaves} "
                         f"leaves, but {len(leaves)} were given")
    return _build(treedef, iter(leaves))


def _build(td: TreeDef, it: Iterator) -> Any:
    # a module function, not a recursive closure: such a closure is a reference cycle,
    # which would keep every leaf alive until the garbage collector runs
    if td.kind is None:
        return next(it)
    return td._rebuild(td.aux, [_build(c, it) for c in td.children])


def leaves(tree: Any) -> list:
    return flatten(tree)[0]


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f` applied to the leaves of `tree` (and the matching leaves of `rest`)."""
    flat, treedef = flatten(tree, is_leaf)
    others = [flatten_as(treedef, r, is_leaf=is_leaf) for r in rest]
    return unflatten(treedef, [f(*xs) for xs in zip(flat, *others)])


def tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f(path, leaf, *others)` for each leaf; a path is a string like "[0]['w']"."""
    pairs, treedef = flatten_with_path(tree, is_leaf)
    others = [flatten_as(treedef, r, is_leaf=is_leaf) for r in rest]
    return unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def tree_reduce(f: Callable, tree: Any, *initializer: Any,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """functools.reduce of `f` over the leaves of `tree`."""
    import functools

    return functools.reduce(f, flatten(tree, is_leaf)[0], *initializer)


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeDef:
    return flatten(tree, is_leaf)[1]


def tree_transpose(outer: TreeDef, inner: TreeDef, tree: Any) -> Any:
    """A tree of structure `outer` of trees of structure `inner`, as a tree of structure
    `inner` of trees of structure `outer`."""
    groups = [flatten_as(inner, sub, "an inner tree") for sub in flatten_as(
        outer, tree, "the outer tree", is_leaf=lambda x: tree_structure(x) == inner)]
    return unflatten(inner, [unflatten(outer, [g[i] for g in groups])
                             for i in range(inner.num_leaves)])


# JAX's spellings
tree_flatten, tree_unflatten, tree_leaves = flatten, unflatten, leaves


def flatten_as(treedef: TreeDef, tree: Any, what: str = "value",
               is_leaf: Callable[[Any], bool] | None = None) -> list:
    """Flatten `tree`, which must have the structure `treedef`."""
    flat, other = flatten(tree, is_leaf)
    if other != treedef:
        raise TypeError(f"{what} has structure {other}, expected {treedef}")
    return flat


def broadcast_prefix(prefix: Any, treedef: TreeDef, what: str = "prefix") -> list:
    """One entry of `prefix` per leaf of `treedef`; a leaf of `prefix` covers a subtree."""
    out: list = []
    _prefix_into(out, prefix, treedef, "", what)
    return out


def _prefix_into(out: list, pre: Any, td: TreeDef, path: str, what: str) -> None:
    # None in a prefix is a leaf: it means "not mapped" for the whole subtree.
    if td.kind is None or pre is None or _node_of(pre) is None:
        out.extend([pre] * td.num_leaves)
        return
    kids, aux, keys = _node_of(pre).children(pre)
    if type(pre) is not td.kind or len(kids) != len(td.children) or (
        _hashable(aux) != _hashable(td.aux)
    ):
        raise ValueError(
            f"{what} at {path or 'the root'} is {type(pre).__name__} with "
            f"{len(kids)} children, which does not match the structure {td} there"
        )
    for k, key, c in zip(kids, keys, td.children):
        _prefix_into(out, k, c, path + key, what)



_PLAIN = {tuple: "tuple", list: "list", dict: "dict", type(None): "none"}


def to_json(td: TreeDef) -> Any:
    """`td` as JSON (a leaf is 0), or None if it holds a container other than a tuple,
    list, None or dict with string keys (one whose class may change between processes)."""
    if td.kind is None:
        return 0
    name = _PLAIN.get(td.kind)
    kids = [to_json(c) for c in td.children]
    if name is None or any(k is None for k in kids):
        return None
    if td.kind is dict:
        return {name: dict(zip(td.aux, kids))} if all(isinstance(k, str) for k in td.aux) \
            else None
    return {name: kids}


def from_json(data: Any) -> TreeDef:
    """The structure `to_json` wrote."""
    def build(d):
        if d == 0:
            return 0
        ((name, kids),) = d.items()
        if name == "dict":
            return {k: build(v) for k, v in kids.items()}
        return {"tuple": tuple, "list": list, "none": lambda _: None}[name](map(build, kids))

    return flatten(build(data))[1]
