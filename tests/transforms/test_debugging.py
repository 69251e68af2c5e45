"""debug.print and debug.callback run when the program runs (eagerly, compiled, in each
loop step, per lane under vmap, in the forward pass under grad), and disable_jit runs
jit, loops and cond as Python with NumPy values."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.backend import stats
from interrupts import sigint_as_from_a_terminal
from loop_helpers import PATHS, on

XS = np.array([1.0, 2.0, 3.0])


def running_product(xs):
    def step(c, x):
        rune.debug.print("c={} x={}", c, x)
        return c * x, None
    return rune.scan(step, np.float64(1.0), xs)[0]


STEPS = "c=1.0 x=1.0\nc=1.0 x=2.0\nc=2.0 x=3.0\n"


@pytest.mark.parametrize("how", ["eager", "jit", "grad", "jit_grad"])
def test_print_in_a_scan_step_prints_each_step_in_order(how, capsys):
    fn = {"eager": running_product, "jit": rune.jit(running_product),
          "grad": rune.grad(running_product),
          "jit_grad": rune.jit(rune.grad(running_product))}[how]
    out = fn(XS)
    assert capsys.readouterr().out == STEPS  # grad: the forward pass only
    want = [6.0, 3.0, 2.0] if "grad" in how else 6.0
    np.testing.assert_allclose(out, want)


def test_print_outside_any_trace_prints_now(capsys):
    rune.debug.print("{a} and {b:.2f}", a=np.arange(2), b=np.float64(1 / 3))
    assert capsys.readouterr().out == "[0 1] and 0.33\n"


def test_print_under_vmap_prints_each_lane(capsys):
    rune.jit(rune.vmap(lambda x: (rune.debug.print("lane {}", x), x * 2)[1]))(XS)
    assert capsys.readouterr().out == "lane 1.0\nlane 2.0\nlane 3.0\n"
    rune.jit(rune.vmap(running_product))(np.stack([XS, 2 * XS]))
    lines = capsys.readouterr().out.splitlines()  # the lanes step together
    assert lines == ["c=1.0 x=1.0", "c=1.0 x=2.0", "c=1.0 x=2.0", "c=2.0 x=4.0",
                     "c=2.0 x=3.0", "c=8.0 x=6.0"]


def test_print_in_an_iterate_and_a_cond(capsys):
    def newton(a):
        def body(x):
            rune.debug.print("x={:.4f}", x)
            return (x + a / x) / 2
        return rune.iterate(body, a, until=lambda x: abs(x * x - a) < 1e-9, max_steps=50)

    assert np.isclose(rune.jit(newton)(2.0), np.sqrt(2.0))
    assert capsys.readouterr().out == "x=2.0000\nx=1.5000\nx=1.4167\nx=1.4142\n"
    roots = rune.jit(rune.vmap(newton))(np.array([2.0, 4.0]))
    np.testing.assert_allclose(roots, [np.sqrt(2.0), 2.0])
    assert sorted(capsys.readouterr().out.split()) == sorted(
        "x=2.0000 x=1.5000 x=1.4167 x=1.4142 x=4.0000 x=2.5000 x=2.0500 x=2.0006 "
        "x=2.0000".split())
    pick = rune.jit(lambda x: rune.cond(x > 0, lambda v: (rune.debug.print("pos"), v)[1],
                                        lambda v: (rune.debug.print("neg"), -v)[1], x))
    assert pick(-2.0) == 2.0 and pick(3.0) == 3.0
    assert capsys.readouterr().out == "neg\npos\n"


def test_two_identical_prints_both_print(capsys):
    f = rune.jit(lambda x: (rune.debug.print("{}", x), rune.debug.print("{}", x), x)[2])
    f(np.float64(5.0))
    assert capsys.readouterr().out == "5.0\n5.0\n"


def test_a_callback_that_raises_raises_from_the_compiled_call():
    class Stop(Exception):
        pass

    def check(v):
        if v.sum() > 4:
            raise Stop(f"too big: {v.sum()}")

    def f(xs):
        def step(c, x):
            rune.debug.callback(check, c)
            return c + x, None
        return rune.scan(step, np.zeros(2), np.ones((5, 2)))[0]

    with pytest.raises(Stop, match="too big: 6.0") as err:
        rune.jit(f)(XS)
    assert any(frame.name == "check" for frame in err.traceback)  # the callback's own
    np.testing.assert_array_equal(rune.jit(lambda x: x + 1)(np.ones(2)), [2.0, 2.0])  # next


def test_callbacks_get_the_values_with_their_pytree():
    seen = []
    rune.jit(lambda d: (rune.debug.callback(lambda t, k=None: seen.append((t, k)),
                                            d, k=d["a"] * 2), d["a"])[1])({"a": XS, "b": 1.0})
    (tree_arg, k), = seen
    assert set(tree_arg) == {"a", "b"} and np.array_equal(k, 2 * XS)


def test_a_program_that_calls_back_is_not_cached_on_disk(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, rune_jit as rune
        from rune_jit._src.backend import stats
        f = rune.jit(lambda x: (rune.debug.print("x={}", x), x + 1)[1])
        print(f(np.float64(1.0)), stats["loaded"])
    """)
    env = {**os.environ, "RUNE_JIT_CACHE_DIR": str(tmp_path), "RUNE_JIT_SAVE_TRACES": "1"}
    for _ in range(2):  # the second process must compile again, and print
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True).stdout
        assert out == "x=1.0\n2.0 0\n", out


def test_disable_jit_runs_steps_as_python(capsys):
    def f(xs):
        def step(c, x):
            print("step", type(c).__name__, c)  # Python's print: at every step
            if x > 1.5:  # Python's if on a value
                c = c + 1.0
            return c * x, c
        return rune.scan(step, np.float64(1.0), xs)

    with pytest.raises(rune.ConcretizationError):
        rune.jit(f)(XS)
    capsys.readouterr()  # what the trace printed
    with rune.disable_jit():
        total, ys = rune.jit(f)(XS)
    assert capsys.readouterr().out == "step float64 1.0\nstep ndarray 1.0\nstep ndarray 4.0\n"
    assert total == 15.0 and ys.tolist() == [1.0, 2.0, 5.0]


EXAMPLES = [
    (lambda xs: rune.scan(lambda c, x: (c * x + 1.0, c), 0.5, xs, reverse=True), (XS,)),
    (lambda a: rune.iterate(lambda x: (x + a / x) / 2, a, until=lambda x: rnp.abs(
        x * x - a) < 1e-12 * a, max_steps=60), (np.float64(7.0),)),
    (lambda x: rune.cond(x[0] > 0, lambda v: rnp.sin(v), lambda v: v * 2, x), (XS,)),
    (lambda x: rune.fori_loop(0, 4, lambda i, c: c * x + i, 1.0), (np.float64(0.5),)),
    (lambda x: rune.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x),
                               (0, np.float64(1.0)))[1], (np.float64(1.1),)),
]


@pytest.mark.parametrize("fn, args", EXAMPLES)
def test_disable_jit_equals_jit(fn, args):
    want = rune.jit(fn)(*args)
    with rune.disable_jit():
        got = rune.jit(fn)(*args)
    for w, o in zip(want if isinstance(want, tuple) else [want],
                    got if isinstance(got, tuple) else [got]):
        np.testing.assert_allclose(o, w, rtol=1e-13)


def test_transformations_still_trace_under_disable_jit():
    f = lambda xs: rune.scan(lambda c, x: (c * x, None), np.float64(1.0), xs)[0]  # noqa: E731
    with rune.disable_jit():
        np.testing.assert_array_equal(rune.grad(f)(XS), [6.0, 3.0, 2.0])
        np.testing.assert_array_equal(rune.vmap(f)(np.stack([XS, XS])), [6.0, 6.0])


def test_disable_jit_reaches_a_function_with_a_native_entry():
    f = rune.jit(lambda x: x * 2.0)
    f(XS), f(XS)  # compiled, its native entry installed
    with rune.disable_jit():
        compiled = stats["compiled"]
        assert f(XS).tolist() == [2.0, 4.0, 6.0]
        with rune.disable_jit(False):
            pass
    assert stats["compiled"] == compiled


def test_disable_jit_from_the_environment():
    script = ("import numpy as np, rune_jit as rune\n"
              "def step(c, x):\n    print(float(c))\n    return c + x, None\n"
              "rune.jit(lambda xs: rune.scan(step, 0.0, xs)[0])(np.ones(2))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "RUNE_JIT_DISABLE_JIT": "1"}, check=True).stdout
    assert out == "0.0\n1.0\n"


INTERRUPTED = textwrap.dedent("""
    import os, signal, threading
    import numpy as np, rune_jit as rune, rune_jit.numpy as rnp

    def arm():  # runs when the compiled program starts (after it is compiled)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()

    def armed(loop):
        return lambda x: (rune.debug.callback(arm), loop(x))[1]

    endless = dict(until=lambda c: c[0] < 0, max_steps=10**15)
    step = lambda c: (c[0] + 1, rnp.sin(c[1]))
    programs = {
        "iterate": (armed(lambda x: rune.iterate(step, (np.int64(0), x), **endless)[1]), 0.5),
        "scan": (armed(lambda x: rune.scan(lambda c, _: (rnp.sin(c) + 0.1, None), x, None,
                                           length=10**15)[0]), 0.5),
        "vmapped iterate": (lambda x: (rune.debug.callback(arm), rune.vmap(
            lambda a: rune.iterate(step, (np.int64(0), a), **endless)[1])(x))[1],
            np.linspace(0.0, 1.0, 64)),
    }
    for name, (fn, arg) in programs.items():
        try:
            rune.jit(fn)(arg)
        except KeyboardInterrupt:
            print(name, "interrupted")
    print(rune.jit(lambda x: x + 1.0)(1.0))  # the next call works
""")


def test_ctrl_c_stops_compiled_loops():
    out = subprocess.run([sys.executable, "-c", INTERRUPTED], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "RUNE_JIT_CACHE": "0"},
                         preexec_fn=sigint_as_from_a_terminal)
    assert out.stdout == ("iterate interrupted\nscan interrupted\nvmapped iterate "
                          "interrupted\n2.0\n"), out.stderr[-2000:]


def test_compile_log_names_each_stage_and_why_a_call_recompiles(caplog, monkeypatch):
    monkeypatch.setenv("RUNE_JIT_CACHE", "0")
    rune.compile_log.enable()
    try:
        with caplog.at_level("INFO", logger="rune_jit.compiles"):
            f = rune.jit(lambda x, y: x * y)
            f(np.ones(3), 2.0)
            f(np.ones(3), 2.0)  # no log: the program is there
            f(np.ones(4, np.float32), 2.0)
    finally:
        rune.compile_log.enable(False)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0].startswith("jit(<lambda>) for args[0]: float64[3], args[1]: float64[] "
                               "(a weak Python number): traced + compiled in ")
    for stage in ("trace", "passes", "lowering", "LLVM optimize", "LLVM codegen", "load"):
        assert f"{stage} " in lines[0], (stage, lines[0])
    assert lines[1] == "jit(<lambda>): recompiling: args[0] changed from float64[3] to float32[4]"


def test_an_unrolled_python_loop_warns_once_naming_scan():
    """On arrays too big to be carried as folded layers (ops/repeated_layers.py): its
    elementwise layers stay unrolled, fused into one loop."""
    def unrolled(x):
        for _ in range(200):
            x = rnp.sin(x) * 1.5
        return x

    f = rune.jit(unrolled)
    with pytest.warns(UserWarning, match=r"transforms/test_debugging.py:\d+ \(unrolled\) was traced 400 "
                                         r"times.*rune_jit.scan") as seen:
        f(np.ones(200))
    assert seen[0].filename == __file__  # the warning points at the user's call
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(np.ones(300))  # once per line


def test_lower_reports_what_a_program_costs_to_compile():
    cost = rune.jit(lambda x: rune.scan(lambda c, r: (c * r + 1.0, None), 0.0, x)[0]).lower(
        np.ones(5)).cost()
    assert cost["equations"] >= 3 and cost["llvm_instructions"] > cost["equations"]


@pytest.mark.parametrize("path", PATHS)
def test_print_of_a_row_stays_in_its_step_when_fission_maps_the_rows(path, monkeypatch, capsys):
    """Regression: scan fission mapped the step's work on rows (a sin) over all rows before
    the loop, and took a print of a row with it: every row printed before any carry."""
    def step(c, x):
        s = rnp.sin(x)
        rune.debug.print("row {}", s)
        rune.debug.print("carry {}", c)
        return c + s, None

    on(path, lambda xs: rune.scan(step, 0.0, xs)[0], monkeypatch)(np.array([1.0, 2.0]))
    assert capsys.readouterr().out.split("\n")[:4] == [
        f"row {np.sin(1.0)}", "carry 0.0", f"row {np.sin(2.0)}", f"carry {np.sin(1.0)}"]
