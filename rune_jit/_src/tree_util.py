"""JAX's pytree functions over rune_jit's pytrees (`rune_jit._src.tree`): key paths,
reductions, transposition and broadcasting of trees, and questions about structures."""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Sequence

from .tree import (PyTreeDef, _node_of, _registry, broadcast_prefix, flatten, leaf_keypaths,
                   structure, unflatten)
from .tree_keys import KeyEntry

IsLeaf = Callable[[Any], bool] | None
_NO_INITIALIZER = object()


def tree_flatten_with_path(tree: Any, is_leaf: IsLeaf = None
                           ) -> tuple[list[tuple[tuple[KeyEntry, ...], Any]], PyTreeDef]:
    """([(key path, leaf), ...], structure) of `tree`.

    >>> pairs, _ = tree_flatten_with_path({"a": [1]})
    >>> pairs
    [((DictKey(key='a'), SequenceKey(idx=0)), 1)]
    """
    flat, treedef = flatten(tree, is_leaf)
    return list(zip(leaf_keypaths(treedef), flat)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: IsLeaf = None
                          ) -> list[tuple[tuple[KeyEntry, ...], Any]]:
    """[(key path, leaf), ...] of `tree`.

    >>> from rune_jit.tree_util import keystr
    >>> [(keystr(p), x) for p, x in tree_leaves_with_path((1, {"b": 2}))]
    [('[0]', 1), ("[1]['b']", 2)]
    """
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """`f(key_path, leaf, *matching subtrees of rest)` for each leaf of `tree`.

    >>> from rune_jit.tree_util import keystr
    >>> tree_map_with_path(lambda p, x: keystr(p), {"a": (1, 2)})
    {'a': ("['a'][0]", "['a'][1]")}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any,
                initializer: Any = _NO_INITIALIZER, is_leaf: IsLeaf = None) -> Any:
    """functools.reduce of `function` over the leaves of `tree`.

    >>> tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)}, 10)
    16
    """
    flat = flatten(tree, is_leaf)[0]
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, flat)
    return functools.reduce(function, flat, initializer)


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = None, is_leaf: IsLeaf = None) -> Any:
    """The leaves of `tree` combined pairwise by the associative `operation`, as a
    balanced tree of calls; `identity` for a tree with no leaves.

    >>> tree_reduce_associative(lambda a, b: a * b, [2, (3, 4)])
    24
    """
    flat = flatten(tree, is_leaf)[0]
    if not flat:
        if identity is None:
            raise ValueError("tree_reduce_associative: the tree has no leaves and no "
                             "identity was given")
        return identity
    while len(flat) > 1:
        pairs = [operation(a, b) for a, b in zip(flat[::2], flat[1::2])]
        flat = pairs + flat[len(pairs) * 2:]
    return flat[0]


def tree_all(tree: Any, *, is_leaf: IsLeaf = None) -> bool:
    """Whether every leaf of `tree` is true.

    >>> tree_all([True, {"a": 1}]), tree_all((1, 0)), tree_all(None)
    (True, False, True)
    """
    return all(flatten(tree, is_leaf)[0])


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef,
                   pytree_to_transpose: Any) -> Any:
    """A tree of structure `outer` of trees of structure `inner`, as a tree of structure
    `inner` of trees of structure `outer`.

    >>> outer, inner = structure([0, 0]), structure({"x": 0, "y": 0})
    >>> tree_transpose(outer, inner, [{"x": 1, "y": 2}, {"x": 3, "y": 4}])
    {'x': [1, 3], 'y': [2, 4]}
    """
    groups = [inner_treedef.flatten_up_to(sub)
              for sub in outer_treedef.flatten_up_to(pytree_to_transpose)]
    return unflatten(inner_treedef, [unflatten(outer_treedef, [g[i] for g in groups])
                                     for i in range(inner_treedef.num_leaves)])


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> Any:
    """`prefix_tree` with each of its leaves repeated over the matching subtree of
    `full_tree` (the result has `full_tree`'s structure).

    >>> tree_broadcast((1, 2), ((3, 4), 5))
    ((1, 1), 2)
    """
    treedef = flatten(full_tree, is_leaf)[1]
    return unflatten(treedef, broadcast_prefix(prefix_tree, treedef, "tree_broadcast prefix"))


def all_leaves(iterable: Iterable, is_leaf: IsLeaf = None) -> bool:
    """Whether every item of `iterable` is a leaf.

    >>> all_leaves([1, 2.0]), all_leaves([1, (2,)])
    (True, False)
    """
    return all((is_leaf is not None and is_leaf(x)) or _node_of(x) is None for x in iterable)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is one node with no children (a leaf, or None, or an empty
    container), as in JAX.

    >>> treedef_is_leaf(structure(1.0)), treedef_is_leaf(structure([1]))
    (True, False)
    """
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of `treedef`'s root.

    >>> treedef_children(structure((1, [2, 3])))
    [PyTreeDef(*), PyTreeDef([*, *])]
    """
    return treedef.children()


def treedef_tuple(treedefs: Sequence[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose items have the structures `treedefs`.

    >>> treedef_tuple([structure(1), structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    return PyTreeDef(tuple, None, tuple(treedefs), _registry[tuple])


def flatten_one_level(tree: Any) -> tuple[list, Any]:
    """(the children of `tree`'s root node, its aux data); a leaf raises ValueError.

    >>> flatten_one_level({"b": (1, 2), "a": 3})
    ((3, (1, 2)), ('a', 'b'))
    """
    kids, aux, _ = _split(tree)
    return tuple(kids), aux


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    """([(key, child), ...] of `tree`'s root node, its aux data).

    >>> flatten_one_level_with_keys([5, 6])
    ([(SequenceKey(idx=0), 5), (SequenceKey(idx=1), 6)], None)
    """
    kids, aux, keys = _split(tree)
    return list(zip(keys, kids)), aux


def _split(tree: Any) -> tuple[list, Any, tuple]:
    node = _node_of(tree)
    if node is None:
        raise ValueError(f"flatten_one_level: a {type(tree).__name__} is a leaf, not a "
                         "pytree node")
    kids, aux, keys = node.split(tree)
    return kids, aux, keys if keys is not None else node.keys(aux, len(kids))
