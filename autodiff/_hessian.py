"""``hessian``: ``jacfwd`` of the gradient (forward over reverse), with JAX's ``has_aux`` and ``holomorphic``.

The gradient is :func:`autodiff.grad`'s, or for ``holomorphic=True`` :func:`autodiff.holomorphic_grad`'s
(``f'(z)``, the pullback of a complex 1); :func:`autodiff.jacfwd` then pushes each basis direction through it.
The result is structured as ``jacobian``'s: ``h.W1.W2`` has shape ``W1.shape + W2.shape``.
"""

from ._calls import argnums_of, checked_aux
from ._holomorphic import holomorphic_grad
from ._jacobian import checked_variables, jacfwd
from ._output_checks import scalar_valued
from ._transforms import grad

_INSTEAD = ("Use autodiff.hvp for Hessian-vector products, or make the real and imaginary parts the "
            "arguments (z = x + 1j * y); for a holomorphic f, pass holomorphic=True.")


def hessian(f, argnums=0, has_aux=False, holomorphic=False):
    """Hessian of a scalar ``f``, ``jacfwd`` of its gradient: ``h.W1.W2`` has shape ``W1.shape + W2.shape``.

    ``argnums`` and ``has_aux`` mean what they mean for :func:`autodiff.grad`: with ``has_aux``, ``f``
    returns ``(loss, aux)`` and the new function ``(hessian, aux)``.  Complex arguments are refused: the
    Hessian of a real ``f`` of ``z`` moves with ``conj(v)`` too, so it is no complex matrix;
    :func:`autodiff.hvp` gives its products.  With ``holomorphic=True`` (JAX's promise that ``f`` is
    holomorphic: complex arguments, a complex scalar output) it is the matrix of second complex
    derivatives ``∂²f/∂z_i∂z_j``.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    >>> h = hessian(lambda p: (p["a"] ** 2).sum() * p["b"].sum())({"a": np.ones(2), "b": np.ones(3)})
    >>> h["a"]["b"]
    array([[2., 2., 2.],
           [2., 2., 2.]])
    >>> hessian(lambda x: ((x ** 3).sum(), x.max()), has_aux=True)(np.array([1.0, 2.0]))[1]
    np.float64(2.0)
    >>> hessian(lambda z: anp.sum(z ** 3), holomorphic=True)(np.array([1j, 2.0 + 0j]))  # diag(6 z)
    array([[ 0.+6.j,  0.+0.j],
           [ 0.+0.j, 12.+0.j]])
    """
    checked = scalar_valued(checked_aux(f, has_aux, "hessian"), has_aux, "hessian", holomorphic)
    gradient = (holomorphic_grad if holomorphic else grad)(checked, argnums, has_aux)
    jacobian_of_gradient = jacfwd(gradient, argnums, has_aux, holomorphic)

    def hessian_f(*args, **kwargs):
        checked_variables("hessian", args, argnums_of(argnums, len(args), "hessian"), holomorphic, _INSTEAD)
        return jacobian_of_gradient(*args, **kwargs)

    return hessian_f
