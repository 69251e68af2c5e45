"""Properties of random straight-line programs (tests/programs.py) of 15+ operations
over mixed shapes, each run twice from the same data: with NumPy itself (the
reference) and with rune_jit.numpy inside rune_jit's transformations.

A failing example prints its program op by op and the input seed;
`make_inputs(prog, seed)` rebuilds the inputs.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, find, given, settings
from hypothesis import strategies as st
from programs import FAMILIES, OPS, Program, make_inputs, programs

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.interpret import eval_region
from rune_jit._src.ir import verify

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
seeds = st.integers(0, 2**32 - 1)
# Programs that mostly move data around: their derivatives are the transposes of
# broadcasts, slices, pads, permutations and joins, and ties of max over copies.
LAYOUT = tuple(tuple(FAMILIES[f]) for f in ("unary", "shape", "reduce", "index", "join"))

# Comparisons between two runs whose rounding may differ (batched against
# unbatched, say) are only meaningful away from ties that rounding can break.
ROUNDING_TIE = 1e-9
# check_grads steps the inputs by 1e-4 along a normal direction; its central
# differences are only meaningful when that step stays on one side of every kink.
FD_KINK_MARGIN = 1e-2


def assert_values_close(got, want, prog: Program, rtol: float):
    assert len(got) == len(want) == len(prog.ops)
    for i, (g, w) in enumerate(zip(got, want), prog.num_inputs):
        where = f"v{i} = {prog.ops[i - prog.num_inputs]}"
        assert np.shape(g) == np.shape(w), f"{where}: shape {np.shape(g)}, NumPy {np.shape(w)}"
        assert np.asarray(g).dtype == np.float64, f"{where}: dtype {np.asarray(g).dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * prog.bounds[i], err_msg=where)


def assert_trees_close(got, want, rtol: float):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.shape(g) == np.shape(w), f"leaf {k}: shape {np.shape(g)}, want {np.shape(w)}"
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, err_msg=f"leaf {k}")


@st.composite
def batches(draw, prog: Program):
    """(in_axes, batch size, input seed); at least one input is mapped."""
    axes = [draw(st.one_of(st.none(), st.integers(-len(s) - 1, len(s))))
            for s in prog.input_shapes]
    if all(a is None for a in axes):
        axes[draw(st.integers(0, len(axes) - 1))] = 0
    return tuple(axes), draw(st.integers(1, 3)), draw(seeds)


def batched_inputs(prog: Program, in_axes, size: int, seed: int):
    """(the arguments of the mapped call, the arguments of each example)."""
    examples = [make_inputs(prog, seed + b) for b in range(size)]
    args = []
    for k, axis in enumerate(in_axes):
        if axis is None:
            args.append(examples[0][k])
            for ex in examples:
                ex[k] = examples[0][k]
        else:
            args.append(np.stack([ex[k] for ex in examples], axis=axis))
    return args, examples


def diff_all(prog: Program):
    return rune.grad(prog.scalar(rnp), argnums=tuple(range(prog.num_inputs)))


@pytest.mark.parametrize("name", [spec.name for spec in OPS])
def test_every_op_of_the_table_is_generated(name):
    prog = find(programs(), lambda p: any(op.name == name for op in p.ops),
                settings=settings(max_examples=1000, derandomize=True, database=None,
                                  phases=[Phase.generate]))
    assert len(prog.ops) >= 15


# The heaviest properties run a fixed sample of their examples in the quick run and all
# of them in the slow one (CI runs both): `examples` is the number a run draws.
EXAMPLES = [pytest.param(15, id="sample"),
            pytest.param(PROPERTY.max_examples, id="whole", marks=pytest.mark.slow)]
# for the properties whose examples each take a second or more to compile (per-example
# gradients: the quick run's 5 minutes, issue 32)
FEW_EXAMPLES = [pytest.param(6, id="sample"), EXAMPLES[1]]


@pytest.mark.parametrize("examples", EXAMPLES)
def test_ir_verifies_and_interprets_as_numpy(backend, examples):
    @settings(PROPERTY, max_examples=examples)
    @given(prog=programs(), seed=seeds)
    def check(prog, seed):
        inputs = make_inputs(prog, seed)
        assume(prog.kink_distance(inputs) > ROUNDING_TIE)
        want = prog.values(np)(*inputs)
        region = verify(rune.make_ir(prog.values(rnp))(*inputs))
        assert len(region.params) == prog.num_inputs
        assert_values_close(eval_region(region, inputs), want, prog, rtol=1e-12)
        assert_values_close(backend(prog.values(rnp))(*inputs), want, prog, rtol=1e-12)
    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_check_grads_forward_and_reverse(examples):
    @settings(PROPERTY, max_examples=examples)
    @given(prog=programs(), seed=seeds)
    def check(prog, seed):
        inputs = make_inputs(prog, seed)
        assume(prog.kink_distance(inputs) > FD_KINK_MARGIN)
        rune.check_grads(prog.scalar(rnp), *inputs, modes=("fwd", "rev"))
        region = verify(rune.make_ir(diff_all(prog))(*inputs))
        assert_trees_close(eval_region(region, inputs), diff_all(prog)(*inputs), rtol=1e-12)
    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_check_grads_of_layout_programs(examples):
    @settings(PROPERTY, max_examples=examples)
    @given(prog=programs(families=LAYOUT), seed=seeds)
    def check(prog, seed):
        inputs = make_inputs(prog, seed)
        assume(prog.kink_distance(inputs) > FD_KINK_MARGIN)
        rune.check_grads(prog.scalar(rnp), *inputs, modes=("fwd", "rev"))
    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_vmap_equals_a_loop_over_the_batch(backend, examples):
    @settings(PROPERTY, max_examples=examples)
    @given(data=st.data(), prog=programs(), out_axis=st.sampled_from([0, -1]))
    def check(data, prog, out_axis):
        in_axes, size, seed = data.draw(batches(prog), label="in_axes, size, seed")
        args, examples = batched_inputs(prog, in_axes, size, seed)
        assume(all(prog.kink_distance(ex) > ROUNDING_TIE for ex in examples))
        mapped = rune.vmap(prog.values(rnp), in_axes=in_axes, out_axes=out_axis)
        verify(rune.make_ir(mapped)(*args))
        per_example = [prog.values(np)(*ex) for ex in examples]
        want = [np.stack(vals, axis=out_axis) for vals in zip(*per_example)]
        assert_trees_close(backend(mapped)(*args), want, rtol=1e-12)
    check()


@pytest.mark.parametrize("examples", FEW_EXAMPLES)
def test_per_example_gradients_equal_a_loop_of_grad(backend, examples):
    @settings(PROPERTY, max_examples=examples)
    @given(data=st.data(), prog=programs())
    def check(data, prog):
        in_axes, size, seed = data.draw(batches(prog), label="in_axes, size, seed")
        args, examples = batched_inputs(prog, in_axes, size, seed)
        assume(all(prog.kink_distance(ex) > ROUNDING_TIE for ex in examples))
        per_example = rune.vmap(diff_all(prog), in_axes=in_axes)
        verify(rune.make_ir(per_example)(*args))
        loop = [diff_all(prog)(*ex) for ex in examples]
        want = [np.stack(gs) for gs in zip(*loop)]
        assert_trees_close(backend(per_example)(*args), want, rtol=1e-10)
    check()
