"""Pytrees: nested containers of arrays, flattened with the path to every leaf.

The implementation is in `rune_jit._src.tree`; this module re-exports its public names.

>>> leaves, treedef = flatten({"a": (1, 2), "b": None})
>>> leaves, unflatten(treedef, [3, 4])
([1, 2], {'a': (3, 4), 'b': None})
"""

from ._src.tree import (LEAF, Node, TreeDef, broadcast_prefix, flatten, flatten_as,
                        flatten_with_path, from_json, leaf_paths, leaves, register, to_json,
                        tree_flatten, tree_leaves, tree_map, tree_map_with_path, tree_reduce,
                        tree_structure, tree_transpose, tree_unflatten, unflatten)

__all__ = ["LEAF", "Node", "TreeDef", "broadcast_prefix", "flatten", "flatten_as",
           "flatten_with_path", "from_json", "leaf_paths", "leaves", "register", "to_json",
           "tree_flatten", "tree_leaves", "tree_map", "tree_map_with_path", "tree_reduce",
           "tree_structure", "tree_transpose", "tree_unflatten", "unflatten"]
