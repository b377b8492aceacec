"""The ``xp`` a numpy-style ``f(xp, *args)`` gets in each system of :func:`autodiff.compare`.

Each is the system's numpy (``autodiff.numpy``, ``numpy``, ``torch``, ``jax.numpy``, ``autograd.numpy``)
with two additions, so that one ``f`` runs everywhere:

* ``xp.nn`` holds ``relu``, ``sigmoid`` and ``softplus`` in every system (``jax.nn.relu``, ``torch.relu``,
  ``autodiff.nn.functional.relu``, and ``maximum(x, 0)`` for numpy and HIPS autograd);
* torch's calls that differ from numpy's are adapted: a Python number where torch wants a tensor
  (``torch.maximum(x, 0.0)``) becomes a tensor of ``x``'s dtype, and a ``(values, indices)`` result
  (``torch.sort``, ``torch.max(x, dim)``) gives its values, as numpy's ``sort`` and ``max`` do.
"""

import importlib
import types

import numpy as np


class Namespace:
    """A system's module as ``xp``: its names (each call passed through ``adapt(name, fn)``), submodules such
    as ``xp.linalg`` adapted the same way, and ``xp.nn``."""

    def __init__(self, module, nn, adapt=None):
        self._module, self.nn, self._adapt = module, nn, adapt

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_module", "_adapt"):  # copy and pickle probe before __init__ ran
            raise AttributeError(name)
        value = getattr(self._module, name)
        if isinstance(value, types.ModuleType):
            return Namespace(value, self.nn, self._adapt)
        return self._adapt(name, value) if self._adapt is not None and callable(value) else value

    def __repr__(self):
        return f"<compare's xp over {self._module.__name__}>"


def namespace(system):
    """``xp`` for ``system`` (importing the system only now)."""
    return _NAMESPACES[system]()


def _numpy_nn(xp):
    return types.SimpleNamespace(relu=lambda x: xp.maximum(x, 0.0), sigmoid=lambda x: 1.0 / (1.0 + xp.exp(-x)),
                                 softplus=lambda x: xp.logaddexp(0.0, x))


def _autodiff():
    from .. import numpy as anp
    from ..nn import functional

    return Namespace(anp, types.SimpleNamespace(relu=functional.relu, sigmoid=functional.sigmoid,
                                                softplus=functional.softplus))


def _jax():
    jax = importlib.import_module("jax")
    return Namespace(jax.numpy, types.SimpleNamespace(relu=jax.nn.relu, sigmoid=jax.nn.sigmoid,
                                                      softplus=jax.nn.softplus))


def _torch():
    torch = importlib.import_module("torch")
    nn = types.SimpleNamespace(relu=torch.relu, sigmoid=torch.sigmoid, softplus=torch.nn.functional.softplus)
    return Namespace(torch, nn, _adapt_torch)


def _autograd():
    anp = importlib.import_module("autograd.numpy")
    return Namespace(anp, _numpy_nn(anp))


_NAMESPACES = {"autodiff": _autodiff, "numpy": lambda: Namespace(np, _numpy_nn(np)), "torch": _torch,
               "jax": _jax, "autograd": _autograd}

# torch's binary functions that take tensors only, where numpy takes any number
_TENSOR_OPERANDS = frozenset({
    "maximum", "minimum", "fmax", "fmin", "hypot", "atan2", "arctan2", "copysign", "heaviside", "logaddexp",
    "logaddexp2", "nextafter", "ldexp", "xlogy", "dot", "inner", "outer", "matmul", "kron", "isclose"})


def _adapt_torch(name, fn):
    if isinstance(fn, type):  # torch.Tensor, torch.Generator: classes pass through
        return fn

    def call(*args, **kwargs):
        if name in _TENSOR_OPERANDS:
            args = _as_tensors(args)
        return _values_of(fn(*args, **kwargs))

    return call


def _as_tensors(args):
    """Numbers and numpy arrays among ``args`` as tensors, of the first tensor's dtype where they are numbers."""
    import torch

    like = next((a for a in args if isinstance(a, torch.Tensor)), None)
    dtype = like.dtype if like is not None and (like.is_floating_point() or like.is_complex()) else None
    return tuple(torch.as_tensor(a, dtype=dtype if not isinstance(a, np.ndarray) else None)
                 if isinstance(a, (int, float, complex, np.ndarray, np.generic)) and not isinstance(a, bool)
                 else a for a in args)


def _values_of(out):
    """torch's ``(values, indices)`` results as their values, as numpy returns them."""
    return out.values if type(out).__module__ == "torch.return_types" and hasattr(out, "values") else out
