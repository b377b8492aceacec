"""Plain-value samplers: ``norm.rvs(loc, scale, size=, random_state=)``, scipy's own, beside the densities.

A sample is a plain numpy array, never traced: ``rvs`` has no gradient.  Traced parameters are read as
their values (the draw is the one scipy makes from them with the same ``random_state``).  A
reparametrised sample, whose gradient flows into the parameters, is written by the user from a plain
draw: ``loc + scale * norm.rvs(size=n, random_state=rng)``.
"""

import numpy as np
import scipy.stats

from ...extend import plain_value, value_of

__all__ = ["sampler"]


def _plain(name, x):
    if value_of(x) is not plain_value(x):  # under vmap: the batch's values, not one example's (under jit: a call's)
        raise TypeError(
            f"autodiff.scipy.stats.{name}.rvs was called under vmap on a batched parameter (or under jit on a traced "
            "one); a sampler draws plain values and does not batch or trace. Draw outside vmap (jit) with the batch "
            "in the parameters' shape (size=(B, ...)), and pass the draws into the vmapped (jitted) function"
        )
    return plain_value(x)


def sampler(name):
    """``scipy.stats.<name>.rvs`` on the plain values of its arguments: same signature, same draws."""
    dist = getattr(scipy.stats, name)

    def rvs(*args, size=None, random_state=None, **kwargs):
        args = [_plain(name, a) for a in args]
        kwargs = {k: _plain(name, v) for k, v in kwargs.items()}
        return np.asarray(dist.rvs(*args, size=size, random_state=random_state, **kwargs))

    rvs.__name__, rvs.__qualname__ = "rvs", f"{name}.rvs"
    rvs.__doc__ = (
        f"Draws from ``scipy.stats.{name}`` (same arguments, ``size=`` and ``random_state=``, a ``Generator``, a "
        "seed or ``None``): a plain numpy array, no gradient; traced parameters are read as their values."
    )
    return rvs
