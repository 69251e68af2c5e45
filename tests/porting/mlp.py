"""The MLP tutorial: parameters from jax.nn.initializers in a class registered with
register_pytree_node_class, per-example gradients with vmap, jit-compiled SGD steps."""
import jax
import jax.numpy as jnp
from jax.tree_util import register_pytree_node_class


@register_pytree_node_class
class MLP:
    def __init__(self, layers):
        self.layers = layers

    def tree_flatten(self):
        return (self.layers,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __call__(self, x):
        for w, b in self.layers[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = self.layers[-1]
        return x @ w + b


def init_mlp(key, sizes):
    init_w = jax.nn.initializers.glorot_normal()
    keys = jax.random.split(key, len(sizes) - 1)
    return MLP([(init_w(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])])


def loss(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


@jax.jit
def sgd_step(model, x, y):
    l, g = jax.value_and_grad(loss)(model, x, y)
    return jax.tree_util.tree_map(lambda p, gp: p - 0.05 * gp, model, g), l


def main():
    key = jax.random.PRNGKey(42)
    model = init_mlp(key, [2, 16, 16, 1])
    x = jax.random.uniform(jax.random.PRNGKey(1), (64, 2), minval=-1, maxval=1)
    y = jnp.sin(3 * x[:, :1]) * x[:, 1:]
    losses = []
    for _ in range(30):
        model, l = sgd_step(model, x, y)
        losses.append(l)
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(model, x[:4, None], y[:4, None])
    assert losses[-1] < losses[0]
    return {"losses": jnp.stack(losses), "w0": model.layers[0][0],
            "per_example_b": per_example.layers[-1][1]}
