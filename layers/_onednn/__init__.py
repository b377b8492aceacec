"""The optional oneDNN backend of the convolutions (the ``[onednn]`` extra, Linux x86_64).

With ``onednn-cpu-gomp==2023.2.0`` installed (oneDNN 3.2, Apache-2.0), ``Conv2d`` on float32 arrays runs
oneDNN's convolution primitives through its C API (:mod:`._library`, :mod:`._convolutions`), wrapped as
three primitives that are each other's pullbacks (:mod:`._primitives`), so ``grad`` of ``grad``, ``jvp``
and ``vmap`` run through them.  The numpy im2col path (:mod:`layers._conv`) stays the reference: it runs
without the extra, under ``AUTODIFF_REFERENCE=1`` or ``AUTODIFF_ACCEL_OFF=onednn``, in float64, after
``set_enabled(False)``, and, with one warning, when oneDNN fails its self-check at first use
(:mod:`._switch`).  See docs/convolutions.md.

>>> isinstance(describe(), str)
True
"""

from ._primitives import conv_input, conv_weight, onednn_conv2d
from ._switch import OneDNNWarning, convolve, describe, install, installed, ready, set_enabled

__all__ = ["OneDNNWarning", "conv_input", "conv_weight", "convolve", "describe", "install",
           "installed", "onednn_conv2d", "ready", "set_enabled"]
