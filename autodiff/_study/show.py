"""Readable tangents: a structural gradient as a tree of key paths, and where tied gradients went."""

import numpy as np

from .._paths import dotted
from .._structural import Tangent
from .._tangents import NoTangent, Thunk, ZeroTangent
from .._traced import Traced
from .._trees import leaves, transform


def show(tangent, name="grad"):
    """A structural gradient as an indented tree: key paths, shapes, dtypes and norms.

    ``None`` (no gradient), ``ZeroTangent`` (symbolic zero) and unevaluated
    ``Thunk`` s are shown as such, never materialised.

    Walked by autodiff's one tree transform: iterative (a structure nested 10,000 deep is fine), and a
    container that contains itself is refused with a ``ValueError`` naming its key path, as everywhere else.

    >>> import numpy as np
    >>> print(show({"w": np.array([3.0, 4.0]), "n": None, "z": ZeroTangent()}))
    grad: dict
      grad.w  float64[2]  norm 5
      grad.n  None (no gradient)
      grad.z  ZeroTangent (symbolic zero)
    """
    # transform finishes a container after its children, but its line goes above theirs: each line is keyed by
    # the number of the first line at or under its path (a container takes its first child's) and its depth.
    lines = []  # (key, depth, text)

    def at_leaf(path, x):
        text = f"{_label(path)}  {_leaf(x)}" if len(path) > 1 else f"{name}: {_leaf(x)}"
        return _noted(lines, len(lines), path, text)

    def at_container(path, x, node, keys, firsts):
        return _noted(lines, firsts[0] if firsts else len(lines), path, f"{_label(path)}: {_container(x)}")

    transform(tangent, at_leaf, at_container, (name,))
    return "\n".join(text for _, _, text in sorted(lines))


def _label(path):
    """``grad.layers[0].w`` for the key path ``("grad", "layers", 0, "w")``, indented by its depth."""
    return "  " * (len(path) - 1) + path[0] + dotted(path[1:])


def _noted(lines, key, path, text):
    lines.append((key, len(path), text))
    return key


def _container(x):
    if type(x) is Tangent:
        return f"Tangent[{x.primal_type.__name__}]"
    return type(x).__name__


def _leaf(x):
    if x is None:
        return "None (no gradient)"
    if type(x) is ZeroTangent:
        return "ZeroTangent (symbolic zero)"
    if type(x) is NoTangent:
        return "NoTangent (nothing to differentiate)"
    if type(x) is Thunk:
        return "Thunk (evaluated)" if x.evaluated else "Thunk (not evaluated)"
    level = ""
    while type(x) is Traced:
        level, x = f"  traced at level {x.level}", x.value
    if isinstance(x, (np.ndarray, np.generic, float, complex)):
        shape = ",".join(map(str, np.shape(x)))
        return f"{np.result_type(x)}[{shape}]  norm {float(np.linalg.norm(np.ravel(x))):.6g}{level}"
    return type(x).__name__


def ties(model, gradient, name="model"):
    """For each array that appears more than once in ``model``, where its gradient went.

    >>> import numpy as np
    >>> w = np.ones(2)
    >>> print(ties({"enc": w, "dec": w, "b": np.zeros(1)}, {"enc": 2 * w, "dec": None, "b": None}))
    model.enc = model.dec  float64[2]: gradient at model.enc (norm 2.82843); None at model.dec
    """
    places = {}
    for path, leaf in leaves(model, ()):
        if isinstance(leaf, np.ndarray):
            places.setdefault(id(leaf), (leaf, []))[1].append(path)
    grads = dict(leaves(gradient, ())) if gradient is not None else {}
    lines = []
    for leaf, paths in places.values():
        if len(paths) < 2:
            continue
        names = [name + dotted(p) for p in paths]
        where = []
        for p, n in zip(paths, names):
            g = _lookup(grads, p)
            where.append(f"None at {n}" if g is None else f"gradient at {n} ({_leaf(g).split('  ', 1)[1]})")
        shape = ",".join(map(str, leaf.shape))
        lines.append(f"{' = '.join(names)}  {leaf.dtype}[{shape}]: {'; '.join(where)}")
    return "\n".join(lines) if lines else "no tied arrays"


def _lookup(grads, path):
    """The gradient leaf at ``path``, or ``None`` when a collapsed subtree swallowed it."""
    for k in range(len(path), -1, -1):
        if path[:k] in grads:
            return grads[path[:k]] if k == len(path) else None
    return None
