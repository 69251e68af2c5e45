"""JAX's pytree API (rune_jit.tree_util, rune_jit.tree, rune_jit.flatten_util): the same
leaves, structures, key paths and printed forms as JAX's, and registered nodes through
jit, the loops and the transformations."""

import collections
import dataclasses
from typing import Any, NamedTuple

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import tree_util as tu
from rune_jit.flatten_util import ravel_pytree

jax = pytest.importorskip("jax")
jtu = jax.tree_util


class Point(NamedTuple):
    x: Any
    y: Any


# ------------------------------------------------------------- one class per registration
# Each is registered with rune_jit and with JAX (each library keeps its own registry), so
# the two can be compared on the same objects.


class Node:
    """register_pytree_node: children without keys."""

    def __init__(self, a, b, label="n"):
        self.a, self.b, self.label = a, b, label


def _node_flatten(n):
    return (n.a, n.b), n.label


def _node_unflatten(label, kids):
    return Node(*kids, label)


class ClassNode:
    """register_pytree_node_class."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, kids):
        return cls(*kids)


class KeysNode:
    """register_pytree_with_keys_class: children named by attribute."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten_with_keys(self):
        return [(tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)], None

    @classmethod
    def tree_unflatten(cls, aux, kids):
        return cls(*kids)


class JaxKeysNode(KeysNode):
    """KeysNode for JAX, whose key classes are its own."""

    def tree_flatten_with_keys(self):
        return [(jtu.GetAttrKey("a"), self.a), (jtu.GetAttrKey("b"), self.b)], None


@dataclasses.dataclass
class Layer:
    """register_dataclass with a static field (metadata static=True)."""

    a: Any
    b: Any
    act: str = dataclasses.field(default="tanh", metadata=dict(static=True))


@dataclasses.dataclass(frozen=True)
class Mode:
    """register_static: no leaves, the instance is the aux data."""

    name: str


for register in (tu.register_pytree_node, jtu.register_pytree_node):
    register(Node, _node_flatten, _node_unflatten)
for register in (tu.register_pytree_node_class, jtu.register_pytree_node_class):
    register(ClassNode)
tu.register_pytree_with_keys_class(KeysNode)
jtu.register_pytree_with_keys_class(JaxKeysNode)
for register in (tu.register_dataclass, jtu.register_dataclass):
    register(Layer)
for register in (tu.register_static, jtu.register_static):
    register(Mode)


def _twin(t):
    """`t` with each KeysNode as the JaxKeysNode JAX has registered."""
    if isinstance(t, KeysNode):
        return JaxKeysNode(_twin(t.a), _twin(t.b))
    if isinstance(t, (tuple, list)) and not isinstance(t, Point):
        return type(t)(map(_twin, t))
    if isinstance(t, dict):
        return type(t)((k, _twin(v)) for k, v in t.items())
    return t


TREES = {
    "leaf": 1.5,
    "tuple": (1, 2),
    "one-tuple": (1,),
    "list": [1, [2, 3]],
    "dict sorted": {"b": 1, "a": 2},
    "int keys": {2: "b", 1: "a"},
    "None": None,
    "None inside": (1, None, [None, 2]),
    "empty containers": ([], {}, ()),
    "namedtuple": Point(1, (2, 3)),
    "OrderedDict": collections.OrderedDict([("z", 1), ("a", 2)]),
    "register_pytree_node": Node(1, [2, 3]),
    "register_pytree_node_class": ClassNode(1, {"k": 2}),
    "register_dataclass": Layer(1, 2, "relu"),
    "register_static": (1, Mode("fast"), 2),
    "nested": {"p": [Point(1, Node(2, 3))], "q": (Layer(4, {"w": 5}),)},
}


@pytest.mark.parametrize("name", TREES)
def test_flatten_as_jax_does(name):
    t = TREES[name]
    leaves, treedef = tu.tree_flatten(t)
    jleaves, jtreedef = jtu.tree_flatten(t)
    assert leaves == jleaves
    assert repr(treedef) == repr(jtreedef) and str(treedef) == str(jtreedef)
    assert (treedef.num_leaves, treedef.num_nodes) == (jtreedef.num_leaves, jtreedef.num_nodes)
    assert [repr(c) for c in treedef.children()] == [repr(c) for c in jtreedef.children()]
    assert tu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(jtreedef)
    strs = [f"leaf {x}" for x in leaves]
    rebuilt = treedef.unflatten(strs)
    assert type(rebuilt) is (str if name == "leaf" else type(t))
    assert tu.tree_flatten(rebuilt) == (strs, treedef)
    assert repr(jtu.tree_structure(rebuilt)) == repr(jtreedef)  # JAX reads it back the same


@pytest.mark.parametrize("name", [*TREES, "with_keys"])
def test_key_paths_as_jax_gives_them(name):
    t = TREES.get(name, {"k": KeysNode(1, (2, 3))})
    pairs, _ = tu.tree_flatten_with_path(t)
    jpairs, _ = jtu.tree_flatten_with_path(_twin(t))
    assert [repr(p) for p, _ in pairs] == [repr(p) for p, _ in jpairs]
    assert [tu.keystr(p) for p, _ in pairs] == [jtu.keystr(p) for p, _ in jpairs]
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs] == [
        jtu.keystr(p, simple=True, separator="/") for p, _ in jpairs]
    assert [x for _, x in pairs] == [x for _, x in jpairs]
    assert [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(t)] == [
        (jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(_twin(t))]


def test_key_entries_compare_and_hash_by_value():
    assert tu.DictKey("a") == tu.DictKey("a") != tu.DictKey("b")
    assert tu.SequenceKey(0) != tu.FlattenedIndexKey(0)
    assert len({tu.GetAttrKey("x"), tu.GetAttrKey("x"), tu.SequenceKey(1)}) == 2
    assert all(isinstance(k, tu.KeyEntry) for k in
               (tu.DictKey(1), tu.SequenceKey(1), tu.GetAttrKey("x"), tu.FlattenedIndexKey(1)))


def test_treedefs_compare_and_hash_by_structure():
    a, b = tu.tree_structure(Layer(1, 2, "relu")), tu.tree_structure(Layer(3, 4, "relu"))
    assert a == b and hash(a) == hash(b)
    assert a != tu.tree_structure(Layer(1, 2, "tanh"))  # meta fields are compared
    assert tu.tree_structure(Node(1, 2, "x")) != tu.tree_structure(Node(1, 2, "y"))
    assert tu.tree_structure(Mode("a")) != tu.tree_structure(Mode("b"))
    assert tu.tree_structure((1, 2)) != tu.tree_structure(Point(1, 2))
    assert tu.tree_structure(None) != tu.tree_structure(())


T1 = {"a": (1.0, 2.0), "b": [3.0, None], "c": Point(4.0, 5.0)}


@pytest.mark.parametrize("case", [
    lambda m: m.tree_map(lambda x, y: x * 10 + y, T1, T1),
    lambda m: m.tree_map(lambda x, y: (x, y), [1, 2], [(1, 2), {"k": 3}]),  # rest: a prefix
    lambda m: m.tree_map(lambda x: x, [(1, 2), 3], is_leaf=lambda x: isinstance(x, tuple)),
    lambda m: m.tree_map_with_path(lambda p, x: (m.keystr(p), x), T1),
    lambda m: m.tree_reduce(lambda a, b: a + b, T1),
    lambda m: m.tree_reduce(lambda a, b: a + b, T1, 100.0),
    lambda m: m.tree_reduce_associative(lambda a, b: a + b, T1),
    lambda m: m.tree_reduce_associative(lambda a, b: a + b, [], identity=0),
    lambda m: (m.tree_all(T1), m.tree_all([1, 0]), m.tree_all(None)),
    lambda m: m.tree_transpose(m.tree_structure([0, 0]), m.tree_structure({"x": 0, "y": 0}),
                               [{"x": 1, "y": 2}, {"x": 3, "y": 4}]),
    lambda m: m.tree_broadcast((1, {"k": 2}), ((3, 4), {"k": [5, 6]})),
    lambda m: (m.all_leaves([1, 2.0, "s"]), m.all_leaves([1, (2,)]), m.all_leaves([])),
    lambda m: repr(m.treedef_tuple([m.tree_structure(1), m.tree_structure({"a": [1, 2]})])),
    lambda m: [repr(c) for c in m.treedef_children(m.tree_structure((1, [2, 3])))],
    lambda m: m.flatten_one_level({"b": (1, 2), "a": 3}),
    lambda m: [(repr(k), c) for k, c in m.flatten_one_level_with_keys({"b": 1, "a": 2})[0]],
    lambda m: m.tree_leaves(Layer(1.0, 2.0)),
    lambda m: [m.tree_structure(x).node_data() for x in
               [(1, 2), [1], None, 1.0, collections.OrderedDict(z=1, a=2), Point(1, 2)]],
    lambda m: m.tree_structure({"w": (0, 0), "b": 0}).flatten_up_to(
        {"w": ([1], {"k": 2}), "b": (3,)}),
])
def test_tree_functions_as_jax(case):
    assert case(tu) == case(jtu)


@pytest.mark.parametrize("name", ["all", "broadcast", "flatten", "flatten_with_path",
                                  "leaves", "leaves_with_path", "map", "map_with_path",
                                  "reduce", "reduce_associative", "structure", "transpose",
                                  "unflatten", "static"])
def test_jax_tree_short_names(name):
    assert hasattr(jax.tree, name) and callable(getattr(rune.tree, name))


def test_jax_tree_short_names_behave_as_jaxs():
    for f in (lambda m: m.map(lambda x: x + 1, T1), lambda m: m.leaves(T1),
              lambda m: repr(m.structure(T1)), lambda m: m.reduce(max, T1),
              lambda m: m.all([1, 1]), lambda m: m.broadcast(0, (1, [2])),
              lambda m: [(jtu.keystr(p) if m is jax.tree else tu.keystr(p), x)
                         for p, x in m.leaves_with_path(T1)]):
        assert f(rune.tree) == f(jax.tree)


def test_tree_util_lists_jaxs_names():
    missing = {n for n in dir(jtu) if not n.startswith("_")} - set(dir(tu))
    assert missing <= {"default_registry", "is_tree_node"}, missing


def test_static_field_marks_a_meta_field():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: Any
        op: str = rune.tree.static(default="add")

    leaves, treedef = rune.tree.flatten(Op(np.ones(2)))
    assert len(leaves) == 1 and repr(treedef) == "PyTreeDef(CustomNode(Op[('add',)], [*]))"


def test_register_dataclass_with_field_lists():
    @dataclasses.dataclass
    class Opt:
        lr: Any
        momentum: Any
        name: str

    tu.register_dataclass(Opt, data_fields=["lr", "momentum"], meta_fields=["name"])
    leaves, treedef = tu.tree_flatten(Opt(0.1, 0.9, "sgd"))
    assert leaves == [0.1, 0.9]
    assert tu.tree_unflatten(treedef, [1.0, 2.0]) == Opt(1.0, 2.0, "sgd")
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Opt(0.1, 0.9, "sgd"))] == [
        ".lr", ".momentum"]


def test_unregistered_dataclass_is_a_node():
    """rune_jit's choice (docs/porting-from-jax.md): every dataclass is a node; JAX makes
    one a leaf unless registered."""
    @dataclasses.dataclass
    class Plain:
        u: Any
        v: Any

    assert tu.tree_leaves(Plain(1, 2)) == [1, 2]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Plain(1, 2))] == [".u", ".v"]


def test_partial_is_a_pytree_of_its_arguments():
    p = tu.Partial(lambda a, b, *, c: a * b + c, 2.0, c=1.0)
    leaves, treedef = tu.tree_flatten(p)
    jleaves, _ = jtu.tree_flatten(jtu.Partial(p.func, 2.0, c=1.0))
    assert leaves == jleaves == [2.0, 1.0]
    q = tu.tree_unflatten(treedef, [3.0, 5.0])
    assert isinstance(q, tu.Partial) and q(4.0) == 17.0
    assert tu.tree_structure(tu.Partial(p.func, 7.0, c=0.0)) == treedef
    assert tu.tree_structure(tu.Partial(lambda a, b, *, c: 0, 7.0, c=0.0)) != treedef
    assert tu.Partial(tu.Partial(p.func, 2.0), 3.0, c=0.0)() == 6.0


# ------------------------------------------------------------- bad input


def test_flatten_of_the_wrong_arity_names_the_type():
    class Bad:
        pass

    tu.register_pytree_node(Bad, lambda b: (1, 2, 3), lambda aux, kids: Bad())
    with pytest.raises(TypeError, match=r"flatten function of pytree node type .*Bad "
                                        r"returned a tuple of length 3, not a pair"):
        tu.tree_leaves([Bad()])

    class NotSeq:
        pass

    tu.register_pytree_node(NotSeq, lambda b: (1.0, None), lambda aux, kids: NotSeq())
    with pytest.raises(TypeError, match=r"type .*NotSeq returned children that are a float"):
        tu.tree_leaves(NotSeq())


def test_partial_of_a_non_callable():
    with pytest.raises(TypeError, match=r"Partial: the function given is a int \(3\), which "
                                        "is not callable"):
        tu.Partial(3, 1.0)


def test_register_dataclass_bad_fields():
    @dataclasses.dataclass
    class Two:
        a: Any
        b: Any

    with pytest.raises(ValueError, match=r"missing \['b'\], not in __init__ \['c'\]"):
        tu.register_dataclass(Two, data_fields=["a", "c"], meta_fields=[])
    with pytest.raises(TypeError, match="give both data_fields and meta_fields"):
        tu.register_dataclass(Two, data_fields=["a", "b"])
    with pytest.raises(TypeError, match="is not a dataclass"):
        tu.register_dataclass(Node)


def test_flatten_up_to_names_the_path():
    treedef = tu.tree_structure({"w": (0, 0), "b": 0})
    assert treedef.flatten_up_to({"w": ([1], {"k": 2}), "b": (3,)}) == [(3,), [1], {"k": 2}]
    with pytest.raises(ValueError, match=r"at \['w'\] the tree has a list of length 2 where"):
        treedef.flatten_up_to({"w": [1, 2], "b": 3})
    with pytest.raises(ValueError, match=r"at \['w'\]\[1\] the tree has a int"):
        tu.tree_map(lambda x, y: x, {"w": (0, (1,))}, {"w": (0, 1)})


def test_flatten_one_level_of_a_leaf():
    with pytest.raises(ValueError, match="a float is a leaf"):
        tu.flatten_one_level(1.0)


# ------------------------------------------------------------- registered nodes through rune_jit

X = np.array([0.5, -1.0, 2.0])
Y = np.array([1.0, 2.0, -3.0])


def _mul(a, b, x):
    return a * x + b


KINDS = {
    "register_pytree_node": (lambda a, b: Node(a, b, "lbl"), lambda n: (n.a, n.b)),
    "register_pytree_node_class": (ClassNode, lambda n: (n.a, n.b)),
    "register_pytree_with_keys": (KeysNode, lambda n: (n.a, n.b)),
    "register_dataclass": (lambda a, b: Layer(a, b, "relu"), lambda n: (n.a, n.b)),
    "Partial": (lambda a, b: tu.Partial(_mul, a, b), lambda p: p.args),
    "with a static node": (lambda a, b: (a, Mode("m"), b), lambda t: (t[0], t[2])),
}


def assert_same_tree(out, expected, rtol=1e-12):
    out_leaves, out_def = tu.tree_flatten(out)
    exp_leaves, exp_def = tu.tree_flatten(expected)
    assert out_def == exp_def
    for o, e in zip(out_leaves, exp_leaves):
        np.testing.assert_allclose(o, e, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("kind", KINDS)
def test_node_as_jit_argument_and_result(backend, kind):
    make, parts = KINDS[kind]

    def f(n):
        a, b = parts(n)
        return make(a * b, rnp.sin(a))

    assert_same_tree(backend(rune.jit(f))(make(X, Y)), make(X * Y, np.sin(X)))


@pytest.mark.parametrize("kind", KINDS)
def test_node_as_scan_carry(backend, kind):
    make, parts = KINDS[kind]

    def step(c, x):
        a, b = parts(c)
        return make(a + x, b * 0.5), rnp.sum(a)

    carry, ys = backend(lambda c: rune.scan(step, c, np.ones((3, 3))))(make(X, Y))
    assert_same_tree(carry, make(X + 3, Y / 8))
    np.testing.assert_allclose(ys, np.sum(X) + np.array([0.0, 3.0, 6.0]), rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_node_as_iterate_carry(backend, kind):
    make, parts = KINDS[kind]

    def step(c):
        a, b = parts(c)
        return make(a * 2.0, b + 1.0)

    until = lambda c: rnp.max(parts(c)[0]) > 10.0  # noqa: E731 - a one-line predicate
    out = backend(lambda c: rune.iterate(step, c, until=until, max_steps=20))(make(X, Y))
    assert_same_tree(out, make(X * 8, Y + 3))


@pytest.mark.parametrize("kind", KINDS)
def test_node_under_grad_jvp_vmap(backend, kind):
    make, parts = KINDS[kind]

    def loss(n):
        a, b = parts(n)
        return rnp.sum(rnp.sin(a) * b)

    assert_same_tree(backend(rune.grad(loss))(make(X, Y)), make(np.cos(X) * Y, np.sin(X)))
    out, t = backend(lambda n, dn: rune.jvp(loss, (n,), (dn,)))(make(X, Y), make(Y, X))
    np.testing.assert_allclose(t, np.sum(np.cos(X) * Y * Y + np.sin(X) * X), rtol=1e-12)

    def f(n):
        a, b = parts(n)
        return make(a * b, rnp.sum(a))

    xs, ys = np.stack([X, 2 * X]), np.stack([Y, Y - 1])
    assert_same_tree(backend(rune.vmap(f))(make(xs, ys)), make(xs * ys, xs.sum(1)))
    rune.check_grads(lambda a, b: loss(make(a, b)), X, Y)


def test_grad_inside_a_scan_step_over_a_node(backend):
    def step(c, x):
        g = rune.grad(lambda n: rnp.sum(n.a * n.b * x))(c)
        return Layer(c.a - 0.1 * g.a, c.b - 0.1 * g.b, c.act), rnp.sum(g.a)

    out, _ = backend(lambda c: rune.scan(step, c, np.ones(2)))(Layer(X, Y))
    a, b = X, Y
    for _ in range(2):
        a, b = a - 0.1 * b, b - 0.1 * a
    assert_same_tree(out, Layer(a, b))


def test_carry_whose_structure_changes_names_the_path(backend):
    def step(c, x):
        return {"w": Layer(c["w"].a, (c["w"].b, c["w"].b))}, None

    with pytest.raises(TypeError, match=r"carry\['w'\]\.b is a tuple \(\*, \*\) where "
                                        r"init\['w'\]\.b is a leaf"):
        backend(lambda c: rune.scan(step, c, np.ones(2)))({"w": Layer(X, Y)})
    with pytest.raises(TypeError, match=r"carry\[1\]\[<flat index 1>\] is a list"):
        backend(lambda c: rune.iterate(lambda c: (c[0], Node(c[1].a, [c[1].b])), c,
                                       until=lambda c: True, max_steps=2))((X, Node(X, Y)))


def test_carry_type_change_names_the_path_in_key_path_form(backend):
    def step(c, x):
        return Layer(c.a, c.b.astype(np.float32)), None

    with pytest.raises(TypeError, match=r"carry\.b of type float32\[3\], but init\.b"):
        backend(lambda c: rune.scan(step, c, np.ones(2)))(Layer(X, Y))


def test_jit_argument_error_names_the_key_path():
    f = rune.jit(lambda k, d, scale=1.0: d["w"].b * k * scale, static_argnums=0)
    with pytest.raises(TypeError, match=r"^args\[1\]\['w'\]\.a is a str, not an array"):
        f(2.0, {"w": Layer("no", Y)})
    with pytest.raises(TypeError, match=r"^args\[2\]\[<flat index 0>\] is a str"):
        f(2.0, {"w": Layer(X, Y)}, Node("no", Y))
    with pytest.raises(TypeError, match=r"^kwargs\['scale'\]\[0\] is a str"):
        f(2.0, {"w": Layer(X, Y)}, scale=("no",))


# ------------------------------------------------------------- ravel_pytree

MIXED = {"w": np.arange(6.0).reshape(2, 3), "b": np.float32(1.5), "n": np.int32(4),
         "none": None, "p": Point(np.ones(2), np.float64(-2.0))}


def test_ravel_pytree_as_jax():
    jax.config.update("jax_enable_x64", True)
    from jax.flatten_util import ravel_pytree as jravel

    flat, unravel = ravel_pytree(MIXED)
    jflat, junravel = jravel(MIXED)
    assert flat.dtype == jflat.dtype == np.float64
    np.testing.assert_array_equal(flat, np.asarray(jflat))
    back, jback = unravel(flat * 2), junravel(jflat * 2)
    assert tu.tree_structure(back) == tu.tree_structure(MIXED)
    for b, jb in zip(tu.tree_leaves(back), jtu.tree_leaves(jback)):
        assert b.dtype == jb.dtype and b.shape == jb.shape
        np.testing.assert_array_equal(b, np.asarray(jb))


def test_ravel_pytree_of_no_leaves_and_bad_unravel_input():
    flat, unravel = ravel_pytree({"a": None, "b": ()})
    assert flat.shape == (0,) and unravel(flat) == {"a": None, "b": ()}
    flat, unravel = ravel_pytree((np.ones(2), np.float32(1.0)))
    with pytest.raises(ValueError, match="1-D array of 3 elements, got shape"):
        unravel(np.ones(4))
    with pytest.raises(TypeError, match="dtype float64 .* got int64"):
        unravel(np.ones(3, np.int64))


def test_ravel_pytree_under_jit_grad_vmap(backend):
    t = {"w": X, "b": Point(np.float64(2.0), Y)}
    flat = backend(rune.jit(lambda t: ravel_pytree(t)[0]))(t)
    np.testing.assert_array_equal(flat, np.concatenate([[2.0], Y, X]))

    g = backend(rune.grad(lambda t: rnp.sum(ravel_pytree(t)[0] ** 2)))(t)
    assert_same_tree(g, tu.tree_map(lambda x: 2 * x, t))

    _, unravel = ravel_pytree(t)
    loss = lambda v: rnp.sum(unravel(v)["w"] * unravel(v)["b"].y)  # noqa: E731
    gv = backend(rune.grad(loss))(flat)
    np.testing.assert_allclose(gv, np.concatenate([[0.0], X, Y]), rtol=1e-12)

    batched = {"w": np.stack([X, -X]), "b": Point(np.array([1.0, 2.0]), np.stack([Y, Y]))}
    out = backend(rune.vmap(lambda t: ravel_pytree(t)[0]))(batched)
    np.testing.assert_array_equal(out, [np.concatenate([[1.0], Y, X]),
                                        np.concatenate([[2.0], Y, -X])])
