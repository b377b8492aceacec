"""Passes over a program, each a function ``program -> program`` in its own module, each switchable off.

Built: dead-code elimination (:mod:`.dce`).  Not built yet (later stages of issue 42): constant folding,
common-subexpression elimination, fusion of elementwise chains into numba kernels, buffer planning.
"""

from .dce import dce

PASSES = {"dce": dce}  # name -> pass, in the order jit runs them
