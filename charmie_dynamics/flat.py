"""Many arrays as three: a kernel that needs some forty arrays takes them packed into one
int64 and one float64 buffer with a header of where each lies, and views them inside.

numba's dispatch checks the type of every array argument of a call, plain or in a tuple:
about 70 ns each (measured with numba 0.68 at load 4: a call with 45 arrays cost 3.2 us,
with 6 arrays 0.7 us), a fifth of the articulated-body algorithm's time on a 30-body
robot. :func:`flatten` copies arrays into the buffers once (a model's constants, a Data's
work arrays); ``header[k]`` is the k-th array's (offset, shape), its shape padded with 1
to ``DIMS`` axes. In a kernel, ``viewN(buffer, header, k)`` is the k-th array as an
N-dimensional C-contiguous view (a slice of the buffer given its shape by :func:`as_shape`:
no copy, a few ns each), so the kernels that take arrays are called with these views
unchanged. (numpy's ``as_strided`` makes the views for free but numba types them as of any
layout, which made the ABA's arithmetic about 3 us slower on Talos; numba's ``reshape``
calls a C helper that costs about 16 ns a view, 0.65 us of the evaluator's 40 views.) The
views trust the header: :func:`flatten` builds it with its buffers, and nothing else makes
one. A check per view (a raise where a view would end beyond its buffer) made numba 0.57
compile the inverse dynamics and its callees in 130 s instead of 79 s, measured.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .jit import ENABLED, kernel

DIMS = 5


def flatten(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    list[np.ndarray]]:
    """(header (k, 1 + DIMS) int64, the int64 buffer, the float64 buffer, each array's view
    in its buffer) of integer or float arrays of at most DIMS axes, their values copied."""
    header = np.ones((len(arrays), 1 + DIMS), dtype=np.int64)
    sizes = {True: 0, False: 0}               # integer?: the buffer's length so far
    for k, a in enumerate(arrays):
        if a.ndim > DIMS or a.dtype.kind not in "iuf":
            raise ValueError(f"flatten: array {k} of dtype {a.dtype} and {a.ndim} axes, "
                             f"expected integers or floats of at most {DIMS} axes")
        integer = a.dtype.kind in "iu"
        header[k, 0] = sizes[integer]
        header[k, 1:1 + a.ndim] = a.shape
        sizes[integer] += a.size
    ints, floats = np.empty(sizes[True], dtype=np.int64), np.empty(sizes[False])
    views = []
    for k, a in enumerate(arrays):
        buffer = ints if a.dtype.kind in "iu" else floats
        view = buffer[header[k, 0]:header[k, 0] + a.size].reshape(a.shape)
        view[...] = a
        views.append(view)
    return header, ints, floats, views


if ENABLED:
    from numba.core import cgutils, types
    from numba.core.errors import TypingError
    from numba.core.imputils import impl_ret_borrowed
    from numba.extending import intrinsic
    from numba.np.arrayobj import make_array, populate_array

    @intrinsic
    def as_shape(typingctx, array, shape):
        """``array`` (one axis, C-contiguous) seen with ``shape`` (a tuple of integers whose
        product is its length: the caller's promise, as the header's), C-contiguous; the
        view numba's ``reshape`` makes, without its C helper (kernel)."""
        if not (isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C"
                and isinstance(shape, types.UniTuple)
                and isinstance(shape.dtype, types.Integer)):
            raise TypingError(f"as_shape: got {array} and {shape}, expected a C-contiguous "
                              f"array of one axis and a tuple of integers")
        result = array.copy(ndim=shape.count, layout="C")     # read-only stays read-only

        def codegen(context, builder, signature, arguments):
            source = make_array(array)(context, builder, arguments[0])
            intp = context.get_value_type(types.intp)
            extend = builder.sext if shape.dtype.signed else builder.zext
            dims = [extend(d, intp) if d.type.width < intp.width else d
                    for d in cgutils.unpack_tuple(builder, arguments[1])]
            strides, step = [], source.itemsize
            for d in reversed(dims):
                strides.insert(0, step)
                step = builder.mul(step, d)
            view = make_array(result)(context, builder)
            populate_array(view, data=source.data, shape=dims, strides=strides,
                           itemsize=source.itemsize, meminfo=source.meminfo,
                           parent=source.parent)
            return impl_ret_borrowed(context, builder, result, view._getvalue())
        return result(array, shape), codegen
else:
    def as_shape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """``array`` seen with ``shape`` (plain Python: numpy's reshape)."""
        return array.reshape(shape)


@kernel(inline=True)
def view1(buffer, header, k):
    """The k-th array of ``buffer`` (module docstring), one axis (kernel)."""
    o = header[k, 0]
    return buffer[o:o + header[k, 1]]


@kernel(inline=True)
def view2(buffer, header, k):
    """The k-th array of ``buffer``, two axes (kernel)."""
    o, a, b = header[k, 0], header[k, 1], header[k, 2]
    return as_shape(buffer[o:o + a * b], (a, b))


@kernel(inline=True)
def view3(buffer, header, k):
    """The k-th array of ``buffer``, three axes (kernel)."""
    o, a, b, c = header[k, 0], header[k, 1], header[k, 2], header[k, 3]
    return as_shape(buffer[o:o + a * b * c], (a, b, c))


@kernel(inline=True)
def view4(buffer, header, k):
    """The k-th array of ``buffer``, four axes (kernel)."""
    o, a, b, c, d = header[k, 0], header[k, 1], header[k, 2], header[k, 3], header[k, 4]
    return as_shape(buffer[o:o + a * b * c * d], (a, b, c, d))


@kernel(inline=True)
def view5(buffer, header, k):
    """The k-th array of ``buffer``, five axes (kernel)."""
    o, a, b, c, d, e = (header[k, 0], header[k, 1], header[k, 2], header[k, 3], header[k, 4],
                        header[k, 5])
    return as_shape(buffer[o:o + a * b * c * d * e], (a, b, c, d, e))
