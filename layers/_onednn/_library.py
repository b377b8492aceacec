"""oneDNN's C API through ctypes: finding ``libdnnl.so.3``, the calls we use, one CPU engine and stream.

The ``onednn-cpu-gomp`` wheel (oneDNN 3.2, the ``[onednn]`` extra) puts ``libdnnl.so.3`` in the
environment's ``lib`` folder; :func:`load` finds it through the wheel's file list (or ``AUTODIFF_ONEDNN_LIB``,
a path) and declares the few calls :mod:`layers._onednn._convolutions` makes.  Every call's status is
checked: anything but success raises :class:`OneDNNError` naming the call, which the dispatch turns into the
numpy reference and one warning.  The enum values are oneDNN 3.x's (``dnnl_types.h``).
"""

import ctypes
import functools
import os
from importlib import metadata

F32 = 3  # dnnl_f32
FORMAT_ANY = 1  # dnnl_format_tag_any: the primitive picks the layout (weights)
CPU = 1  # dnnl_cpu
IN_ORDER = 1  # dnnl_stream_in_order
FORWARD_TRAINING, BACKWARD_DATA, BACKWARD_WEIGHTS = 64, 160, 192  # dnnl_prop_kind_t
CONVOLUTION_DIRECT = 1  # dnnl_convolution_direct
SRC_MD, DIFF_SRC_MD, WEIGHTS_MD, DIFF_WEIGHTS_MD, DST_MD, DIFF_DST_MD = 129, 130, 131, 132, 133, 134
IMPL_INFO = 8  # dnnl_query_impl_info_str
ARG_SRC, ARG_DST, ARG_WEIGHTS = 1, 17, 33  # DNNL_ARG_*; a reorder reads ARG_SRC (FROM), writes ARG_DST (TO)
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS = 129, 145, 161

Dims = ctypes.c_int64 * 12  # dnnl_dims_t
p = ctypes.c_void_p


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``: which argument, which memory."""

    _fields_ = [("arg", ctypes.c_int), ("memory", p)]


class Version(ctypes.Structure):
    """``dnnl_version_t``."""

    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int), ("hash", ctypes.c_char_p),
                ("cpu_runtime", ctypes.c_uint), ("gpu_runtime", ctypes.c_uint)]


class OneDNNError(RuntimeError):
    """A oneDNN call returned an error status (or the library could not be loaded)."""


_SIGNATURES = {  # name: argument types; every one returns dnnl_status_t (an int) unless listed in _RETURNS
    "dnnl_version": [],
    "dnnl_engine_create": [ctypes.POINTER(p), ctypes.c_int, ctypes.c_size_t],
    "dnnl_stream_create": [ctypes.POINTER(p), p, ctypes.c_uint],
    "dnnl_stream_wait": [p],
    "dnnl_memory_desc_create_with_strides": [ctypes.POINTER(p), ctypes.c_int, Dims, ctypes.c_int, Dims],
    "dnnl_memory_desc_create_with_tag": [ctypes.POINTER(p), ctypes.c_int, Dims, ctypes.c_int, ctypes.c_int],
    "dnnl_memory_desc_destroy": [p],
    "dnnl_memory_desc_equal": [p, p],
    "dnnl_memory_desc_get_size": [p],
    "dnnl_memory_create": [ctypes.POINTER(p), p, p, p],
    "dnnl_memory_destroy": [p],
    "dnnl_convolution_forward_primitive_desc_create":
        [ctypes.POINTER(p), p, ctypes.c_int, ctypes.c_int, p, p, p, p, Dims, Dims, Dims, Dims, p],
    "dnnl_convolution_backward_data_primitive_desc_create":
        [ctypes.POINTER(p), p, ctypes.c_int, p, p, p, Dims, Dims, Dims, Dims, p, p],
    "dnnl_convolution_backward_weights_primitive_desc_create":
        [ctypes.POINTER(p), p, ctypes.c_int, p, p, p, p, Dims, Dims, Dims, Dims, p, p],
    "dnnl_reorder_primitive_desc_create": [ctypes.POINTER(p), p, p, p, p, p],
    "dnnl_primitive_desc_query_md": [p, ctypes.c_int, ctypes.c_int],
    "dnnl_primitive_desc_query": [p, ctypes.c_int, ctypes.c_int, p],
    "dnnl_primitive_desc_clone": [ctypes.POINTER(p), p],
    "dnnl_primitive_desc_destroy": [p],
    "dnnl_primitive_create": [ctypes.POINTER(p), p],
    "dnnl_primitive_execute": [p, p, ctypes.c_int, ctypes.POINTER(ExecArg)],
    "dnnl_primitive_destroy": [p],
    "dnnl_sgemm": [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_float,
                   p, ctypes.c_int64, p, ctypes.c_int64, ctypes.c_float, p, ctypes.c_int64],
}
_RETURNS = {"dnnl_version": ctypes.POINTER(Version), "dnnl_primitive_desc_query_md": p,
            "dnnl_memory_desc_equal": ctypes.c_int, "dnnl_memory_desc_get_size": ctypes.c_size_t}


def _path():
    """Where ``libdnnl.so.3`` is: ``AUTODIFF_ONEDNN_LIB``, else the installed wheel's copy, else the loader's
    search path."""
    if os.environ.get("AUTODIFF_ONEDNN_LIB"):
        return os.environ["AUTODIFF_ONEDNN_LIB"]
    try:
        files = metadata.files("onednn-cpu-gomp") or []
    except metadata.PackageNotFoundError:
        return "libdnnl.so.3"
    found = [f.locate() for f in files if f.name == "libdnnl.so.3"]
    return str(found[0]) if found else "libdnnl.so.3"


@functools.cache
def load():
    """The library with its calls declared; :class:`OneDNNError` when it is missing or lacks a call."""
    try:
        lib = ctypes.CDLL(_path())
    except OSError as e:
        raise OneDNNError(f"layers._onednn: cannot load oneDNN ({e}); install the extra with "
                          "pip install 'autodiff-traversal[onednn]' (Linux x86_64)") from e
    for name, argtypes in _SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is None:
            raise OneDNNError(f"layers._onednn: {_path()} has no {name}; oneDNN 3.2 (onednn-cpu-gomp==2023.2.0) "
                              "is the version this backend is written for")
        fn.argtypes, fn.restype = argtypes, _RETURNS.get(name, ctypes.c_int)
    return lib


def call(name, *args):
    """``name(*args)``, raising :class:`OneDNNError` on an error status."""
    status = getattr(load(), name)(*args)
    if status != 0:
        raise OneDNNError(f"layers._onednn: {name} returned status {status}")


def out(name, *args):
    """``name(&handle, *args)``: the handle a create call writes."""
    handle = p()
    call(name, ctypes.byref(handle), *args)
    return handle


@functools.cache
def engine():
    """The CPU engine (index 0)."""
    return out("dnnl_engine_create", CPU, 0)


@functools.cache
def stream():
    """One in-order stream on :func:`engine`: calls run in order, and ``dnnl_stream_wait`` ends each."""
    return out("dnnl_stream_create", engine(), IN_ORDER)


def version():
    """oneDNN's version, ``"3.2.0"``."""
    v = load().dnnl_version().contents
    return f"{v.major}.{v.minor}.{v.patch}"


def dims(values):
    """A ``dnnl_dims_t`` holding ``values``."""
    return Dims(*values)
