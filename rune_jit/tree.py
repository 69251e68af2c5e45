"""Pytrees under JAX's short names (`jax.tree`: `map`, `leaves`, `flatten`, ...), and
rune_jit's older names (`tree_map`, `register`, `leaf_paths`, ...), which keep working.

>>> map(lambda x: x * 2, {"a": (1, 2), "b": None})
{'a': (2, 4), 'b': None}
>>> leaves, treedef = flatten([1, (2, 3)])
>>> treedef.num_leaves, unflatten(treedef, [4, 5, 6])
(3, [4, (5, 6)])
"""

from ._src.tree import (LEAF, Node, PyTreeDef, TreeDef, broadcast_prefix, flatten, flatten_as,
                        from_json, leaf_paths, leaves, register, structure, to_json, tree_map,
                        unflatten)
from ._src.tree_nodes import static
from ._src.tree_util import tree_all as all
from ._src.tree_util import tree_broadcast as broadcast
from ._src.tree_util import tree_flatten_with_path as flatten_with_path
from ._src.tree_util import tree_leaves_with_path as leaves_with_path
from ._src.tree_util import tree_map_with_path
from ._src.tree_util import tree_map_with_path as map_with_path
from ._src.tree_util import tree_reduce
from ._src.tree_util import tree_reduce as reduce
from ._src.tree_util import tree_reduce_associative as reduce_associative
from ._src.tree_util import tree_transpose
from ._src.tree_util import tree_transpose as transpose

map = tree_map  # noqa: A001 - JAX's name, shadowing the builtin in this namespace only
tree_flatten, tree_unflatten, tree_leaves, tree_structure = flatten, unflatten, leaves, structure

__all__ = [
    # JAX's jax.tree
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
    "unflatten",
    # rune_jit's older names
    "LEAF", "Node", "PyTreeDef", "TreeDef", "broadcast_prefix", "flatten_as", "from_json",
    "leaf_paths", "register", "to_json", "tree_flatten", "tree_leaves", "tree_map",
    "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose",
    "tree_unflatten",
]
