"""A fused equation: a run of elementwise equations that jit's fusion (:mod:`.fusion`) made one.

A :class:`Fused` holds the run as a small program of its own, its ``body``: the inputs are the values the run
reads from outside it (earlier values, constant arrays of its shape), the outputs the values the rest of the
program reads.  It runs in tiers, so a program's first calls cost no compilation:

1. its first :data:`COMPILE_AFTER` calls replay the body with the reference interpreter (the run's own
   primitives, one numpy call each);
2. then it compiles the body into one numba kernel, which loops once over the elements computing each
   equation's scalar formula (:mod:`.formulas`) on scalars in registers, and writes the outputs only; every later
   call runs the kernel.  The kernel's source goes to ``__pycache__/fused/`` beside this file when that folder is
   writable, so numba caches the compiled code across processes; when it is not, the kernel is compiled in memory.

Each output of the kernel is a fresh array, or an operand's own array when buffer planning (:mod:`.planning`)
found one that dies there (``into``: per output, the operand's position).  That is safe because the kernel reads
element ``i`` of every input into a local before it writes element ``i`` of any output, and never reads element
``i`` again (:func:`kernel_source` keeps this order).  Such an output is not a parameter of its own: the kernel
writes it through the operand's own parameter (``a0[i] = v7``), so numba's compiler sees one array read and written
at the same index and vectorises the loop.  Passed twice, as an input and as an output, the one array fails the
compiler's run-time check that the two do not overlap, and the unvectorised loop runs: on 8192 float32 values
(the small HVP's last fused run) 7.7 µs against 2.6 for a fresh output (AMD EPYC, Zen 3, 2026-12-07).

With numba switched off (``NUMBA_DISABLE_JIT``, ``AUTODIFF_ACCEL_OFF=kernels``) or unable to compile (one
warning), and for any call the kernel refuses (a value of another dtype), the body's replay runs: never a wrong
answer.  Traced operands (an outer transform's) always take the replay, so the outer level sees the primitives.

>>> import numpy as np, autodiff, autodiff.numpy as anp
>>> from autodiff._accel.fusion import fuse_runs
>>> program = fuse_runs(autodiff.jit(lambda x: anp.tanh(anp.sin(x) * 0.9) * 2.0, passes=()).lower(np.zeros(3)))
>>> fused = program.equations[0].prim
>>> print(fused.body)
program fused[4]
  in  %0:float64[3]
  %1 = sin(%0) -> float64[3]
  %2 = multiply(%1, 0.9) -> float64[3]
  %3 = tanh(%2) -> float64[3]
  %4 = multiply(%3, 2.0) -> float64[3]
  out [%4]
>>> bool(np.allclose(fused.fun(np.ones(3)), np.tanh(np.sin(1.0) * 0.9) * 2.0, rtol=1e-12))
True
"""

import hashlib
import importlib.util
import os
import sys
import threading
import warnings

import numpy as np

from .._jit.program import Var
from .._jit.replay import replay
from . import numba_jit
from .formulas import FORMULAS

COMPILE_AFTER = 10  # calls replayed before the kernel compiles (a fraction of a second; numba's first, longer)

_kernels = {}  # source -> compiled kernel (False: numba could not): equal runs share one
_lock = threading.Lock()
_warned = []


class Fused:
    """A run of elementwise equations as one equation's primitive: ``fun(*operands)`` is the run's outputs (one
    array, or a tuple of them), ``body`` the run as a program, ``source`` its kernel's code."""

    shape_follows_operands = True  # the call-site form checks no shape after it (codegen.follows_operands)

    def __init__(self, body, shape, dtype, into=()):
        self.__name__ = body.name
        self.body, self.shape, self.dtype = body, shape, np.dtype(dtype)
        self.into = tuple(into) or (None,) * len(body.outputs)  # per output: the operand it is written into
        self.calls = 0  # calls before the kernel was compiled
        self.refused = 0  # calls the kernel refused (the replay ran instead)
        self.kernel = None  # the compiled kernel once built, False if it cannot be
        self._source = None

    def __repr__(self):
        return f"<fused {len(self.body.equations)} equations>"

    def __call__(self, *operands):
        """The outputs, by the body's primitives (traced operands: the outer transform sees each one)."""
        leaves = replay(self.body, list(operands))
        return leaves[0] if len(leaves) == 1 else tuple(leaves)

    def fun(self, *operands):
        """The outputs for plain operands: the body's replay until the kernel is compiled, the kernel after (each
        output a fresh array or, per ``into``, its operand's own); the replay always makes fresh arrays."""
        kernel = self.kernel
        if kernel is None:
            self.calls += 1
            if self.calls < COMPILE_AFTER:
                return self(*operands)
            kernel = self.compile()
        if kernel is False:
            return self(*operands)
        return self._launch(kernel, operands)

    def compile(self):
        """Compile the kernel now (or find it compiled for an equal run); ``False`` when numba cannot."""
        with _lock:
            if self.kernel is None:
                source = self.source
                if source not in _kernels:
                    _kernels[source] = _compile(source, self.dtype, self.body.n_inputs, self.into)
                self.kernel = _kernels[source]
        return self.kernel

    @property
    def source(self):
        """The kernel's code: one loop over the elements, one line per equation."""
        if self._source is None:
            self._source = kernel_source(self.body, self.dtype, self.into)
        return self._source

    def _launch(self, kernel, operands):
        arrays = [a for a in operands if type(a) is np.ndarray and a.shape == self.shape]  # never past an end
        if len(arrays) == len(operands):
            outs = [np.empty(self.shape, self.dtype) if p is None else _writable(arrays, p) for p in self.into]
            fresh = [out.reshape(-1) for out, p in zip(outs, self.into) if p is None]
            try:
                kernel(*[a.reshape(-1) for a in arrays], *fresh)
                return outs[0] if len(outs) == 1 else tuple(outs)
            except Exception:  # an operand of another dtype than traced: numba refuses it
                pass
        self.refused += 1  # the replay is never wrong
        return self(*operands)


def _writable(arrays, position):
    """Operand ``position``'s array, for an output to be written into: itself when the kernel can write it in its
    own memory (C order, so its ``reshape(-1)`` is no copy; writable), else (in ``arrays`` too) a copy."""
    a = arrays[position]
    flags = a.flags
    if not (flags.c_contiguous and flags.writeable):
        a = arrays[position] = np.array(a, order="C")
    return a


def kernel_source(body, dtype, into=()):
    """The numba source of ``body``'s kernel: ``kernel(a0, ..., o0, ...)`` over 1-D arrays of ``dtype``.

    The loop body reads element ``i`` of every input first and writes element ``i`` of the outputs last, so an
    output may go into an input's own array: output ``j`` is written into ``a<into[j]>`` where ``into`` names an
    operand (that array is then no read-only parameter), into a parameter ``o<j>`` of its own where it says
    ``None`` or is empty.  No line reads an element already written.

    Scalar constants become module constants of the kernel's dtype (``k0``), written exactly (``float.hex``).

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> body = autodiff.jit(lambda x, y: (x * 2.0 + y, x - y), passes=()).lower(np.ones(2), np.ones(2))
    >>> print(kernel_source(body, np.float64, into=(1, None)).split("def ")[1])
    kernel(a0, a1, o1):
        for i in range(a0.size):
            v0 = a0[i]
            v1 = a1[i]
            v2 = v0 * k0
            v3 = v2 + v1
            v4 = v0 - v1
            a1[i] = v3
            o1[i] = v4
    <BLANKLINE>
    """
    into = tuple(into) or (None,) * len(body.outputs)
    constants, lines = {}, []
    for k in range(body.n_inputs):
        lines.append(f"        v{k} = a{k}[i]")
    for prim, operands, _, out in body.equations:
        names = [f"v{a.ref}" if type(a) is Var else _constant(constants, a, dtype) for a in operands]
        lines.append(f"        v{out} = {FORMULAS[prim].format(*names)}")
    lines += [f"        {_written(j, p)}[i] = v{o.ref}" for j, (o, p) in enumerate(zip(body.outputs, into))]
    arrays = [f"a{k}" for k in range(body.n_inputs)] + [_written(j, p) for j, p in enumerate(into) if p is None]
    kind = np.dtype(dtype).name
    header = ["import numpy as np", "", f"ONE = np.{kind}(1.0)"]
    header += [f"{name} = np.{kind}(float.fromhex({text!r}))" for text, name in constants.items()]
    loop = ["", "", f"def kernel({', '.join(arrays)}):", f"    for i in range({arrays[0]}.size):"]
    return "\n".join(header + loop + lines) + "\n"


def _written(j, position):
    """The parameter output ``j`` is written through: its operand's, else its own."""
    return f"o{j}" if position is None else f"a{position}"


def _constant(constants, value, dtype):
    """The name of the scalar ``value`` in ``dtype`` (numpy casts a Python number to the array's dtype so)."""
    text = float(np.dtype(dtype).type(value)).hex()
    return constants.setdefault(text, f"k{len(constants)}")


def _compile(source, dtype, n_inputs, into):
    """The compiled kernel of ``source`` (``n_inputs`` operands, outputs written ``into`` them or fresh), or
    ``False`` (numba switched off, missing, or failing: warned once)."""
    if not numba_jit.use_numba():
        return False
    try:
        import numba

        function, cached = _define(source)
        t, d = numba.types, numba.from_dtype(np.dtype(dtype))
        written, fresh = numba_jit.writable(t, d, 1), [p for p in into if p is None]
        inputs = [written if k in into else numba_jit.readonly(t, d, 1, "C") for k in range(n_inputs)]
        signature = t.void(*inputs, *[written] * len(fresh))
        return numba.njit([signature], cache=cached, nogil=True, error_model="numpy")(function)
    except Exception as error:  # the replay is never wrong: say so once, and keep it
        if not _warned:
            _warned.append(error)
            warnings.warn(f"jit fusion: numba could not compile a fused kernel ({type(error).__name__}: {error}); "
                          "such runs replay their equations unfused", RuntimeWarning, stacklevel=4)
        return False


def _define(source):
    """``(kernel function, whether numba may cache it)``: imported from a file under ``__pycache__/fused/`` (numba
    caches beside a function's source file) when that folder is writable, else run from memory."""
    folder = _cache_folder()
    if folder is None:
        namespace = {}
        exec(compile(source, "<autodiff fused kernel>", "exec"), namespace)  # noqa: S102 (our own generated code)
        return namespace["kernel"], False
    name = "fused_" + hashlib.sha1(source.encode()).hexdigest()[:20]
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):  # written once: numba's cache keys on the file's time stamp
        partial = f"{path}.{os.getpid()}.{threading.get_ident()}"
        with open(partial, "w") as f:
            f.write(source)
        os.replace(partial, path)
    spec = importlib.util.spec_from_file_location(f"_autodiff_{name}", path)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # numba's cache finds it by name
    spec.loader.exec_module(module)
    return module.kernel, True


def _cache_folder():
    """``__pycache__/fused`` beside this file, made if need be, or ``None`` when it cannot be written."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__", "fused")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None
