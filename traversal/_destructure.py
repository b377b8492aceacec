"""destructure: a model's trainable arrays as one flat vector, and the way back."""

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import value_of

from ._cache import IdentityCache
from ._collect import trainables
from ._trainable import TrainableWalk, isnumeric
from ._walks import NOPRUNE, CachedWalk, ExcludeWalk, execute

__all__ = ["destructure"]


def destructure(model):
    """Return ``(flat, rebuild)``: every distinct trainable array once, in one 1-D vector.

    ``flat``'s dtype is promoted across the parameters.  ``rebuild(v)`` gives a
    new model with ``v``'s values: same ties, each array's own shape and dtype,
    non-trainable fields carried over unchanged.  Both directions are
    differentiable, and the gradient of ``rebuild`` adds every tied position.

    >>> import numpy as np
    >>> w = np.ones((2, 2), np.float32)
    >>> flat, rebuild = destructure({"w": w, "tied": w, "b": np.zeros(3), "n": 4})
    >>> flat
    array([1., 1., 1., 1., 0., 0., 0.])
    >>> new = rebuild(np.arange(7.0))
    >>> new["w"], new["tied"] is new["w"], new["n"]
    (array([[0., 1.],
           [2., 3.]], dtype=float32), True, 4)
    """
    arrays = trainables(model)
    dtype = np.result_type(*[value_of(a).dtype for a in arrays]) if arrays else np.dtype(np.float64)
    if not arrays:
        return np.zeros(0, dtype), Rebuild(model, arrays)
    flat = anp.concatenate([_as(anp.ravel(a), dtype) for a in arrays])
    return flat, Rebuild(model, arrays)


def _as(x, dtype):
    return x if value_of(x).dtype == dtype else anp.astype(x, dtype)


class Rebuild:
    """The ``rebuild`` half of :func:`destructure`: a flat vector back into the model's shape."""

    def __init__(self, model, arrays):
        self.model = model
        self.layout = [(id(a), value_of(a).shape, value_of(a).dtype, value_of(a).size) for a in arrays]
        self.length = sum(size for *_, size in self.layout)
        self._keep = arrays  # the ids above stay valid while we hold the arrays

    def __call__(self, flat):
        shape = anp.shape(flat)
        if shape != (self.length,):
            raise ValueError(
                f"rebuild: got a vector of shape {shape}, but the model has {self.length} "
                f"trainable values; pass a 1-D vector of length {self.length} (e.g. from destructure)"
            )
        if isinstance(flat, np.ndarray):
            flat = flat.copy()  # the new arrays must not alias the caller's vector
        pieces, offset = {}, 0
        for key, piece_shape, dtype, size in self.layout:
            pieces[key] = _as(anp.reshape(flat[offset:offset + size], piece_shape), dtype)
            offset += size
        place = ExcludeWalk(TrainableWalk(), lambda path, leaf: pieces[id(leaf)], isnumeric)
        return execute(CachedWalk(place, IdentityCache(), NOPRUNE), self.model)
