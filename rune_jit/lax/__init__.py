"""rune_jit.lax: JAX's lax operations with JAX's signatures, over rune_jit's primitives.

>>> import numpy as np, rune_jit.lax as lax
>>> print(lax.cumsum(np.array([1.0, 2.0, 3.0])))
[1. 3. 6.]
"""

from .._src.lax.contractions import Precision, dot, dot_general
from .._src.lax.convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,
                                    conv_general_dilated, conv_general_permutations,
                                    conv_general_shape_tuple, conv_shape_tuple,
                                    conv_transpose, conv_transpose_shape_tuple,
                                    conv_with_general_padding)
from .._src.lax.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum
from .._src.lax.gathers import (GatherDimensionNumbers, GatherScatterMode,
                                ScatterDimensionNumbers, gather, scatter, scatter_add,
                                scatter_max, scatter_min, scatter_mul)
from .._src.lax.reductions import (argmax, argmin, reduce, reduce_and, reduce_max,
                                   reduce_min, reduce_or, reduce_prod, reduce_sum)
from .._src.lax.sorting import approx_max_k, approx_min_k, sort, sort_key_val, top_k
from .._src.lax.windows import padtype_to_pads, reduce_window

__all__ = ["approx_max_k", "approx_min_k", "argmax", "argmin", "conv",
           "conv_dimension_numbers", "conv_general_dilated", "conv_general_permutations",
           "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose",
           "conv_transpose_shape_tuple", "conv_with_general_padding",
           "ConvDimensionNumbers", "cumlogsumexp", "cummax", "cummin", "cumprod",
           "cumsum", "dot", "dot_general", "gather", "GatherDimensionNumbers",
           "GatherScatterMode", "padtype_to_pads", "Precision", "reduce", "reduce_and",
           "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "reduce_sum",
           "reduce_window", "scatter", "scatter_add", "scatter_max", "scatter_min",
           "scatter_mul", "ScatterDimensionNumbers", "sort", "sort_key_val", "top_k"]
