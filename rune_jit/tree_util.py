"""Pytree utilities under JAX's names (`jax.tree_util`): flatten and rebuild nested
containers, key paths to their leaves, and the ways to make a class a pytree node.

>>> leaves, treedef = tree_flatten({"w": (1.0, 2.0), "b": None})
>>> leaves, treedef
([1.0, 2.0], PyTreeDef({'b': None, 'w': (*, *)}))
>>> [keystr(path) for path, _ in tree_leaves_with_path({"w": (1.0, 2.0)})]
["['w'][0]", "['w'][1]"]
"""

from ._src.tree import PyTreeDef, register_pytree_node, register_pytree_with_keys
from ._src.tree import flatten as tree_flatten
from ._src.tree import leaves as tree_leaves
from ._src.tree import structure as tree_structure
from ._src.tree import tree_map
from ._src.tree import unflatten as tree_unflatten
from ._src.tree_keys import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath,
                             SequenceKey, keystr)
from ._src.tree_nodes import (Partial, register_dataclass, register_pytree_node_class,
                              register_pytree_with_keys_class, register_static)
from ._src.tree_util import (all_leaves, flatten_one_level, flatten_one_level_with_keys,
                             tree_all, tree_broadcast, tree_flatten_with_path,
                             tree_leaves_with_path, tree_map_with_path, tree_reduce,
                             tree_reduce_associative, tree_transpose,
                             treedef_children, treedef_is_leaf, treedef_tuple)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "flatten_one_level",
    "flatten_one_level_with_keys", "keystr", "register_dataclass", "register_pytree_node",
    "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]
