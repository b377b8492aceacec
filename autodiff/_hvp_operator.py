"""``hvp_operator``: the Hessian of ``f`` at fixed primals, recorded once and applied to many vectors.

Krylov methods (Lanczos for the top eigenvalues, conjugate gradients for an
inverse-Hessian product, Hutchinson's trace and diagonal estimates) apply one
Hessian to tens of vectors.  ``hvp`` runs ``f`` and its gradient again for each
of them.  The operator records the gradient once, as a function of the
primals, on a tape of its own (the tape ``vjp(grad(f), x)`` would record),
and each product is one backward pass over that record: reverse over reverse,
``H v = (vᵀ H)ᵀ`` since the Hessian is symmetric (for complex primals:
self-adjoint under the real pairing of docs/complex.md, which is what the
pullbacks transpose against).

Why reverse over the record and not forward along it (``linearize(grad(f),
x)`` records the same tape and pushes ``v`` forward through it, in about as
many operations): the backward pass visits only the entries the gradient
depends on (not those that only compute the loss's value), frees each
cotangent once it is used where ``push_along`` keeps a tangent for every entry
until the end (the record's size again), and every primitive has a pullback
while one without a JVP rule (``autodiff.scipy``'s) is pushed forward through
its pullback on a fresh tape per entry and per product.  The price is the
symmetry: ``H = Hᵀ`` holds for every function whose rules are true derivatives
(``stop_gradient`` included), but a custom rule that is not the derivative of
its forward (a straight-through estimator) can make ``op(v)`` differ from
``hvp``; use ``hvp`` there.

The tape protects what it read (design.md section 10) for as long as the
operator (or a ``LinearOperator`` made from it) lives, and lets go when it is
garbage-collected.
"""

import numpy as np

from ._arguments import materialise, zeros_like_primal
from ._calls import argnums_of, checked_aux, on_arguments
from ._directions import Variables
from ._higher import _collapse
from ._hooks import hooks
from ._parameter_operator import ParameterOperator, rademacher  # noqa: F401 (bench/ draws the operator's probes)
from ._parameter_vector import ParameterVector
from ._protection import release
from ._traced import new_inputs, open_tape
from ._transforms import unwrap_outputs, value_and_grad
from ._trees import leaves, transform
from ._vjp import protect_saved


def hvp_operator(f, *primals, argnums=0, has_aux=False):
    """The Hessian of the scalar ``f`` at ``primals`` as a linear operator: ``op(v)`` is ``hvp`` at the same point.

    ``argnums`` and ``has_aux`` mean what they mean for :func:`grad`: an int
    gives the Hessian of that argument (``v`` and ``op(v)`` mirror it), a tuple
    the joint Hessian of those it names (``v`` a tuple, one direction each);
    the other arguments are held.  With ``has_aux``, ``f`` returns ``(loss,
    aux)`` and ``hvp_operator`` returns ``(op, aux)``.  Arrays, floats, dicts,
    dataclasses and models are all primals, as for ``hvp``.

    ``f`` and its gradient run once, here; each ``op(v)`` (or ``op.matvec(v)``)
    is then one backward pass over their record, about half the cost of
    ``hvp(f, x, v)``, which runs both again.  Prefer the operator whenever one
    Hessian meets several vectors (Lanczos, conjugate gradients, Hutchinson);
    prefer ``hvp`` for a single product (nothing to reuse: recording and one
    backward pass cost at least what ``hvp`` costs), or when memory is tight: the
    operator holds the gradient's record (every intermediate of ``f`` and of
    its pullbacks) until it is garbage-collected, and keeps the arrays it read
    read-only until then.  Both nest: made inside a differentiated function,
    the operator's products are differentiable in its primals.

    ``op.value`` and ``op.gradient`` are ``f``'s value and gradient, already
    computed.  Over the *parameter vector* (``traversal.destructure``'s: each
    distinct trainable float array once, in traversal order; a bare array or
    float argument raveled), ``op.shape`` and ``op.dtype`` describe the square
    matrix, ``op(flat)`` takes and gives a flat vector of that length,
    ``op.hutchinson(n)`` and ``op.trace_estimate(n)`` estimate its
    diagonal and trace from ``n`` Rademacher probes, and
    ``op.as_linear_operator()`` gives a ``scipy.sparse.linalg.LinearOperator``
    for ``eigsh``, ``cg`` and friends.  Non-trainable children (BatchNorm's
    running statistics, ``eps``) are constants, as for ``grad``: a direction's
    entries there are ignored.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> f = lambda w, x: anp.sum(anp.tanh(x @ w) ** 2)
    >>> w, x = np.array([0.5, -1.0]), np.array([[1.0, 2.0], [0.5, 0.0], [1.0, 1.0]])
    >>> op = hvp_operator(f, w, x)                    # the Hessian in w, x held
    >>> op
    HvpOperator(shape=(2, 2), dtype=float64)
    >>> v = np.array([1.0, 0.0])
    >>> from autodiff import hvp
    >>> bool(np.allclose(op(v), hvp(f, (w, x), v, argnums=0)))
    True
    >>> from scipy.sparse.linalg import eigsh
    >>> top = eigsh(op.as_linear_operator(), k=1, which="LA", return_eigenvectors=False)
    >>> from autodiff import hessian
    >>> bool(np.isclose(top[0], np.linalg.eigvalsh(hessian(f)(w, x))[-1]))
    True
    """
    nums = argnums_of(argnums, len(primals), "hvp_operator")
    chosen = tuple(primals[n] for n in nums)
    f_chosen = checked_aux(on_arguments(f, primals, nums), has_aux, "hvp_operator")
    variables = Variables(chosen)
    homes = variables.homes()
    value_and_gradient = value_and_grad(f_chosen, tuple(range(len(chosen))), has_aux)
    with open_tape() as tape:
        inputs = new_inputs(tape, variables.leaves)
        value, grads = value_and_gradient(*variables.substitute(inputs))
        by_path = dict(leaves(grads))
        at_homes = [by_path.get(home) for home in homes]
    try:
        op = HvpOperator(tape, variables, homes, inputs, at_homes, grads, argnums)
        value, saved = unwrap_outputs(value, tape)
        protect_saved(tape, saved)  # the value and aux may be entries a pullback reads, as the gradient is
    except BaseException:
        release(tape)
        raise
    op.value = value[0] if has_aux else value
    return (op, value[1]) if has_aux else op


class HvpOperator(ParameterOperator):
    """The operator :func:`hvp_operator` returns; ``op(v)`` is ``H v`` in ``v``'s kind: mirroring the
    argument, or flat over the parameter vector (:class:`~autodiff._parameter_operator.ParameterOperator`)."""

    _name = "hvp_operator"

    def __init__(self, tape, variables, homes, inputs, at_homes, grads, argnums):
        self._tape = tape
        self._variables, self._homes, self._inputs, self._argnums = variables, homes, inputs, argnums
        _, self._outputs = unwrap_outputs(at_homes, tape)
        protect_saved(tape, self._outputs)  # a pullback may read its own output: the caller must not change it
        self._gradient = unwrap_outputs(grads, tape)[0]
        self._bare = not isinstance(argnums, (tuple, list))
        self._parameters = ParameterVector(variables, homes)
        self.value = None

    def __del__(self):
        tape = getattr(self, "_tape", None)
        if tape is not None:
            release(tape)  # the arrays the record protected are the caller's again

    @property
    def gradient(self):
        """``grad(f, argnums)`` at the primals (read-only arrays while the operator lives: copy to change)."""
        return self._gradient[0] if self._bare else self._gradient

    def _pull(self, directions):
        """One backward pass over the record: ``H v`` per variable, ``None`` where no cotangent arrived."""
        seeds = {}
        for (_, index, _), d in zip(self._outputs, directions):
            if index is not None and d is not None:
                seeds[index] = seeds[index] + d if index in seeds else d
        cts = hooks.backward(self._tape, seeds)
        results = [materialise(cts[x.index], x.value, bare=False) for x in self._inputs]
        return _unaliased(results, directions)

    def _structure(self, per_variable):
        """Per-variable results in the gradient's structure (``None`` where ``grad`` has ``None``)."""
        at = dict(zip(self._homes, per_variable))

        def leaf(path, g):
            if g is None:
                return None
            r = at.get(path)
            return zeros_like_primal(g) if r is None and len(path) == 1 else r  # a bare argument: an array

        result = transform(self._gradient, leaf, _collapse)
        return result[0] if self._bare else result


def _unaliased(results, directions):
    """``results``, with a copy for any that shares memory with a direction: ``H v`` must not alias ``v``."""
    given = {id(_buffer(d)) for d in directions if isinstance(d, np.ndarray)}
    if not given:
        return results
    return [r.copy() if isinstance(r, np.ndarray) and id(_buffer(r)) in given else r for r in results]


def _buffer(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a
