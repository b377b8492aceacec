"""The parameter vector of a Hessian operator: its parameters laid end to end, as ``traversal.destructure`` lays them.

``autodiff`` never imports ``traversal``, so the order is worked out here from
the same facts ``destructure`` uses: the trainable filter, and a tied array's
home (its first trainable occurrence).  ``tests/engine/test_hvp_operator.py`` checks
the two agree.

>>> import numpy as np
>>> from autodiff._directions import Variables
>>> variables = Variables(({"w": np.ones((2, 2)), "s": 3.0, "b": np.zeros(1)},))
>>> vector = ParameterVector(variables, variables.homes())
>>> vector.size, vector.dtype
(5, dtype('float64'))
>>> vector.split(np.arange(5.0))  # one direction per variable: the float 3.0 is a value, not a parameter
[array([[0., 1.],
       [2., 3.]]), None, array([4.])]
"""

import numpy as np

from ._containers import node_of
from ._traced import value_of
from ._trees import leaves


class ParameterVector:
    """The variables that are parameters, laid end to end in ``traversal.destructure``'s order.

    A parameter is a float or complex array reached through trainable
    children (a tied array once, at its home), or a bare array or float
    argument.  Floats inside a structure are values, not parameters, as in
    ``destructure``.
    """

    def __init__(self, variables, homes):
        position = {path: k for k, (path, _) in enumerate(leaves(variables.primals))}
        chosen = [v for v, home in enumerate(homes) if _is_parameter(variables.leaves[v], home)]
        self.variables = sorted(chosen, key=lambda v: position[homes[v]])
        self.homes = homes
        self.count = len(variables.leaves)
        values = [value_of(variables.leaves[v]) for v in self.variables]
        self.shapes = [np.shape(x) for x in values]
        self.dtypes = [np.result_type(x) for x in values]
        self.offsets = np.cumsum([0] + [int(np.prod(s)) for s in self.shapes]).tolist()
        self.size = self.offsets[-1]
        self.dtype = np.result_type(*self.dtypes) if values else np.dtype(np.float64)

    def check_real(self, name):
        if self.dtype.kind == "c":
            raise TypeError(
                f"{name}: the parameters are complex, and the curvature of a real loss acts on them "
                "only real-linearly, so it is no complex matrix; pass the real and imaginary parts as separate "
                "real arrays, or apply op(v) directly"
            )

    def split(self, flat):
        """One direction per variable from a flat vector: each parameter's slice, ``None`` elsewhere."""
        directions = [None] * self.count
        for k, v in enumerate(self.variables):
            piece = flat[self.offsets[k]:self.offsets[k + 1]].reshape(self.shapes[k])
            directions[v] = piece.astype(self.dtypes[k], copy=False) if piece.dtype != self.dtypes[k] else piece
        return directions

    def join(self, per_variable):
        """The parameters' entries of ``per_variable`` end to end (zeros for ``None``), in ``dtype``."""
        parts = [np.zeros(int(np.prod(s)), self.dtype) if per_variable[v] is None else np.ravel(per_variable[v])
                 for v, s in zip(self.variables, self.shapes)]
        return np.concatenate(parts).astype(self.dtype, copy=False) if parts else np.zeros(0, self.dtype)


    def gather(self, structured):
        """The parameters' entries of ``structured`` (one gradient-shaped tree per argument, a tuple) end to end."""
        by_path = dict(leaves(structured))
        return self.join([by_path.get(home) for home in self.homes])


def flat_direction(name, variables, tangents, bare):
    """The :class:`ParameterVector` of ``variables`` when the one tangent is a flat vector over it (a 1-d
    array, unless it is the direction of one bare array argument of its shape, where the kinds coincide);
    ``None`` for a structured tangent."""
    t = tangents[0] if bare else None
    if type(t) is not np.ndarray or t.ndim != 1:
        return None
    primal = variables.primals[0]
    if isinstance(value_of(primal), np.ndarray) and np.shape(value_of(primal)) == t.shape:
        return None
    vector = ParameterVector(variables, variables.homes())
    if t.shape != (vector.size,):
        if node_of(primal) is None:  # a bare array or float: its own shape is the one to name
            return None
        raise ValueError(
            f"{name}: a flat direction must have the parameter vector's length {vector.size} "
            f"(traversal.destructure's), but got shape {t.shape}; pass a vector of that length, or a "
            "direction with the argument's structure"
        )
    return vector


def _is_parameter(leaf, home):
    """A float array (every variable is trainable), or a bare argument (an array or a float)."""
    return isinstance(value_of(leaf), np.ndarray) or len(home) == 1
