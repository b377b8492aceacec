"""The systems :func:`autodiff.compare` runs: autodiff, PyTorch, JAX and HIPS autograd, each on its own terms.

Each runner takes ``g(*leaves)`` (the user's function with the arguments rebuilt from these leaves), the leaves
as numpy, and a direction for ``H v`` (or ``None``), and returns ``(value, gradients, H v)`` as numpy, one
array per leaf.  The gradient is each system's pullback of the cotangent 1 (its own ``vjp``), so a complex
input or output shows that system's convention as it is: torch's ``z.grad`` and JAX's ``grad`` are
conjugates of each other.  A symbolic zero (torch's ``None`` and ZeroTensor, an unused input) becomes zeros of
the leaf's shape and dtype.  JAX runs with 64-bit floats inside a context manager: no global state changes.
"""

import contextlib
import importlib
import warnings

import numpy as np

from .._higher import hvp as _hvp
from .._higher import jvp as _jvp
from .._vjp import vjp as _vjp

INSTALL = {"torch": "pip install torch", "jax": "pip install jax (or this package's [compare] extra)",
           "autograd": "pip install autograd (or this package's [compare] extra)"}
_MODULES = {"autodiff": "autodiff", "torch": "torch", "jax": "jax", "autograd": "autograd"}


def load(name):
    """The system's module, or ``None`` when it is not installed."""
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError:
        return None


def run(name, module, g, xs, direction):
    """``(value, gradients, H v)`` of ``g`` at ``xs`` in system ``name``, whose module :func:`load` gave."""
    return _RUNNERS[name](module, g, xs, direction)


def _run_autodiff(_, g, xs, direction):
    out, pullback = _vjp(g, *xs)
    grads = pullback(np.ones_like(out))
    hv = _hvp(g, tuple(xs), tuple(direction)) if direction is not None else None
    return _numpy(out), _leaves(grads, xs), _asked(hv, xs, direction)


def _run_torch(torch, g, xs, direction):
    ts = [torch.tensor(np.asarray(x), requires_grad=True) for x in xs]
    out = torch.as_tensor(g(*ts))
    if not out.requires_grad:  # f does not depend on its arguments: every gradient is a symbolic zero
        return _numpy(out), _leaves(None, xs), _asked(None, xs, direction)
    grads = torch.autograd.grad(out, ts, grad_outputs=torch.ones_like(out), create_graph=direction is not None,
                                allow_unused=True)
    hv = None if direction is None else _torch_hvp(torch, grads, ts, direction)
    return _numpy(out), _leaves(grads, xs), _asked(hv, xs, direction)


def _torch_hvp(torch, grads, ts, direction):
    """``H v`` as the gradient of ``<grad, v>``; gradients that are constants (``None``, or not traced) add
    nothing to it."""
    terms = [(g * torch.as_tensor(v)).sum() for g, v in zip(grads, direction) if g is not None and g.requires_grad]
    if not terms:
        return None
    return torch.autograd.grad(sum(terms), ts, allow_unused=True)


def _run_jax(jax, g, xs, direction):
    with x64(jax):
        arrays = tuple(jax.numpy.asarray(x) for x in xs)
        out, pullback = jax.vjp(g, *arrays)
        grads = pullback(jax.numpy.ones_like(out))
        hv = None
        if direction is not None:
            gradient = jax.grad(g, tuple(range(len(arrays))))
            hv = jax.jvp(gradient, arrays, tuple(jax.numpy.asarray(v) for v in direction))[1]
        return _numpy(out), _leaves(grads, xs), _asked(hv, xs, direction)


def x64(jax):
    """64-bit floats in JAX for the duration of a ``with`` block: ``jax.enable_x64`` (jax >= 0.7), else
    ``jax.experimental.enable_x64``, else the config flag set and restored."""
    if callable(getattr(jax, "enable_x64", None)):
        return jax.enable_x64(True)
    experimental = importlib.import_module("jax.experimental")
    if hasattr(experimental, "enable_x64"):
        return experimental.enable_x64()
    return _config_x64(jax)


@contextlib.contextmanager
def _config_x64(jax):
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


def _run_autograd(autograd, g, xs, direction):
    def h(leaves):
        return g(*leaves)

    xs = [_numpy_scalar(x) for x in xs]
    with warnings.catch_warnings():  # "Output seems independent of input": a symbolic zero, said by the table
        warnings.simplefilter("ignore", UserWarning)
        pullback, out = autograd.make_vjp(h)(list(xs))
        grads = pullback(np.ones_like(out))
        hv = None if direction is None else autograd.grad(_autograd_dot(autograd, h, direction))(list(xs))
    return _numpy(out), _leaves(grads, xs), _asked(hv, xs, direction)


def _numpy_scalar(x):
    """A Python number as numpy's: autograd's rules then follow numpy's arithmetic (``0.0 ** -0.5`` is
    ``inf``, as in every other column, not Python's ``ZeroDivisionError``)."""
    return np.asarray(x)[()] if isinstance(x, (int, float, complex)) else x


def _autograd_dot(autograd, h, direction):
    def dot(leaves):
        grads = autograd.grad(h)(leaves)
        return sum(autograd.numpy.sum(g * v) for g, v in zip(grads, direction))

    return dot


_RUNNERS = {"autodiff": _run_autodiff, "torch": _run_torch, "jax": _run_jax, "autograd": _run_autograd}


def run_jvp(name, module, g, xs, tangent):
    """The derivative of ``Re sum(g)`` at ``xs`` along ``tangent`` (one array per leaf), by ``name``'s forward
    mode (``jvp``): autodiff's and JAX's ``jvp``, ``torch.func.jvp``, autograd's ``make_jvp``."""
    return float(np.sum(np.real(_numpy(_JVPS[name](module, g, xs, tangent)))))


def _jvp_autodiff(_, g, xs, tangent):
    return _jvp(g, tuple(xs), tuple(tangent))[1]


def _jvp_torch(torch, g, xs, tangent):
    def tensors(arrays):
        return tuple(torch.as_tensor(np.asarray(a)) for a in arrays)

    return torch.func.jvp(lambda *ts: torch.as_tensor(g(*ts)), tensors(xs), tensors(tangent))[1]


def _jvp_jax(jax, g, xs, tangent):
    with x64(jax):
        arrays = tuple(jax.numpy.asarray(x) for x in xs)
        return _numpy(jax.jvp(g, arrays, tuple(jax.numpy.asarray(v) for v in tangent))[1])


def _jvp_autograd(autograd, g, xs, tangent):
    make_jvp = importlib.import_module("autograd.differential_operators").make_jvp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make_jvp(lambda leaves: g(*leaves))([_numpy_scalar(x) for x in xs])(list(tangent))[1]


_JVPS = {"autodiff": _jvp_autodiff, "torch": _jvp_torch, "jax": _jvp_jax, "autograd": _jvp_autograd}


def _leaves(grads, xs):
    """One numpy array per leaf; a symbolic zero (``None``, a ZeroTensor, no gradient at all) as zeros."""
    if grads is None:
        grads = [None] * len(xs)
    return [_numpy(g) if g is not None else np.zeros_like(np.asarray(x)) for g, x in zip(grads, xs)]


def _asked(hv, xs, direction):
    """``H v`` per leaf when a direction was given (a ``None`` there is a symbolic zero), else ``None``."""
    return None if direction is None else _leaves(hv, xs)


def _numpy(x):
    """A system's array as numpy, dtype kept (complex stays complex); torch's ZeroTensor and conjugate views
    materialised."""
    if hasattr(x, "detach"):
        return x.detach().numpy(force=True)
    return np.asarray(x)
