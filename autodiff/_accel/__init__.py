"""Accelerations, kept beside the reference core (``docs/design.md``).

Each module here makes something the reference core already does faster, and plugs in through a small,
named hook; the reference code never needs it to be right.  ``AUTODIFF_REFERENCE=1`` in the environment,
read once at import, switches every acceleration off at once, so the reference core runs alone (CI runs the
suite both ways).  ``AUTODIFF_ACCEL_OFF=record,backward`` (a comma-separated list of the names below)
switches some off alone, to measure what each buys (``python -m bench.accelerations``): ``record`` (the
unrolled recording), ``backward`` (the unrolled backward pass), ``reductions`` (fused model-wide reductions
and the reductions' kernel forwards), ``batching`` (vmap's batched outer products in pooled buffers),
``collectors`` (traversal's tight-loop collectors and compiled readers), ``elementwise`` (float64 ``tanh`` on a
numba kernel), ``optimisers`` (``optimisers.update`` in one tight walk, ``optimisers/_accel.py``),
``optimiser_kernels`` (the plain steps of the common rules in one pass, ``optimisers/_fused.py``).

>>> isinstance(REFERENCE, bool), enabled("record") == (not REFERENCE and "record" not in OFF)
(True, True)
"""

import os

REFERENCE = os.environ.get("AUTODIFF_REFERENCE", "") == "1"
OFF = frozenset(filter(None, os.environ.get("AUTODIFF_ACCEL_OFF", "").split(",")))


def enabled(name):
    """Is the acceleration ``name`` plugged in?  Not under ``AUTODIFF_REFERENCE=1``, nor when it is in
    ``AUTODIFF_ACCEL_OFF``."""
    return not REFERENCE and name not in OFF
