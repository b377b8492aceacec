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

from . import _backward, _ops
from ._arguments import materialise, zeros_like_primal
from ._calls import argnums_of, checked_aux, on_arguments
from ._directions import Variables, as_arguments
from ._higher import _collapse
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
    matrix, ``op.hutchinson(n)`` and ``op.trace_estimate(n)`` estimate its
    diagonal and trace from ``n`` Rademacher probes, and
    ``op.as_linear_operator()`` gives a ``scipy.sparse.linalg.LinearOperator``
    for ``eigsh``, ``cg`` and friends.

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


class HvpOperator:
    """The operator :func:`hvp_operator` returns; ``op(v)`` is ``H v`` in the primals' structure."""

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

    def __repr__(self):
        return f"HvpOperator(shape={self.shape}, dtype={self.dtype})"

    @property
    def shape(self):
        """``(n, n)``, ``n`` the length of the parameter vector."""
        return (self._parameters.size, self._parameters.size)

    @property
    def dtype(self):
        """The parameter vector's dtype (promoted across the parameters, as ``destructure`` does)."""
        return self._parameters.dtype

    @property
    def gradient(self):
        """``grad(f, argnums)`` at the primals (read-only arrays while the operator lives: copy to change)."""
        return self._gradient[0] if self._bare else self._gradient

    def __call__(self, v):
        """``H v``: ``v`` mirrors the argument (a tuple of directions for a tuple ``argnums``), ``None`` for a
        zero subtree, checked as ``hvp`` checks it; the result mirrors the gradient."""
        tangents = (v,) if self._bare else self._tangents(v)
        directions = self._variables.directions("hvp_operator", tangents, self._bare)
        return self._structure(self._pull(directions))

    matvec = __call__

    def _tangents(self, v):
        primals = self._variables.primals
        if type(v) not in (tuple, list) or len(v) != len(primals):
            got = f"{len(v)} directions" if type(v) in (tuple, list) else f"a {type(v).__name__}"
            raise ValueError(
                f"hvp_operator: the operator was made with argnums={self._argnums!r}, so it takes a tuple of "
                f"{len(primals)} directions, one per argument named, but got {got}"
            )
        return as_arguments("hvp_operator", primals, v)[1]

    def _pull(self, directions):
        """One backward pass over the record: ``H v`` per variable, ``None`` where no cotangent arrived."""
        seeds = {}
        for (_, index, _), d in zip(self._outputs, directions):
            if index is not None and d is not None:
                seeds[index] = seeds[index] + d if index in seeds else d
        cts = _backward.run(self._tape, seeds)
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

    def hutchinson(self, n, seed=None):
        """Estimate of the Hessian's diagonal from ``n`` Rademacher probes ``z``: the mean of ``z * (H z)``.

        Over the parameter vector, returned in the gradient's structure
        (``None`` off the parameters).  Exact for a diagonal Hessian; otherwise
        entry ``i`` has variance ``sum_{j != i} H_ij**2 / n``.  The same
        ``seed`` gives the same probes as :meth:`trace_estimate`, so the
        estimates agree: ``sum(diagonal) == trace``.
        """
        per_variable = [None] * len(self._inputs)
        for z, hz in self._probed("hutchinson", n, seed):
            for v in self._parameters.variables:
                if hz[v] is not None:
                    term = z[v] * hz[v]
                    per_variable[v] = term if per_variable[v] is None else per_variable[v] + term
        leaves = self._variables.leaves
        return self._structure([None if d is None else materialise(d / n, leaves[v], bare=False)  # 0-d stays 0-d
                                for v, d in enumerate(per_variable)])

    def trace_estimate(self, n, seed=None):
        """Hutchinson's estimate of the Hessian's trace from ``n`` Rademacher probes: the mean of ``zᵀ H z``.

        Over the parameter vector; its variance is ``2 sum_{i != j} H_ij**2 / n``.
        """
        total = 0.0
        for z, hz in self._probed("trace_estimate", n, seed):
            for v in self._parameters.variables:
                if hz[v] is not None:
                    total = total + _ops.sum(z[v] * hz[v])
        return total / n

    def _probed(self, name, n, seed):
        """``(z, H z)`` per variable for ``n`` Rademacher probes over the parameter vector."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"hvp_operator.{name}: n={n!r} probes; pass a positive int")
        self._parameters.check_real(name)
        rng = np.random.default_rng(seed)
        for _ in range(n):
            z = self._parameters.split(rademacher(rng, self._parameters.size))
            yield z, self._pull(z)

    def as_linear_operator(self):
        """A ``scipy.sparse.linalg.LinearOperator`` over the parameter vector (symmetric: ``rmatvec`` is ``matvec``).

        It holds the operator, so the record lives as long as it does.
        """
        from scipy.sparse.linalg import LinearOperator  # scipy is optional: needed only here

        self._parameters.check_real("as_linear_operator")
        return LinearOperator(self.shape, matvec=self._flat_matvec, rmatvec=self._flat_matvec, dtype=self.dtype)

    def _flat_matvec(self, x):
        """``H x`` for a flat ``x`` (scipy has checked its length)."""
        return self._parameters.join(self._pull(self._parameters.split(np.asarray(x).reshape(-1))))


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


_SIGNS = np.array([-1.0, 1.0])


def rademacher(rng, size):
    """``size`` independent signs ±1, each with probability 1/2, from one random bit apiece (``rng.bytes``
    unpacked): 60 µs for 26k values where ``rng.integers(0, 2, size)`` took 144, a tenth of a 16-probe trace
    estimate of a 26k-parameter MLP.

    >>> z = rademacher(np.random.default_rng(0), 1000)
    >>> sorted(set(z.tolist())), bool(abs(z.mean()) < 0.2)
    ([-1.0, 1.0], True)
    """
    return _SIGNS[np.unpackbits(np.frombuffer(rng.bytes((size + 7) // 8), np.uint8), count=size)]
