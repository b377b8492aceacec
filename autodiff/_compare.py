"""compare: one function's gradient (and Hessian-vector product) in autodiff, PyTorch and JAX, side by side,
with central finite differences as the referee.

It converts arrays, not code.  ``f`` is either numpy-style, ``f(xp, *args)``
with ``xp`` each system's numpy (``autodiff.numpy``, ``torch``,
``jax.numpy``, and plain ``numpy`` for the finite differences), or a dict with
one function of ``*args`` per system (``"autodiff"``, ``"torch"``, ``"jax"``,
optionally ``"numpy"``: autodiff's runs on plain arrays otherwise).  Only
installed systems run; a missing one is listed with how to install it
(``pip install jax``, or the ``[compare]`` extra).  JAX runs with 64-bit
floats switched on (``jax_enable_x64``), so every system sees the same dtypes.
"""

import importlib

import numpy as np

from . import numpy as anp
from ._higher import hvp as _hvp
from ._transforms import value_and_grad

_INSTALL = {"torch": "pip install torch", "jax": "pip install jax (or this package's [compare] extra)"}
_STEPS = (1e-6, 2.5e-7)  # central differences for the gradient, at two steps to see that they settle
_SECOND_STEPS = (1e-4, 2.5e-5)  # mixed second differences for H v


class Result:
    """One system's answer: the value, the gradient (one entry per argument) and ``H v`` (or ``None``)."""

    def __init__(self, value, grad, hvp=None):
        self.value, self.grad, self.hvp = value, grad, hvp


def compare(f, *args, against=("torch", "jax"), hvp=False):
    """The gradient of the scalar ``f`` at ``args`` in autodiff and in each installed system of ``against``,
    with finite differences as the referee; ``hvp=True`` (direction ones) or ``hvp=v`` (one direction per
    argument, or a bare one for a single argument) adds ``H v``.  Returns a :class:`Comparison`, whose text
    is the table.

    >>> import numpy as np
    >>> c = compare(lambda xp, x: xp.sum(xp.abs(x)), np.array([0.0, -2.0]), against=("torch",))
    >>> print(c)  # doctest: +NORMALIZE_WHITESPACE
    compare at x0 = [0.0, -2.0]
    system              value  gradient     vs FD
    autodiff            2.0    [0.0, -1.0]  =
    torch               2.0    [0.0, -1.0]  =
    finite differences  2.0    [0.0, -1.0]  (referee)
    """
    functions = _functions(f, against)
    direction = _direction(hvp, args)
    with np.errstate(all="ignore"):  # kinks are what this is for: 1/0 and 0/0 are answers here, not accidents
        results, missing = {"autodiff": _run_autodiff(functions["autodiff"], args, direction)}, {}
        for name in against:
            module = _load(name)
            if module is None:
                missing[name] = f"not installed: {_INSTALL[name]}"
                continue
            results[name] = _RUNNERS[name](module, functions[name], args, direction)
        results["finite differences"] = _run_differences(functions["numpy"], args, direction)
    return Comparison(args, results, missing)


def _functions(f, against):
    """One function of ``*args`` per system, from a dict or from a numpy-style ``f(xp, *args)``."""
    unknown = [name for name in against if name not in _RUNNERS]
    if unknown:
        raise ValueError(f"compare: against={against!r} names {unknown}; the systems are {sorted(_RUNNERS)}")
    if isinstance(f, dict):
        lacking = [name for name in ("autodiff", *against) if name not in f]
        if lacking:
            raise ValueError(f"compare: the dict of functions has no entry for {lacking}; give one function of "
                             "*args per system, or one numpy-style f(xp, *args)")
        return {**f, "numpy": f.get("numpy", f["autodiff"])}
    namespaces = {"autodiff": anp, "numpy": np, "torch": "torch", "jax": "jax.numpy"}
    return {name: _with_namespace(f, xp) for name, xp in namespaces.items()}


def _with_namespace(f, xp):
    def run(*args):
        return f(importlib.import_module(xp) if isinstance(xp, str) else xp, *args)

    return run


def _direction(hvp, args):
    if hvp is False or hvp is None:
        return None
    if hvp is True:
        return tuple(np.ones_like(np.asarray(a, float)) for a in args)
    v = hvp if isinstance(hvp, tuple) else (hvp,)
    if len(v) != len(args):
        raise ValueError(f"compare: hvp gives {len(v)} direction(s) for {len(args)} argument(s); give one each")
    return tuple(np.asarray(d, float) for d in v)


def _load(name):
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    if name == "jax":
        module.config.update("jax_enable_x64", True)  # float64 as in the other systems
    return module


def _run_autodiff(fn, args, direction):
    nums = tuple(range(len(args)))
    value, grads = value_and_grad(fn, nums)(*args)
    hv = _hvp(fn, tuple(args), direction) if direction is not None else None
    return Result(_numpy(value), _numpy(grads), _numpy(hv))


def _run_torch(torch, fn, args, direction):
    ts = [torch.tensor(np.asarray(a), requires_grad=True) for a in args]
    out = fn(*ts)
    grads = torch.autograd.grad(out, ts, create_graph=direction is not None, allow_unused=True)
    grads = [torch.zeros_like(t) if g is None else g for g, t in zip(grads, ts)]
    hv = None
    if direction is not None:
        dot = sum((g * torch.tensor(v)).sum() for g, v in zip(grads, direction))
        hv = (torch.autograd.grad(dot, ts, allow_unused=True) if dot.requires_grad else [None] * len(ts))
        hv = [torch.zeros_like(t) if h is None else h for h, t in zip(hv, ts)]
    return Result(_numpy(out), _numpy(grads), _numpy(hv))


def _run_jax(jax, fn, args, direction):
    xs = tuple(jax.numpy.asarray(a) for a in args)
    nums = tuple(range(len(args)))
    value, grads = jax.value_and_grad(fn, nums)(*xs)
    hv = None
    if direction is not None:
        hv = jax.jvp(lambda *a: jax.grad(fn, nums)(*a), xs, tuple(jax.numpy.asarray(v) for v in direction))[1]
    return Result(_numpy(value), _numpy(grads), _numpy(hv))


_RUNNERS = {"torch": _run_torch, "jax": _run_jax}


def _run_differences(fn, args, direction):
    """Central differences of ``fn`` run on plain numpy: the referee every system is read against."""
    plain = [np.asarray(a, float) for a in args]
    value = _numpy(fn(*args))
    grads = tuple(_gradient(fn, plain, k) for k in range(len(plain)))
    hv = None if direction is None else tuple(_hessian_times(fn, plain, direction, k) for k in range(len(plain)))
    return Result(value, grads, hv)


def _gradient(fn, plain, k):
    """The gradient of argument ``k`` by central differences at two steps; NaN where they do not settle
    (no derivative there: ``sqrt`` at 0 from both sides)."""
    return _settled(*[_central(fn, plain, k, h) for h in _STEPS])


def _central(fn, plain, k, h):
    out = np.empty_like(plain[k])
    for i in np.ndindex(plain[k].shape):
        e = np.zeros_like(plain[k])
        e[i] = h
        out[i] = (_at(fn, plain, {k: e}) - _at(fn, plain, {k: -e})) / (2 * h)
    return out


def _hessian_times(fn, plain, direction, k):
    """``(H v)`` for argument ``k`` from mixed second differences at two steps; NaN where they do not
    settle (the second derivative has no limit there, e.g. the Hessian of a norm at 0)."""
    return _settled(*[_mixed(fn, plain, direction, k, h) for h in _SECOND_STEPS])


def _settled(coarse, fine):
    return np.where(np.isclose(coarse, fine, rtol=1e-3, atol=1e-6), fine, np.nan)


def _mixed(fn, plain, direction, k, h):
    out = np.empty_like(plain[k])
    for i in np.ndindex(plain[k].shape):
        e = np.zeros_like(plain[k])
        e[i] = h
        total = 0.0
        for sign_e, sign_v in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            shifts = {j: sign_v * h * np.asarray(direction[j]) for j in range(len(plain))}
            shifts[k] = shifts[k] + sign_e * e
            total += sign_e * sign_v * _at(fn, plain, shifts)
        out[i] = total / (4 * h * h)
    return out


def _at(fn, plain, shifts):
    moved = [p + shifts[j] if j in shifts else p for j, p in enumerate(plain)]
    with np.errstate(all="ignore"):
        return float(_numpy(fn(*[_like(m, p) for m, p in zip(moved, plain)])))


def _like(moved, original):
    return float(moved) if np.ndim(original) == 0 and not isinstance(original, np.ndarray) else moved


def _numpy(x):
    """Results as numpy: tensors detached, JAX arrays converted, tuples and lists kept as tuples."""
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return tuple(_numpy(a) for a in x)
    if hasattr(x, "detach"):
        x = x.detach().numpy()
    return np.asarray(x, dtype=float) if not isinstance(x, np.ndarray) else x


class Comparison:
    """What :func:`compare` found: ``results[system]`` (a :class:`Result`), ``missing[system]`` (why it did not
    run), and the table as text."""

    def __init__(self, args, results, missing):
        self.args, self.results, self.missing = args, results, missing

    def __str__(self):
        hv = self.results["autodiff"].hvp is not None
        header = ["system", "value", "gradient"] + (["Hv"] if hv else []) + ["vs FD"]
        rows = [header] + [self._row(name, r, hv) for name, r in self.results.items()]
        widths = [max(len(row[c]) for row in rows if len(row) > c) for c in range(len(header))]
        lines = ["compare at " + ", ".join(f"x{i} = {format_value(a)}" for i, a in enumerate(self.args))]
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        lines += [f"{name:<{widths[0]}}  {why}" for name, why in self.missing.items()]
        return "\n".join(lines)

    __repr__ = __str__

    def _row(self, name, r, hv):
        cells = [name, format_value(r.value), format_value(r.grad)] + ([format_value(r.hvp)] if hv else [])
        return cells + ["(referee)" if name == "finite differences" else self.verdict(name)]

    def verdict(self, name):
        """``=`` when ``name``'s gradient (and ``H v``) match finite differences, else what differs."""
        r, fd = self.results[name], self.results["finite differences"]
        differ = [what for what, a, b in (("gradient", r.grad, fd.grad), ("Hv", r.hvp, fd.hvp))
                  if a is not None and not _close(a, b)]
        return "=" if not differ else "differs: " + ", ".join(differ)


def _close(a, b):
    return all(np.allclose(x, y, rtol=1e-4, atol=1e-6, equal_nan=True) for x, y in zip(a, b))


def format_value(x):
    """A number or a small array as a short list (4 significant digits), a tuple of them joined by ``;``."""
    if isinstance(x, tuple):
        return format_value(x[0]) if len(x) == 1 else "; ".join(format_value(a) for a in x)
    a = np.asarray(x, float)
    if a.ndim == 0:
        return _number(float(a))
    if a.size > 8:
        return f"float64[{','.join(map(str, a.shape))}] norm {_number(float(np.linalg.norm(a)))}"
    return "[" + ", ".join(_number(float(v)) for v in a.ravel()) + "]"


def _number(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v + 0.0:.4g}"  # + 0.0: no "-0"
    return text if any(c in text for c in ".en") else text + ".0"
