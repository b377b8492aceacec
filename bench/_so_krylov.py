"""Krylov plumbing both sides share, so ours and torch differ only in how ``H v`` is made.

Conjugate gradients and the Rademacher probes are numpy, identical for both; the torch operators
turn a flat numpy vector into torch's ``H v`` and back (a copy-free ``from_numpy`` each way).
"""

import numpy as np

from autodiff._hvp_operator import rademacher as _signs  # the operator's own draw, so torch gets the very same probes


def conjugate_gradient(matvec, b, steps):
    """``steps`` iterations of conjugate gradients for ``H x = b`` from ``x = 0`` (no early stop: a fixed cost).

    >>> h = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> bool(np.allclose(conjugate_gradient(lambda v: h @ v, np.array([1.0, 2.0]), 2), np.linalg.solve(h, [1, 2])))
    True
    """
    x, r = np.zeros_like(b), b.copy()
    d, rr = r.copy(), r @ r
    for _ in range(steps):
        hd = matvec(d)
        alpha = rr / (d @ hd)
        x, r = x + alpha * d, r - alpha * hd
        rr, rr_old = r @ r, rr
        d = r + (rr / rr_old) * d
    return x


def rademacher(size, n, seed):
    """The ``n`` probes ``HvpOperator.trace_estimate(n, seed)`` draws, as rows of an ``(n, size)`` array.

    The operator draws each probe in turn from ``numpy.random.default_rng(seed)``; this repeats the
    draw (tests/models/test_second_order_tasks.py checks the estimate against the dense Hessian with these probes).
    """
    rng = np.random.default_rng(seed)
    return np.stack([_signs(rng, size) for _ in range(n)])


def counted(shape, dtype, matvec):
    """``(LinearOperator, calls)``: ``calls[0]`` counts the products scipy asked for."""
    from scipy.sparse.linalg import LinearOperator

    calls = [0]

    def counting(v):
        calls[0] += 1
        return matvec(v)

    return LinearOperator(shape, matvec=counting, rmatvec=counting, dtype=dtype), calls


def shapes_of(arrays):
    return [tuple(a.shape) for a in arrays]


def unflatten(flat, shapes):
    """Views of a flat torch vector in ``shapes``, in order."""
    sizes = [int(np.prod(s)) for s in shapes]
    return [part.view(s) for part, s in zip(flat.split(sizes), shapes)]


class TorchRetainedHvp:
    """torch's usual Krylov operator: the gradient built once with ``create_graph=True``, then one
    ``autograd.grad(grads, params, v, retain_graph=True)`` per product, over the flat parameter vector."""

    def __init__(self, torch, params, loss):
        self._torch, self._params = torch, params
        self.grads = torch.autograd.grad(loss, params, create_graph=True)
        self._shapes = shapes_of(params)
        self.size = sum(p.numel() for p in params)

    def __call__(self, v):
        vs = unflatten(self._torch.from_numpy(np.ascontiguousarray(v)), self._shapes)
        hv = self._torch.autograd.grad(self.grads, self._params, vs, retain_graph=True)
        return self._torch.cat([h.reshape(-1) for h in hv]).numpy()


def torch_func_hvp(torch, flat_loss, flat):
    """``v -> H v`` by torch.func forward over reverse (``jvp`` of ``grad``): the loss and its gradient
    run again for every product, as torch.func has no record to reuse."""
    gradient = torch.func.grad(flat_loss)

    def matvec(v):
        return torch.func.jvp(gradient, (flat,), (torch.from_numpy(np.ascontiguousarray(v)),))[1].numpy()

    return matvec
