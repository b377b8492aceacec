"""A structured Hessian as one dense matrix, in ``destructure``'s order, and back.

``autodiff.hessian(loss)(model)`` gives blocks in the model's structure
(``h.W1.W2`` has shape ``W1.shape + W2.shape``).  For ``numpy.linalg.eigvalsh``
and friends one wants the ``(n, n)`` matrix whose rows and columns follow
``destructure(model)``'s flat vector: every distinct trainable array once, in
traversal order.  Both directions are differentiable.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff._for_traversal import node_of
from autodiff.extend import value_of

from ._collect import trainables
from ._functor import isleaf
from ._trainable import isnumeric
from ._walks import ExcludeWalk, Expand, FlattenWalk, execute, split

__all__ = ["hessian_to_dense", "hessian_from_dense"]


def hessian_to_dense(h, model):
    """The ``(n, n)`` matrix of the structured Hessian ``h``, rows and columns in ``destructure(model)``'s order.

    ``h`` is ``autodiff.hessian(f)(model)`` for a scalar ``f``.  A ``None`` block
    is zero.  Entries at several positions of a tied array are added (as for
    gradients, ``design.md`` section 3); fields that ``destructure`` leaves out
    (non-trainable ones, float scalars) are left out here too.

    >>> import autodiff
    >>> model = {"w": np.array([1.0, 2.0]), "b": np.array([3.0]), "n": 4}
    >>> f = lambda m: (m["w"] ** 2).sum() * m["b"][0]
    >>> hessian_to_dense(autodiff.hessian(f)(model), model)
    array([[6., 0., 2.],
           [0., 6., 4.],
           [2., 4., 0.]])
    """
    arrays = trainables(model)
    dtype = np.result_type(*[value_of(a).dtype for a in arrays]) if arrays else np.dtype(np.float64)
    if not arrays:
        return np.zeros((0, 0), dtype)
    rows = _by_array(model, h)
    dense_rows = []
    for a in arrays:
        columns = [(path, _by_array(model, entry)) for path, entry in rows.get(id(a), [])]
        blocks = [_block(a, b, columns, dtype) for b in arrays]
        dense_rows.append(anp.concatenate(blocks, axis=1))
    return anp.concatenate(dense_rows, axis=0)


def _by_array(model, tree):
    """``{id(array): [(path, entry), ...]}``: ``tree``'s entry at every position of each float array of ``model``."""
    found = {}

    def collect(path, leaf, entry):
        if entry is not None and isnumeric(leaf):
            found.setdefault(id(leaf), []).append((path, entry))

    # a float field is a leaf of the model whose entry in the Hessian is a whole row: stop there, and skip it
    execute(ExcludeWalk(FlattenWalk(), collect, lambda x: isnumeric(x) or isleaf(x)), model, tree)
    return found


def _block(a, b, columns, dtype):
    """Block ``(a.size, b.size)``: the sum of the entries for ``a`` (rows) and ``b`` (columns)."""
    a_shape, b_shape = value_of(a).shape, value_of(b).shape
    total = np.zeros((value_of(a).size, value_of(b).size), dtype)
    for row_path, found in columns:
        for col_path, entry in found.get(id(b), []):
            got = np.shape(value_of(entry))
            if got != a_shape + b_shape:
                raise ValueError(
                    f"hessian_to_dense: the block at row {row_path}, column {col_path} has shape {got}, "
                    f"but the parameters there have shapes {a_shape} and {b_shape}, so it should be "
                    f"{a_shape + b_shape}; pass autodiff.hessian(f)(model) for this same model"
                )
            total = total + anp.reshape(entry, total.shape)
    return total


def hessian_from_dense(matrix, model):
    """The structured Hessian of ``model`` from an ``(n, n)`` matrix in ``destructure(model)``'s order.

    The inverse of :func:`hessian_to_dense`, in ``autodiff.hessian``'s form:
    the model's structure outside and inside (a ``Tangent`` for a dataclass),
    each block at a tied array's first trainable position and ``None`` at its
    other positions, at non-trainable fields and at non-float leaves.

    >>> model = {"w": np.array([1.0, 2.0]), "n": 4}
    >>> h = hessian_from_dense(np.array([[1.0, 2.0], [2.0, 5.0]]), model)
    >>> h["w"]["w"], h["n"]
    (array([[1., 2.],
           [2., 5.]]), None)
    """
    found = trainables(model, path=True)
    n = sum(value_of(a).size for _, a in found)
    if anp.shape(matrix) != (n, n):
        raise ValueError(
            f"hessian_from_dense: got a matrix of shape {anp.shape(matrix)}, but the model has {n} "
            f"trainable values; pass a matrix of shape ({n}, {n}) in destructure's order (e.g. from hessian_to_dense)"
        )
    spans, offset = {}, 0
    for path, a in found:
        spans[path] = (a, offset)
        offset += value_of(a).size

    def row(path, a, start):
        def block(col_path, b, col_start):
            piece = matrix[start:start + value_of(a).size, col_start:col_start + value_of(b).size]
            return anp.reshape(piece, value_of(a).shape + value_of(b).shape)

        return _tangent_tree(model, spans, block)

    return _tangent_tree(model, spans, row)


def _tangent_tree(model, spans, make):
    """``model``'s structural tangent: ``make(path, array, offset)`` at the positions in ``spans``, else ``None``."""

    def leaf_fn(path, leaf):
        span = spans.get(path)
        return None if span is None else make(path, *span)

    return execute(ExcludeWalk(_TangentWalk(), leaf_fn, isleaf), model)


class _TangentWalk:
    """Walk into every child and build the node's structural tangent (``None`` when all children are)."""

    def visit(self, x, ys, path):
        keys, xs, kid_ys = split(x, ys, path)
        return Expand(keys, xs, kid_ys, lambda results: _tangent(x, keys, results))


def _tangent(x, keys, results):
    if all(r is None for r in results):
        return None
    return node_of(x).tangent(x, keys, results)
