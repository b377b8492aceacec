"""A two-operand einsum as one (batched) matmul: how the einsum primitive reaches BLAS.

``numpy.einsum`` without ``optimize`` sums products in its own loops, never
GEMV or GEMM; with ``optimize`` it plans a path in Python on every call.  A
two-operand einsum (canonical subscripts: explicit output, one size per
letter) is always a matmul once its axes are sorted into four kinds:

- *batch*: in both operands and the output (matmul's leading axes),
- *contracted*: in both operands, not the output (``K``),
- *left* / *right*: in one operand and the output (``L`` / ``R``),

and letters in one operand only, not in the output, are summed first.  So
``'ij,j->i'`` is a GEMV, ``'ij,jk->ik'`` a GEMM, ``'i,j->ij'`` a rank-1
product and ``'bij,bjk->bik'`` a batched GEMM.  The plan (permutations and
shapes) is cached per subscripts and shapes.  A letter repeated within one
operand (a diagonal) is left to ``numpy.einsum``.

This is the plain-numpy forward of the einsum primitive; the primitive's
pullback is again an einsum of two operands (the cotangent and the other
operand), so every order of derivative runs through here too.

>>> import numpy as np
>>> a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
>>> contract("ij,j->i", a, b), np.einsum("ij,j->i", a, b)
(array([ 5., 14.]), array([ 5., 14.]))
"""

import functools
import math

import numpy as np


def contract(subscripts, a, b):
    """``numpy.einsum(subscripts, a, b)`` for canonical ``subscripts``, through one matmul when it can."""
    a, b = np.asarray(a), np.asarray(b)
    plan = _plan(subscripts, a.shape, b.shape)
    if plan is None:
        return np.einsum(subscripts, a, b)
    return plan.run(a, b)


class _Plan:
    """Per operand: axes summed first, the permutation to (batch, free, contracted), the matmul shape;
    then the result's shape by letter and the permutation to the output's order."""

    __slots__ = ("sum_a", "perm_a", "shape_a", "sum_b", "perm_b", "shape_b", "shape_out", "perm_out")

    def run(self, a, b):
        a = _prepare(a, self.sum_a, self.perm_a, self.shape_a)
        b = _prepare(b, self.sum_b, self.perm_b, self.shape_b)
        out = np.matmul(a, b).reshape(self.shape_out)
        return out if self.perm_out is None else out.transpose(self.perm_out)


def _prepare(x, summed, perm, shape):
    if summed:
        x = x.sum(axis=summed)
    if perm is not None:
        x = x.transpose(perm)
    return x.reshape(shape)


@functools.lru_cache(maxsize=1024)
def _plan(subscripts, shape_a, shape_b):
    ins, out = subscripts.split("->")
    ta, tb = ins.split(",")
    size = _sizes(ta, shape_a, tb, shape_b)
    if size is None:
        return None
    batch, left, inner, right = _kinds(ta, tb, out)
    L, K, R = (math.prod(size[c] for c in group) for group in (left, inner, right))
    lead = tuple(size[c] for c in batch)
    plan = _Plan()
    plan.sum_a, plan.perm_a = _summed_and_perm(ta, tb, out, batch + left + inner)
    plan.sum_b, plan.perm_b = _summed_and_perm(tb, ta, out, batch + inner + right)
    # without batch axes, an empty side is a vector, so matmul takes the GEMV (or dot) route
    plan.shape_a = lead + ((K,) if not (batch or left) else (L, K))
    plan.shape_b = lead + ((K,) if not (batch or right) else (K, R))
    order = batch + left + right
    plan.shape_out = tuple(size[c] for c in order)
    perm = tuple(order.index(c) for c in out)
    plan.perm_out = None if perm == tuple(range(len(out))) else perm
    return plan


def _sizes(ta, shape_a, tb, shape_b):
    """Each letter's size, or ``None`` when matmul cannot do it: a letter repeated within one operand (a
    diagonal), or a size-1 axis broadcast against a longer one (numpy.einsum's rule, not matmul's)."""
    if len(set(ta)) < len(ta) or len(set(tb)) < len(tb):
        return None
    size = dict(zip(ta, shape_a))
    if any(size.get(c, n) != n for c, n in zip(tb, shape_b)):
        return None
    size.update(zip(tb, shape_b))
    return size


def _kinds(ta, tb, out):
    """The letters by kind: batch and free ones in the output's order, contracted ones in ``ta``'s."""
    both = set(ta) & set(tb)
    batch = [c for c in out if c in both]
    left = [c for c in out if c in ta and c not in both]
    right = [c for c in out if c in tb and c not in both]
    inner = [c for c in ta if c in both and c not in out]
    return batch, left, inner, right


def _summed_and_perm(term, other, out, wanted):
    """The axes of ``term`` summed away first (in no other operand nor the output), and the permutation of
    what is left into the order ``wanted``."""
    summed = tuple(i for i, c in enumerate(term) if c not in other and c not in out)
    kept = [c for c in term if c in other or c in out]
    perm = tuple(kept.index(c) for c in wanted)
    return summed, (None if perm == tuple(range(len(kept))) else perm)
