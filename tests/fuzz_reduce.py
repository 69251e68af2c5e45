"""A small test-case reducer for the fuzzer's programs (a tool, not a test).

    python tests/fuzz_reduce.py program.py 'MARKER' [--also 'MORE'] [--fork] [--timeout 60]

`program.py` is a standalone script (`python tests/fuzz_programs.py SEED` writes
one) that shows the failure; MARKER is text its output (stdout + stderr, with
the exit status as `exit=N`, a signal as `exit=-N`) contains while it fails.
The reducer deletes statements, replaces calls and operators by one of their
operands, drops tuple elements and simplifies literals, keeping each change
after which a fresh `python` process running the script still prints MARKER
(a crash only kills that process), until no change helps. It prints the
reduced script. With --fork, candidates run in forked children of the reducer
instead, which has imported rune_jit once (much faster).
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import subprocess
import sys
import tempfile


FORK = False  # --fork: run candidates in forked children of this process (rune_jit imported once)


def run_forked(source: str, timeout: float) -> str:
    import select
    import signal
    import time

    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        code = 0
        try:
            exec(compile(source, "<candidate>", "exec"), {"__name__": "__main__"})
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(w)
    out, deadline = [], time.monotonic() + timeout
    with os.fdopen(r, "rb", buffering=0) as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "TIMEOUT"
            data = pipe.read(65536)
            if not data:
                break
            out.append(data)
    _, status = os.waitpid(pid, 0)
    rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return b"".join(out).decode(errors="replace") + f"\nexit={rc}"


def run(source: str, timeout: float) -> str:
    if FORK:
        return run_forked(source, timeout)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
        path = f.name
    try:
        p = subprocess.run([sys.executable, path], capture_output=True, text=True,
                           timeout=timeout, env={**os.environ, "RUNE_JIT_VERIFY": "1"})
        return p.stdout + p.stderr + f"\nexit={p.returncode}"
    except subprocess.TimeoutExpired:
        return "TIMEOUT"
    finally:
        os.unlink(path)


def bodies(tree: ast.AST):
    """Every statement list in the tree, as (node, field name)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse"):
            seq = getattr(node, name, None)
            if isinstance(seq, list) and seq and isinstance(seq[0], ast.stmt):
                yield node, name


def expressions(tree: ast.AST):
    for node in ast.walk(tree):
        for fname, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                yield node, fname, None, value
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.expr):
                        yield node, fname, i, v


def simpler(e: ast.expr) -> list[ast.expr]:
    out: list[ast.expr] = []
    if isinstance(e, ast.Call):
        out += [a for a in e.args if not isinstance(a, ast.Starred)]
        if isinstance(e.func, ast.Attribute) and e.func.attr in ("astype", "reshape", "sum",
                                                                   "max"):
            out.append(e.func.value)
        kws = [k for k in e.keywords]
        for i in range(len(kws)):
            c = copy.deepcopy(e)
            del c.keywords[i]
            out.append(c)
    elif isinstance(e, ast.BinOp):
        out += [e.left, e.right]
    elif isinstance(e, ast.UnaryOp):
        out.append(e.operand)
    elif isinstance(e, ast.Subscript):
        out.append(e.value)
    elif isinstance(e, ast.Tuple) and len(e.elts) > 1:
        for i in range(len(e.elts)):
            c = copy.deepcopy(e)
            del c.elts[i]
            out.append(c)
    elif isinstance(e, ast.Constant) and isinstance(e.value, float) and e.value not in (0.0, 1.0):
        out += [ast.Constant(0.0), ast.Constant(1.0)]
    elif isinstance(e, ast.Attribute) and e.attr == "T":
        out.append(e.value)
    return out


def candidates(tree: ast.Module):
    """Trees one step smaller than `tree`, biggest steps first."""
    n_bodies = list(bodies(tree))
    for bi in range(len(n_bodies)):
        node, name = n_bodies[bi]
        for si in range(len(getattr(node, name))):
            c = copy.deepcopy(tree)
            cnode, cname = list(bodies(c))[bi]
            seq = getattr(cnode, cname)
            if len(seq) == 1:
                continue
            del seq[si]
            yield c
    n_exprs = len(list(expressions(tree)))
    for ei in range(n_exprs):
        _, _, _, e = list(expressions(tree))[ei]
        for k in range(len(simpler(e))):
            c = copy.deepcopy(tree)
            parent, fname, idx, ce = list(expressions(c))[ei]
            repl = simpler(ce)[k]
            if idx is None:
                setattr(parent, fname, repl)
            else:
                getattr(parent, fname)[idx] = repl
            yield c


def shows(output: str, markers) -> bool:
    return all(m in output for m in ([markers] if isinstance(markers, str) else markers))


def reduce(source: str, marker, timeout: float = 60.0, verbose: bool = True) -> str:
    """`marker`: a string, or strings the output must all contain."""
    assert shows(run(source, timeout), marker), "the script does not show the marker at first"
    tree = ast.parse(source)
    progress = True
    while progress:
        progress = False
        for cand in candidates(tree):
            try:
                text = ast.unparse(ast.fix_missing_locations(cand))
            except Exception:  # noqa: BLE001
                continue
            if len(text) >= len(ast.unparse(tree)):
                continue
            if shows(run(text, timeout), marker):
                tree = ast.parse(text)
                progress = True
                if verbose:
                    print(f"-- {len(text)} chars", file=sys.stderr)
                break
    return ast.unparse(tree)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("script")
    ap.add_argument("marker")
    ap.add_argument("--also", action="append", default=[],
                    help="more text the output must contain too (repeatable)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--fork", action="store_true",
                    help="run candidates in forked children (faster: rune_jit is imported "
                         "once; a crash still only kills the child)")
    ns = ap.parse_args()
    if ns.fork:
        os.environ.setdefault("RUNE_JIT_VERIFY", "1")
        import rune_jit  # noqa: F401  (imported before the forks)
        FORK = True
    print(reduce(open(ns.script).read(), [ns.marker, *ns.also], ns.timeout))
