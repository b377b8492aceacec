"""Accelerations, kept beside the reference core (``docs/design.md``).

Each module here makes something the reference core already does faster; the reference never needs it to
be right.  :func:`install` is the one place autodiff's accelerations fill their slots of the hook table
(:mod:`autodiff._hooks`), each only when switched on: ``AUTODIFF_REFERENCE=1`` leaves them all out,
``AUTODIFF_ACCEL_OFF=name,name`` the ones named.  ``autodiff.accelerations()`` lists them, with the slots
they fill and why one is off; traversal's, optimisers' and layers' accelerations fill theirs at their import.

The engines (no slot of their own; other accelerations and the layers' numba loops call them) are noted
here too, so that one list names everything that can be switched off: ``kernels`` (numba kernels,
:mod:`.kernels`, :mod:`.numba_jit`), ``threads`` (the second thread, :mod:`.parallel`), ``buffers`` (pools
of recycled arrays, :mod:`.buffers`).

>>> import autodiff
>>> sorted(autodiff.accelerations())[:3]
['backward', 'batching', 'buffers']
"""

import os
from importlib.util import find_spec

from .._hooks import fill


def install():
    """Fill autodiff's slots with the accelerations that are on (called once, by ``autodiff/__init__.py``)."""
    from .. import _for_traversal  # noqa: F401  (declares total's known_total slot)
    from .._jit.passes import codegen
    from . import (
        backward,
        batching,
        elementwise,
        flatten,
        fusion,
        kernels,
        parallel,
        planning,
        record,
        reductions,
        specialise,
    )

    fill("record", "the one-traced-argument case of recording, unrolled", record=record.record_fast)
    fill("backward", "the backward pass with the common rules' pulls unrolled", backward=backward.backward_unrolled)
    fill("layouts", "a structure seen before read by its compiled layout instead of walked, and rebuilt by "
         "generated code", flatten=flatten.flatten, rebuilder=flatten.rebuilder)
    fill("reductions", "known reductions over a whole model fused and threaded as one tape entry, sumsq's "
         "and abssum's forwards on numba kernels, and one norm's inverse without where",
         known_total=reductions.known_total, sumsq64=reductions.sumsq64, abssum64=reductions.abssum64,
         inverse_norm=reductions.inverse_norm)
    fill("batching", "vmap's batched outer products written into a pooled buffer on two threads",
         batched_outer=batching.batched_outer_fast)
    fill("elementwise", "float64 tanh on a numba kernel", available=not elementwise.numpy_tanh_is_vectorised(),
         reason="numpy's own float64 tanh is vectorised here (AVX-512)", tanh=elementwise.tanh)
    numba = kernels._use_numba() and find_spec("numba") is not None
    fill("kernels", "numba kernels for the hot reductions and the layers' loops", available=numba,
         reason="numba is missing or NUMBA_DISABLE_JIT is set")
    fill("threads", "a second thread for large reductions, convolutions and optimiser steps",
         available=not parallel._SERIAL, reason=f"{os.cpu_count()} CPU")
    fill("buffers", "pools of recycled large arrays")
    fill("jit_fusion", "a jitted program's runs of elementwise equations as one numba kernel each",
         available=numba, reason="numba is missing or NUMBA_DISABLE_JIT is set", jit_fuse=fusion.fuse)
    fill("jit_planning", "a jitted program's elementwise ufuncs writing into operands that die there",
         jit_plan=planning.plan)
    fill("jit_specialise", "a jitted program's sums to a shape and matrix products with their axes and transposes "
         "worked out once, and its sums, softmax and log_softmax along short rows in one loop",
         jit_specialise=specialise.specialise)
    fill("jit_callsite", "a jitted program run by one generated Python function, not the interpreter",
         jit_callsite=codegen.callsite)
