"""``autodiff.jit``: trace a function once per signature into a program of primitive calls, replay it after.

One concept per module: the staging level that records (:mod:`.staging`), the program as data
(:mod:`.program`), its listing (:mod:`.listing`), the reference interpreter (:mod:`.replay`), the signature a
program is valid for (:mod:`.signature`), the errors for Python reading a traced value (:mod:`.errors`), the
passes (:mod:`.passes`) and the cache that ties them together (:mod:`.jit`).  ``docs/jit.md`` tells the model.
"""

from .errors import ConcretizationError
from .jit import CacheInfo, JitFallbackWarning, Jitted, jit

__all__ = ["jit", "Jitted", "CacheInfo", "ConcretizationError", "JitFallbackWarning"]
