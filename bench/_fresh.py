"""Measurements that need a fresh Python process: peak memory and first-call latency.

The parent calls :func:`run` (or :func:`run_all`, two processes at a time); the child is
``python -m bench._fresh KIND ARGS...``, which prints one JSON line.  This module imports nothing heavy at
the top, so that a child measuring ``import autodiff, traversal`` starts from a bare interpreter.

**Peak extra memory** (``memory WORKLOAD FRAMEWORK BATCH OUT``): imports, then setup (model, inputs, the
step function), then one step, measured, then a second step, measured the same way.  Each measurement
resets the kernel's RSS high-water mark (``/proc/self/clear_refs``), reads the resident size as the
baseline, runs the step and reads the high-water mark (``VmHWM``): the difference is the step's peak extra
memory, whatever allocated it (numpy, numba, torch's allocator alike; ``tracemalloc`` sees only Python's).
The second step is the judged figure: the first also counts one-time costs (loading compiled kernels,
torch's lazy initialisation), which the first-call rows measure.  The child runs with glibc's mmap threshold
pinned at 128 KiB (``MALLOC_MMAP_THRESHOLD_``) for ours and torch alike: by default glibc raises the
threshold after the first large frees, so the second step would reuse memory the first left in the heap
and its peak would read near zero.  With it pinned, every large block returns to the system when freed.
"""

import gc
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": "131072"}


def run(args, env=None, timeout=600):
    """The JSON a child ``python -m bench._fresh *args`` printed last; its stderr's tail if it failed."""
    done = subprocess.run([sys.executable, "-m", "bench._fresh", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"bench: the fresh process `{' '.join(map(str, args))}` failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_all(jobs, env=None, parallel=2):
    """:func:`run` of each argument list in ``jobs``, ``parallel`` at a time (memory is per process, so
    children that run side by side do not change each other's figures); the results in ``jobs``' order."""
    with ThreadPoolExecutor(parallel) as pool:
        return list(pool.map(lambda args: run(args, env), jobs))


# ---- the child side -------------------------------------------------------------------------------------

def _status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))


def _peak(step):
    """``(peak extra bytes, result)`` of one call of ``step``."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the high-water mark to the current resident size
    except OSError as e:
        raise RuntimeError(f"bench: cannot reset the RSS high-water mark ({e}); peak memory needs Linux") from e
    base = _status("VmRSS:")
    result = step()
    return _status("VmHWM:") - base, result


def _memory(workload, framework, batch, out):
    import numpy as np

    from ._timing import as_array
    from ._workloads import WORKLOADS

    torch = None
    if framework != "ours":
        import torch
    step = WORKLOADS[workload](torch, int(batch))[framework]
    first, result = _peak(step)
    result = None
    second, result = _peak(step)
    np.savez(out, *[as_array(r) for r in result])
    return {"first": first, "second": second}


def _first_call():
    """``import autodiff, traversal`` and the first ``total(sumsq, ·)`` over ResNet-18's parameters."""
    start = time.perf_counter()
    import autodiff
    import traversal

    imported = time.perf_counter() - start
    import layers

    model = layers.resnet18(1000)
    start = time.perf_counter()
    traversal.total(autodiff.sumsq, model)
    return {"import": imported, "first_total": time.perf_counter() - start}


def _warmup():
    """Compile (or load from numba's cache) every kernel."""
    import autodiff

    start = time.perf_counter()
    autodiff.warmup()
    return {"warmup": time.perf_counter() - start}


def _import_torch():
    start = time.perf_counter()
    import torch  # noqa: F401

    return {"import": time.perf_counter() - start}


CHILDREN = {"memory": _memory, "first_call": _first_call, "warmup": _warmup, "import_torch": _import_torch}

if __name__ == "__main__":
    print(json.dumps(CHILDREN[sys.argv[1]](*sys.argv[2:])))
