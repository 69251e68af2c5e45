"""Policies for `rune.checkpoint` / `rune.remat` (`policy=`), as `jax.checkpoint_policies`:
which intermediates reverse mode keeps rather than recomputes."""

from ._src.ops.remat import (dots_saveable, dots_with_no_batch_dims_saveable,  # noqa: F401
                             everything_saveable, nothing_saveable, save_any_names_but_these,
                             save_only_these_names)
