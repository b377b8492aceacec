"""traversal's accelerations, beside its reference walks (``docs/design.md``): off under ``AUTODIFF_REFERENCE=1``.

- :mod:`traversal._accel.collect`: ``total``'s collectors (distinct parameters, (parameter, gradient) pairs)
  in tight loops with per-type getters, and compiled readers (:mod:`traversal._accel.readers`) for a
  structure seen before; the reference is :mod:`traversal._collect`, built from walks.

>>> from traversal._accel import REFERENCE
>>> isinstance(REFERENCE, bool)
True
"""

from autodiff._hooks import REFERENCE

__all__ = ["REFERENCE"]
