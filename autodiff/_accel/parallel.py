"""Two-way parallelism for large, memory-bound work: serial kernels on a one-thread pool plus the caller.

No spin-waiting (a blocked worker sleeps), so a busy core slows us down
rather than stalling us; the pool is recreated after ``fork``; any number of
Python threads may call at once (their tasks queue).  Small jobs stay serial:
handing work to a thread costs tens of microseconds.

``AUTODIFF_ACCEL_OFF=threads`` or ``AUTODIFF_REFERENCE=1`` in the environment keeps everything on the caller's
thread: :func:`splits` is then always false, and every helper here runs its plain serial loop.
"""

import itertools
import operator
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from .._hooks import REFERENCE, enabled

PARALLEL_BYTES = 8 << 20  # below this much data, one thread is faster
_SERIAL = not enabled("threads") or (os.cpu_count() or 1) < 2
_threads = 1 if _SERIAL else 2
_pool = None
_pid = None
_lock = threading.Lock()


def _executor():
    global _pool, _pid
    with _lock:
        if _pool is None or _pid != os.getpid():  # a forked child has no worker thread: make one
            _pool, _pid = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autodiff-kernel"), os.getpid()
        return _pool


def set_threads(n):
    """Use 1 (serial) or 2 threads for large reductions; ``AUTODIFF_ACCEL_OFF=threads`` sets 1 at start-up, and
    under ``AUTODIFF_REFERENCE=1`` it is always 1.  Returns the previous setting."""
    global _threads
    previous, _threads = _threads, 1 if n <= 1 or REFERENCE else 2
    return previous


def splits(arrays):
    """Would :func:`map_arrays` share these arrays with the worker thread?"""
    return len(arrays) >= 2 and splits_bytes(sum(map(_nbytes, arrays)))


def splits_bytes(nbytes):
    """Is work over ``nbytes`` of data worth sharing with the worker thread?"""
    return _threads > 1 and nbytes >= PARALLEL_BYTES


_nbytes = operator.attrgetter("nbytes")


def map_arrays(fn, arrays):
    """``[fn(a) for a in arrays]``, with about half the bytes handled by a worker thread when it pays."""
    if not splits(arrays):
        return [fn(a) for a in arrays]
    order = sorted(range(len(arrays)), key=lambda i: -arrays[i].nbytes)  # largest first
    results = [None] * len(arrays)

    def run(k):
        results[order[k]] = fn(arrays[order[k]])

    _share(len(order), run)
    return results


CHUNK = 1 << 18  # elements per piece when arrays are cut up for two threads (1 MB of float32)


def sum_pieces(fn, flats, outs=None):
    """Per 1-D array in ``flats``: the sum of ``fn(piece)`` (``fn(piece, out piece)`` with ``outs``) over
    its pieces of at most ``CHUNK`` elements, the pieces shared by the caller and the worker thread.

    Pieces of one size balance the two threads better than whole arrays of very different sizes; each
    array's pieces are added in order, so the result does not depend on which thread ran which piece.
    """
    pieces = [(i, start, min(start + CHUNK, f.size)) for i, f in enumerate(flats) for start in range(0, f.size, CHUNK)]
    results = [0.0] * len(pieces)

    def run(k):
        i, start, stop = pieces[k]
        part = flats[i][start:stop]
        results[k] = fn(part) if outs is None else fn(part, outs[i][start:stop])

    _share(len(pieces), run)
    totals = [0.0] * len(flats)
    for (i, _, _), value in zip(pieces, results):
        totals[i] += value
    return totals


def run_pieces(pieces, work, share=True):
    """``work(*piece)`` for every piece, in any order: on the caller's thread and the worker's when ``share``
    and there are several pieces, else one after another on the caller's.

    >>> done = []
    >>> run_pieces([(0, 2), (2, 5)], lambda start, stop: done.append(stop - start))
    >>> sorted(done)
    [2, 3]
    """
    if share and len(pieces) > 1 and _threads > 1:
        _share(len(pieces), lambda k: work(*pieces[k]))
        return
    for piece in pieces:
        work(*piece)


def _share(n, run):
    """``run(k)`` for k in 0..n-1, each taken once, by the caller and (when it gets going) the worker."""
    claim = itertools.count().__next__  # atomic under the GIL: each item is taken once
    work = [run]  # emptied when done: a cancelled task waits in the pool's queue until the worker drops it,
    # and meanwhile it must not keep the arrays ``run`` reads and writes alive (a column matrix, an output)

    def drain():
        for k in iter(claim, None):
            if k >= n or not work:
                return
            work[0](k)

    # Work sharing, not a fixed split: if the worker is slow to start (the other core is busy, or BLAS
    # threads are still spinning after a matmul), the caller simply takes its items too.
    future = _executor().submit(drain)
    drain()
    if not future.cancel():  # it started: wait for the one item it may still be on
        future.result()
    work.clear()
