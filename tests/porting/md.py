"""Molecular dynamics: a Lennard-Jones energy over pairs with a mask, forces as -grad,
velocity Verlet steps in lax.scan, vmap over configurations."""
import jax
import jax.numpy as jnp
from jax import lax


def lj_energy(pos, sigma=1.0, eps=1.0):
    n = pos.shape[0]
    dr = pos[:, None, :] - pos[None, :, :]
    r2 = jnp.sum(dr ** 2, axis=-1)
    i, j = jnp.triu_indices(n, k=1)
    r2 = r2[i, j]
    inv6 = (sigma ** 2 / r2) ** 3
    return jnp.sum(4.0 * eps * (inv6 ** 2 - inv6))


def verlet(pos, vel, dt, steps):
    force = jax.grad(lambda p: -lj_energy(p))

    def step(state, _):
        pos, vel, f = state
        vel = vel + 0.5 * dt * f
        pos = pos + dt * vel
        f = force(pos)
        vel = vel + 0.5 * dt * f
        e = lj_energy(pos) + 0.5 * jnp.sum(vel ** 2)
        return (pos, vel, f), e

    (pos, vel, _), energies = lax.scan(step, (pos, vel, force(pos)), None, length=steps)
    return pos, energies


def main():
    grid = jnp.stack(jnp.meshgrid(jnp.arange(3.0), jnp.arange(3.0), indexing="ij"), -1)
    pos0 = grid.reshape(-1, 2) * 1.2
    batch = jnp.stack([pos0, pos0 * 1.01, pos0 * 0.99])
    energies = jax.vmap(lj_energy)(batch)
    _, traj = jax.jit(lambda p: verlet(p, jnp.zeros_like(p), 0.002, 200))(pos0)
    assert jnp.max(traj) - jnp.min(traj) < 1e-3 * jnp.abs(traj[0])  # energy is conserved
    return {"energies": energies, "traj": traj[::50]}
