"""Pytrees: the containers, flatten/unflatten, paths, and containers through the
transformations."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import tree
from rune_jit.tree_util import keystr

Point = namedtuple("Point", "x y")


@dataclasses.dataclass
class Params:
    w: object
    b: object = 0.0
    steps: int = dataclasses.field(default=0, init=False)  # not a child: not in __init__


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: object
    b: object


class Box:
    """A user class made a container with `tree.register`."""

    def __init__(self, items, label):
        self.items, self.label = items, label

    def __eq__(self, other):
        return isinstance(other, Box) and self.label == other.label and all(
            np.array_equal(a, b) for a, b in zip(self.items, other.items))


tree.register(Box, lambda b: (b.items, b.label), lambda label, items: Box(items, label))

TREES = {
    # name: (tree, its leaves in order, their paths)
    "leaf": (1.5, [1.5], [""]),
    "tuple": ((1, 2), [1, 2], ["[0]", "[1]"]),
    "list": ([1, [2, 3]], [1, 2, 3], ["[0]", "[1][0]", "[1][1]"]),
    "dict sorted": ({"b": 1, "a": 2}, [2, 1], ["['a']", "['b']"]),
    "None": (None, [], []),
    "None inside": ((1, None, 2), [1, 2], ["[0]", "[2]"]),
    "namedtuple": (Point(1, (2, 3)), [1, 2, 3], [".x", ".y[0]", ".y[1]"]),
    "dataclass": (Params(1, {"k": 2}), [1, 2], [".w", ".b['k']"]),
    "frozen dataclass": (Frozen(1, 2), [1, 2], [".a", ".b"]),
    "registered": (Box([1, 2], "lbl"), [1, 2], ["[<flat index 0>]", "[<flat index 1>]"]),
    "nested": ({"p": [Point(1, 2)], "q": (Params(3, 4),)}, [1, 2, 3, 4],
               ["['p'][0].x", "['p'][0].y", "['q'][0].w", "['q'][0].b"]),
    "int keys": ({2: "b", 1: "a"}, ["a", "b"], ["[1]", "[2]"]),
    "empty containers": (([], {}, ()), [], []),
}


@pytest.mark.parametrize("name", TREES)
def test_flatten_paths_and_round_trip(name):
    t, leaves, paths = TREES[name]
    flat, treedef = tree.flatten(t)
    assert flat == leaves
    pairs, treedef2 = tree.flatten_with_path(t)
    assert [keystr(p) for p, _ in pairs] == paths and [x for _, x in pairs] == leaves
    assert tree.leaf_paths(treedef) == paths
    assert treedef == treedef2 and hash(treedef) == hash(treedef2)
    assert treedef.num_leaves == len(leaves)
    rebuilt = tree.unflatten(treedef, flat)
    assert type(rebuilt) is type(t) and rebuilt == t
    assert tree.leaves(t) == leaves


def test_unflatten_puts_new_leaves_in_place():
    _, treedef = tree.flatten({"a": Point(1, 2), "b": [3]})
    assert tree.unflatten(treedef, ["x", "y", "z"]) == {"a": Point("x", "y"), "b": ["z"]}


@pytest.mark.parametrize("count", [2, 4])
def test_unflatten_with_wrong_number_of_leaves(count):
    _, treedef = tree.flatten((1, [2, 3]))
    with pytest.raises(ValueError, match=f"3 leaves, but {count} were given"):
        tree.unflatten(treedef, list(range(count)))


def test_dataclass_field_outside_init_is_not_a_child():
    p = Params(np.ones(2), 3.0)
    p.steps = 7
    flat, treedef = tree.flatten(p)
    assert len(flat) == 2
    assert tree.unflatten(treedef, flat).steps == 0  # rebuilt through __init__


@pytest.mark.parametrize("a, b", [
    ((1, 2), [1, 2]), ({"a": 1}, {"b": 1}), (Point(1, 2), (1, 2)), ((1, (2,)), (1, 2)),
    (Params(1, 2), Frozen(1, 2)), (Box([1], "p"), Box([1], "q")), (None, ()),
])
def test_treedefs_of_different_structures_differ(a, b):
    assert tree.flatten(a)[1] != tree.flatten(b)[1]


def test_is_leaf_stops_flattening():
    pairs, treedef = tree.flatten_with_path({"a": (1, 2), "b": [3]},
                                            is_leaf=lambda x: isinstance(x, tuple))
    assert [(keystr(p), x) for p, x in pairs] == [("['a']", (1, 2)), ("['b'][0]", 3)]


def test_tree_map():
    t = {"a": Point(1, 2), "b": [3, None]}
    assert tree.tree_map(lambda x: x * 10, t) == {"a": Point(10, 20), "b": [30, None]}
    assert tree.tree_map(lambda x, y: x + y, t, t) == {"a": Point(2, 4), "b": [6, None]}
    with pytest.raises(ValueError, match=r"at \['b'\] the tree has a list of length 1"):
        tree.tree_map(lambda x, y: x, t, {"a": Point(1, 2), "b": [3]})


def test_broadcast_prefix():
    _, treedef = tree.flatten(({"a": 1, "b": (2, 3)}, 4))
    assert tree.broadcast_prefix(0, treedef) == [0, 0, 0, 0]
    assert tree.broadcast_prefix(({"a": None, "b": 1}, 2), treedef) == [None, 1, 1, 2]
    assert tree.broadcast_prefix((None, 2), treedef) == [None, None, None, 2]
    with pytest.raises(ValueError, match=r"at \[0\] is dict with 1 children"):
        tree.broadcast_prefix(({"a": 0}, 1), treedef, "in_axes")


# ------------------------------------------------------------- containers through transformations

X = np.array([0.5, -1.0, 2.0])

CONTAINERS = {
    "tuple": lambda a, b: (a, b),
    "list": lambda a, b: [a, b],
    "dict": lambda a, b: {"w": a, "x": b},
    "namedtuple": lambda a, b: Point(a, b),
    "dataclass": lambda a, b: Params(a, b),
    "registered": lambda a, b: Box([a, b], "params"),
    "with None": lambda a, b: (a, None, [b]),
}


def parts(c):
    leaves = tree.leaves(c)
    return leaves[0], leaves[1]


def loss(c):
    a, b = parts(c)
    return rnp.sum(rnp.sin(a) * b)


def assert_same_tree(out, expected):
    out_leaves, out_def = tree.flatten(out)
    exp_leaves, exp_def = tree.flatten(expected)
    assert out_def == exp_def
    for o, e in zip(out_leaves, exp_leaves):
        assert isinstance(o, np.ndarray) and o.flags.writeable
        np.testing.assert_allclose(o, e, rtol=1e-12)


@pytest.mark.parametrize("name", CONTAINERS)
def test_containers_through_grad(backend, name):
    make = CONTAINERS[name]
    b = np.array([1.0, 2.0, -3.0])
    g = backend(rune.grad(loss))(make(X, b))
    assert_same_tree(g, make(np.cos(X) * b, np.sin(X)))


@pytest.mark.parametrize("name", CONTAINERS)
def test_containers_through_vmap(backend, name):
    make = CONTAINERS[name]
    xs, bs = np.stack([X, 2 * X]), np.stack([X + 1, X - 1])

    def f(c):
        a, b = parts(c)
        return make(a * b, rnp.sum(a))

    assert_same_tree(backend(rune.vmap(f))(make(xs, bs)), make(xs * bs, xs.sum(1)))


@pytest.mark.parametrize("name", CONTAINERS)
def test_containers_through_jvp(backend, name):
    make = CONTAINERS[name]
    b = np.array([1.0, 2.0, -3.0])

    def f(c):
        a, b = parts(c)
        return make(a * b, rnp.sum(a * a))

    out, t = backend(lambda p, t: rune.jvp(f, p, t))((make(X, b),), (make(np.ones(3), b),))
    assert_same_tree(out, make(X * b, np.sum(X * X)))
    assert_same_tree(t, make(b + X * b, 2 * np.sum(X)))


def test_container_in_axes_prefix_matches_registered_class(backend):
    box = Box([np.arange(6.0).reshape(2, 3), np.arange(2.0)], "p")
    out = backend(rune.vmap(lambda b: b.items[0] * b.items[1],
                            in_axes=(Box([1, None], "p"),)))(box)
    assert_same_tree(out, np.stack([box.items[0][:, i] * box.items[1] for i in range(3)]))


def test_pytree_output_of_vjp_pullback_has_input_structure(backend):
    params = Params(X, Point(np.float64(2.0), np.float64(3.0)))
    _, pullback = rune.vjp(lambda p: p.w * p.b.x + p.b.y, params)
    (g,) = backend(pullback)(np.ones(3))
    assert_same_tree(g, Params(np.full(3, 2.0), Point(np.sum(X), np.float64(3.0))))
