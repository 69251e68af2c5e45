"""Restarted GMRES as Krylov library code writes it: Arnoldi with modified Gram-Schmidt in
lax.fori_loop, the basis updated with lax.dynamic_update_slice, the small least-squares
problem solved with jnp.linalg.lstsq, and vmap over right-hand sides."""
import jax
import jax.numpy as jnp
from jax import lax


def arnoldi(matvec, b, m):
    n = b.shape[0]
    beta = jnp.linalg.norm(b)
    V = jnp.zeros((m + 1, n)).at[0].set(b / beta)
    H = jnp.zeros((m + 1, m))

    def body(j, carry):
        V, H = carry
        w = matvec(V[j])

        def gs(i, wh):
            w, h = wh
            hij = jnp.where(i <= j, jnp.dot(V[i], w), 0.0)
            return w - hij * V[i], h.at[i].set(hij)

        w, h = lax.fori_loop(0, m, gs, (w, jnp.zeros(m + 1)))
        hn = jnp.linalg.norm(w)
        h = h.at[j + 1].set(hn)
        V = lax.dynamic_update_slice(V, (w / jnp.maximum(hn, 1e-300))[None, :], (j + 1, 0))
        H = lax.dynamic_update_slice(H, h[:, None], (0, j))
        return V, H

    V, H = lax.fori_loop(0, m, body, (V, H))
    return V, H, beta


def gmres(matvec, b, m=8, restarts=4):
    def restart(x, _):
        r = b - matvec(x)
        V, H, beta = arnoldi(matvec, r, m)
        e1 = jnp.zeros(m + 1).at[0].set(beta)
        y = jnp.linalg.lstsq(H, e1)[0]
        return x + V[:-1].T @ y, jnp.linalg.norm(b - matvec(x + V[:-1].T @ y))

    x, res = lax.scan(restart, jnp.zeros_like(b), None, length=restarts)
    return x, res


def main():
    n = 12
    A = jnp.eye(n) * 4.0 + jnp.diag(jnp.ones(n - 1), 1) - jnp.diag(jnp.ones(n - 1), -1)
    B = jnp.stack([jnp.sin(jnp.arange(n) * 0.3 + k) for k in range(3)])
    xs, res = jax.jit(jax.vmap(lambda b: gmres(lambda v: A @ v, b)))(B)
    assert jnp.allclose(xs @ A.T, B, atol=1e-8)
    return {"x": xs, "res_last": res[:, -1] < 1e-8}
