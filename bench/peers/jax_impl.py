"""The workloads in JAX, as its docs teach: jax.lax.scan and jax.lax.while_loop under
jax.vmap, jax.grad, jax.lax.custom_root and jax.checkpoint, all under jax.jit, float64.

Inputs are placed on the device once, outside the timed call; each call blocks until
its result is ready. Each factory builds a NEW jax.jit object of a new function.
"""

from __future__ import annotations

import jax
import jax.scipy.sparse.linalg
import numpy as np
import jax.numpy as jnp

import workloads as wl

jax.config.update("jax_enable_x64", True)

R = 0.999999
DT, DAMPING = 0.01, 0.5  # W7


def warm_up() -> None:
    """Pay the one-time costs of the process (backend start) outside any timing."""
    jax.jit(lambda x: x * 2.0)(jnp.ones(3)).block_until_ready()


def _ready(f, *args):
    args = [jnp.asarray(a) for a in args]
    return lambda: jax.block_until_ready(f(*args))


def _scan1(xs):
    return jax.lax.scan(lambda c, x: ((c * R + jnp.sin(x)),) * 2, 0.0, xs)


def _rnn(W, U, b, xs, h0):
    return jax.lax.scan(lambda h, x: ((jnp.tanh(W @ h + U @ x + b)),) * 2, h0, xs)


def _newton(a, max_steps):
    def one(a):
        def running(s):
            x, k = s
            return (k < max_steps) & ~(jnp.abs(x * x - a) <= 1e-12 * a)
        return jax.lax.while_loop(running, lambda s: ((s[0] + a / s[0]) / 2, s[1] + 1),
                                  (a, 0))[0]
    return jax.vmap(one)(a)


def w1(p):
    return _ready(jax.jit(_scan1), p.xs)


def _checked_scan1(xs):
    from jax.experimental import checkify

    def step(c, x):
        checkify.check(jnp.isfinite(c), "c = {c} is not finite", c=c)
        nxt = c * R + jnp.sin(x)
        return nxt, nxt

    return jax.lax.scan(step, 0.0, xs)


def w1c(p):
    from jax.experimental import checkify

    f = jax.jit(checkify.checkify(_checked_scan1))

    def run(xs):
        err, out = f(xs)
        err.throw()
        return out

    return _ready(run, p.xs)


def w2(p):
    return _ready(jax.jit(jax.grad(lambda xs: _scan1(xs)[0])), p.xs)


def w3(p):
    return _ready(jax.jit(_rnn), p.W, p.U, p.b, p.xs, p.h0)


def w3g(p):
    loss = lambda *a: jnp.sum(_rnn(*a)[0])
    return _ready(jax.jit(jax.grad(loss, argnums=(0, 1, 2))), p.W, p.U, p.b, p.xs, p.h0)


def w4(p):
    return _ready(jax.jit(lambda a: _newton(a, p.max_steps)), p.a)


def mandelbrot(p):
    def one(c):
        def running(s):
            z, k = s
            return ~(jnp.abs(z) > 2.0) & (k < p.max_steps)
        return jax.lax.while_loop(running, lambda s: (s[0] * s[0] + c, s[1] + 1), (0j * c, 0))[1]
    return _ready(jax.jit(jax.vmap(one)), p.c)


def heavy_tail(p):
    def one(a, x0):
        def running(s):
            x, k = s
            return ~(jnp.abs(a * jnp.exp(-x) - 1.0) <= p.tol) & (k < p.max_steps)
        return jax.lax.while_loop(running, lambda s: (s[0] - 1.0 + a * jnp.exp(-s[0]), s[1] + 1),
                                  (x0, 0))[0]
    return _ready(jax.jit(jax.vmap(one)), p.a, p.x0)


def w5(p):
    def loss(a):
        x = jax.lax.custom_root(lambda x: x * x - a, a,
                                lambda f, x0: _newton(a, p.max_steps),
                                lambda g, y: y / g(jnp.ones_like(y)))  # diagonal Jacobian
        return jnp.sum(x)
    return _ready(jax.jit(jax.grad(loss)), p.a)


def w5_unrolled(p):
    def loss(a):
        x = a
        for _ in range(60):
            x = (x + a / x) / 2
        return jnp.sum(x)
    return _ready(jax.jit(jax.grad(loss)), p.a)


def _deep(checkpoint):
    def loss(W, xs, c0):
        def step(c, x):
            return jnp.tanh(jnp.sin(W @ c + x))
        body = jax.checkpoint(step) if checkpoint else step
        return jnp.sum(jax.lax.scan(lambda c, x: (body(c, x), None), c0, xs)[0])
    return loss


def _recurrence(checkpoint, steps):
    def loss(W, b, c0):
        def step(c):
            return jnp.tanh(W @ c + b)
        body = jax.checkpoint(step) if checkpoint else step
        return jnp.sum(jax.lax.scan(lambda c, _: (body(c), None), c0, length=steps)[0])
    return loss


def _sqrt_blocks(t: int):
    """CKk in JAX, the usual manual scheme: a scan over about sqrt(t) blocks, each a
    jax.checkpoint'ed scan of t // blocks steps, so reverse mode keeps one carry a block
    and one block's carries at a time."""
    blocks = max(d for d in range(1, int(t ** 0.5) + 1) if t % d == 0)

    def run(step, c0):
        @jax.checkpoint
        def block(c, _):
            return jax.lax.scan(step, c, None, length=t // blocks)[0], None
        return jax.lax.scan(block, c0, None, length=blocks)[0]
    return run


def _cg(matvec, b):
    return jax.scipy.sparse.linalg.cg(matvec, b, tol=wl.IL_TOL, maxiter=50 * b.size)[0]


def _dense_solve(matvec, b):
    return jnp.linalg.solve(jax.jacfwd(matvec)(b), b)


def _implicit(name: str, p):
    tangent_solve = _dense_solve if name == "ILd" else _cg
    return wl.implicit_layer(jnp, _cg, lambda r, s: jax.lax.custom_root(
        r, jnp.zeros(p.n * p.n), lambda f, x0: s(), tangent_solve), p)


def _loss(name: str, p):
    """W6, W6r, RM, RMr, CK, CKk, IL, ILd: the function whose gradient is taken."""
    if name in ("IL", "ILd"):
        return _implicit(name, p)
    if name in ("CK", "CKk"):
        return wl.rollout(jnp, jax.lax.scan, p, _sqrt_blocks(p.t) if name == "CKk" else None)
    return _recurrence(name == "RMr", p.t) if name in ("RM", "RMr") else _deep(name == "W6r")


def _grad_of(name):
    def make(p):
        argnums, args = wl.gradient_args(name, p)
        return _ready(jax.jit(jax.grad(_loss(name, p), argnums=argnums)), *args)
    return make


def _pendulum(s0, xs):
    def step(s, x):
        n = s + DT * jnp.stack([s[1], x - jnp.sin(s[0]) - DAMPING * s[1]])
        return n, n[0]
    return jax.lax.scan(step, s0, xs)


def w7(p):
    return _ready(jax.jit(_pendulum), p.s0, p.xs)


def w_heat(p):
    def loop(u0):
        def step(u, _):
            inner = u[1:-1] + p.k * (u[:-2] - 2 * u[1:-1] + u[2:])
            return jnp.concatenate([u[:1], inner, u[-1:]]), None
        return jax.lax.scan(step, u0, length=p.steps)[0]
    return _ready(jax.jit(loop), p.u0)


def nls(p):
    return _ready(jax.jit(wl.nls(jnp, jax.lax.scan, p)), p.params)


def nls_grad(p):
    return _ready(jax.jit(jax.grad(wl.nls(jnp, jax.lax.scan, p))), p.params)


def kf(p):
    return _ready(jax.jit(wl.kalman(jnp, jnp.linalg.solve, jax.lax.scan)), p.F, p.Q, p.H,
                  p.R, p.zs, p.x0, p.P0)


def _spmv_loop(p):
    def loop(vals, rows, cols, x0, b):
        def step(x, _):
            return jnp.tanh(jnp.zeros(p.n).at[rows].add(vals * x[cols]) + b), None
        return jax.lax.scan(step, x0, length=p.steps)[0]
    return loop


def w8(p):
    return _ready(jax.jit(_spmv_loop(p)), p.vals, p.rows, p.cols, p.x0, p.b)


def w8g(p):
    loop = _spmv_loop(p)
    return _ready(jax.jit(jax.grad(lambda vals, *rest: jnp.sum(loop(vals, *rest)))),
                  p.vals, p.rows, p.cols, p.x0, p.b)


def _paths(p):
    def mean_final(mu, sigma):
        key = jax.random.PRNGKey(p.seed)

        def step(x, t):
            z = jax.random.normal(jax.random.fold_in(key, t), (p.paths,))
            return x + mu * x * p.dt + sigma * x * jnp.sqrt(p.dt) * z, None
        final = jax.lax.scan(step, jnp.ones(p.paths), jnp.arange(p.steps))[0]
        return jnp.mean(jnp.maximum(final - 1.0, 0.0))
    return mean_final


def w9(p):
    return _ready(jax.jit(_paths(p)), p.mu, p.sigma)


def w9g(p):
    f = jax.jit(jax.grad(_paths(p), argnums=(0, 1)))
    return lambda: np.array(jax.block_until_ready(f(p.mu, p.sigma)))


def w10(p):
    # three jitted functions: the three in one jax.jit hang in JAX 0.10.2 on this machine
    # (block_until_ready never returns; each alone takes a fraction of a second)
    eigh, solve, chol = (jax.jit(f) for f in (jnp.linalg.eigh, jnp.linalg.solve,
                                               jnp.linalg.cholesky))
    A, b = jnp.asarray(p.A), jnp.asarray(p.b)

    def run():
        w, v = eigh(A)
        return jax.block_until_ready((solve(A, b), chol(A), w, v * v))
    return run


def unrolled(p):
    def f(x):
        for i in range(p.steps):
            x = jnp.sin(x) * 0.99 + 0.01 * i
        return x

    return _ready(jax.jit(f), p.x)


def sum_tanh(p):
    return _ready(jax.jit(lambda x: jnp.sum(jnp.tanh(x))), p.x)


def softmax_train(p):
    train = wl.softmax_training(jnp, jax.nn.log_softmax, jax.value_and_grad, jax.lax.scan,
                                p.lr, p.steps)
    return _ready(jax.jit(train), p.W0, p.X, p.labels)


def log_softmax_scan(p):
    return _ready(jax.jit(wl.log_softmax_scan(jax.nn.log_softmax, jax.lax.scan, p.steps)),
                  p.z0)


def transposed_product(p):
    return _ready(jax.jit(lambda t, f: t.T @ f), p.T, p.F)


def matmul(p):
    return _ready(jax.jit(lambda a, b: a @ b), p.A, p.B)


def matrix_carry(p):
    return _ready(jax.jit(wl.matrix_carry(jnp, jax.lax.scan, p.steps)), p.W, p.C0)


def dispatch(p):
    return _ready(jax.jit(lambda x: x + 1), p.x)


def _eager(name):
    """jnp.<name> called outside jit on device arrays (two for add)."""
    def make(p):
        f = getattr(jnp, name)
        args = [jnp.asarray(a) for a in ((p.a, p.b) if name == "add" else (p.a,))]
        return lambda: jax.block_until_ready(f(*args))
    return make


def _sin_loss(x):  # Egrad's
    return jnp.sum(jnp.sin(x) * x)


def egrad(p):
    x = jnp.asarray(p.a)
    return lambda: jax.block_until_ready(jax.grad(_sin_loss)(x))  # eager: traced each call


def escan(p):
    xs = jnp.asarray(p.xs)
    return lambda: jax.block_until_ready(_scan1(xs))


def _mixed(x, s, d, n):
    return x * s + d["a"] - d["b"] * n


def dmix(p):
    f = jax.jit(_mixed, static_argnums=3)
    x, d = jnp.asarray(p.x), {k: jnp.asarray(v) for k, v in p.d.items()}
    return lambda: jax.block_until_ready(f(x, p.s, d, p.n))


def dmix_arrays(p):
    f = jax.jit(lambda x, s, a, b: _mixed(x, s, {"a": a, "b": b}, 3))
    return _ready(f, p.x, np.asarray(p.s), p.d["a"], p.d["b"])


IMPLS = {"FILL": lambda p: _ready(jax.jit(wl.fill_rows(jnp, jax.lax.fori_loop, p.rows)), p.x),
         "NLS": nls, "NLSg": nls_grad, "FT": lambda p: _ready(jax.jit(jnp.fft.fft), p.z),
         "W1": w1, "W1c": w1c, "W2": w2, "W3": w3, "W3g": w3g, "W4": w4, "W4s": w4, "W5": w5,
         "W6": _grad_of("W6"), "W6r": _grad_of("W6r"), "RM": _grad_of("RM"),
         "RMr": _grad_of("RMr"), "CK": _grad_of("CK"), "CKk": _grad_of("CKk"),
         "IL": _grad_of("IL"), "ILd": _grad_of("ILd"), "W7": w7, "W8": w8, "W8g": w8g, "W9": w9, "W9g": w9g,
         "W10": w10, "W10b": w10, "HS": w_heat, "HSat": w_heat, "HS32": w_heat, "KF": kf,
         "U": unrolled, "D": dispatch,
         **{f"E{name}{label}": _eager(name) for name in ("add", "sin", "sum")
            for label in ("1", "1k")},
         "Egrad": egrad, "Egrad-jit": lambda p: _ready(jax.jit(jax.grad(_sin_loss)), p.a),
         "Escan": escan, "Escan-jit": lambda p: _ready(jax.jit(_scan1), p.xs),
         "Dmix": dmix, "Dmix-arrays": dmix_arrays, "ST": sum_tanh, "SX": softmax_train,
         "LSM": log_softmax_scan,
         "MM": matmul, "MB": mandelbrot, "HT": heavy_tail,
         **{w.name: transposed_product for w in wl.WORKLOADS if w.group == "TF"},
         **{w.name: matrix_carry for w in wl.WORKLOADS if w.group == "MC"}}
UNROLLED = {"W5": w5_unrolled}


def kept_bytes(name: str, p) -> int:
    """Bytes of the residuals jax.vjp's pullback holds, not counting the inputs."""
    argnums, args = wl.gradient_args(name, p)
    k = len(argnums) if isinstance(argnums, tuple) else 1  # the leading arguments
    args, loss = [jnp.asarray(a) for a in args], _loss(name, p)
    _, pullback = jax.vjp(lambda *diff: loss(*diff, *args[k:]), *args[:k])
    return sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(pullback)
               if not any(leaf is a for a in args))
