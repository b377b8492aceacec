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
``i`` again (:func:`kernel_source` keeps this order).  The kernel writes such an output through the operand's own
flat view (``x0[i] = v7``), so numba's compiler sees one array read and written at the same index and vectorises
the loop.  Passed twice, as an input and as an output, the one array fails the
compiler's run-time check that the two do not overlap, and the unvectorised loop runs: on 8192 float32 values
(the small HVP's last fused run) 7.7 µs against 2.6 for a fresh output (AMD EPYC, Zen 3, 2026-12-07).

The kernel takes the operands as they are (arrays of the traced shape, C-ordered) and makes its fresh outputs
itself, so a launch costs numba's dispatch and little more: on MAML's fused runs of 10 values 1.3-1.5 µs, where
it took 3.9 when Python flattened the operands and made the outputs (AMD EPYC, Zen 3, 2026-12-07, an hour apart).
An operand of another layout (a transpose's view) or a read-only one to write into is copied to a C-ordered,
writable array first.

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

_kernels = {}  # (source, axes) -> compiled kernel (False: numba could not): equal runs share one
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
                key = self.source, len(self.shape)  # one kernel per number of axes (its signature's)
                if key not in _kernels:
                    _kernels[key] = _compile(self.source, self.dtype, self.body.n_inputs, self.into,
                                             len(self.shape))
                self.kernel = _kernels[key]
        return self.kernel

    @property
    def source(self):
        """The kernel's code: one loop over the elements, one line per equation."""
        if self._source is None:
            self._source = kernel_source(self.body, self.dtype, self.into)
        return self._source

    def _launch(self, kernel, operands):
        """The kernel on the operands as they are; on C-ordered, writable copies where it refused them (a view of
        another layout, a read-only array to write into); the replay where it refuses those too (another dtype)
        or a shape is not the traced one (checked here for the first operand, by the kernel for the others,
        before it reads or writes)."""
        if getattr(operands[0], "shape", None) == self.shape:  # the kernel checks the others against this one
            try:
                return kernel(*operands)
            except Exception:
                pass
            try:
                return kernel(*[np.require(a, requirements="CW") for a in operands])
            except Exception:
                pass
        self.refused += 1  # the replay is never wrong
        return self(*operands)


def kernel_source(body, dtype, into=()):
    """The numba source of ``body``'s kernel: ``kernel(a0, ...)`` over arrays of ``dtype`` and one shape, returning
    the outputs.

    It checks that its operands share the first one's shape (its caller checks that one), then loops once over
    their elements (``x0``, ... are their flat views): whatever the shape, one kernel per number of axes.  The
    loop body reads element ``i`` of every input first and writes element ``i`` of the outputs last, so an output
    may go into an input's own array: output ``j`` is written into ``a<into[j]>`` where ``into`` names an operand
    (that array is then no read-only parameter), into a new array ``o<j>`` where it says ``None`` or is empty.  No
    line reads an element already written.

    Scalar constants become module constants of the kernel's dtype (``k0``), written exactly (``float.hex``).

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> body = autodiff.jit(lambda x, y: (x * 2.0 + y, x - y), passes=()).lower(np.ones(2), np.ones(2))
    >>> print(kernel_source(body, np.float64, into=(1, None)).split("def ")[1])
    kernel(a0, a1):
        if a1.shape != a0.shape:
            raise ValueError("fused kernel: an operand's shape is not the first one's")
        o1 = np.empty(a0.shape, a0.dtype)
        x0, x1, y1 = a0.reshape(-1), a1.reshape(-1), o1.reshape(-1)
        for i in range(x0.size):
            v0 = x0[i]
            v1 = x1[i]
            v2 = v0 * k0
            v3 = v2 + v1
            v4 = v0 - v1
            x1[i] = v3
            y1[i] = v4
        return a1, o1
    <BLANKLINE>
    """
    into = tuple(into) or (None,) * len(body.outputs)
    constants = {}
    loop = _loop(body, dtype, into, constants)
    kind = np.dtype(dtype).name
    header = ["import numpy as np", "", f"ONE = np.{kind}(1.0)"]
    header += [f"{name} = np.{kind}(float.fromhex({text!r}))" for text, name in constants.items()]
    returns = ", ".join(f"o{j}" if p is None else f"a{p}" for j, p in enumerate(into))
    lines = header + ["", ""] + _prologue(body.n_inputs, into) + loop + [f"    return {returns}"]
    return "\n".join(lines) + "\n"


def _prologue(n, into):
    """The kernel's lines before its loop: the operands' shapes checked, the fresh outputs made, flat views."""
    fresh = [j for j, p in enumerate(into) if p is None]
    made = [f"    o{j} = np.empty(a0.shape, a0.dtype)" for j in fresh]
    return [f"def kernel({', '.join(f'a{k}' for k in range(n))}):"] + _shape_check(n) + made + [
        _flat_views(n, fresh), "    for i in range(x0.size):"]


def _shape_check(n):
    """The lines refusing operands of different shapes (a caller checks the first one's)."""
    if n < 2:
        return []
    return [f"    if {' or '.join(f'a{k}.shape != a0.shape' for k in range(1, n))}:",
            "        raise ValueError(\"fused kernel: an operand's shape is not the first one's\")"]


def _flat_views(n, fresh):
    """The line naming each operand's and each fresh output's flat view (``x<k>``, ``y<j>``)."""
    views = [f"x{k}" for k in range(n)] + [f"y{j}" for j in fresh]
    arrays = [f"a{k}" for k in range(n)] + [f"o{j}" for j in fresh]
    return f"    {', '.join(views)} = {', '.join(f'{a}.reshape(-1)' for a in arrays)}"


def _loop(body, dtype, into, constants):
    """The loop's body: every input's element ``i`` read, each equation's formula, the outputs' element written
    (the constants met named in ``constants``)."""
    lines = [f"        v{k} = x{k}[i]" for k in range(body.n_inputs)]
    for prim, operands, _, out in body.equations:
        names = [f"v{a.ref}" if type(a) is Var else _constant(constants, a, dtype) for a in operands]
        lines.append(f"        v{out} = {FORMULAS[prim].format(*names)}")
    return lines + [f"        {_flat(j, p)}[i] = v{o.ref}" for j, (o, p) in enumerate(zip(body.outputs, into))]


def _flat(j, position):
    """The flat view output ``j`` is written through: its operand's, else its own array's."""
    return f"y{j}" if position is None else f"x{position}"


def _constant(constants, value, dtype):
    """The name of the scalar ``value`` in ``dtype`` (numpy casts a Python number to the array's dtype so)."""
    text = float(np.dtype(dtype).type(value)).hex()
    return constants.setdefault(text, f"k{len(constants)}")


def _compile(source, dtype, n_inputs, into, ndim):
    """The compiled kernel of ``source`` (``n_inputs`` operands of ``ndim`` axes, outputs written ``into`` them or
    new), or ``False`` (numba switched off, missing, or failing: warned once)."""
    if not numba_jit.use_numba():
        return False
    try:
        import numba

        function, cached = _define(source)
        t, d = numba.types, numba.from_dtype(np.dtype(dtype))
        written, read = t.Array(d, ndim, "C"), numba_jit.readonly(t, d, ndim, "C")
        params = [written if k in into else read for k in range(n_inputs)]
        signature = (written if len(into) == 1 else t.Tuple([written] * len(into)))(*params)
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
