"""Cutting a kernel's work into pieces along its first axis, shared with autodiff's worker thread.

The layers' kernels are serial, ``nogil`` loops.  A large call is cut into
up to :data:`MAX_PIECES` ranges of the first axis (images of a batch, rows of
a matrix), which the caller and autodiff's one kernel thread take in turn
(``autodiff._accel.parallel``: no spin-waiting, and the caller takes every piece if
the worker is busy).  The pieces depend only on the size, never on the number
of threads, so a result is the same with one thread or two.
``AUTODIFF_ACCEL_OFF=threads`` keeps everything on the caller's thread.

>>> ranges(16, 1 << 20)  # 1 MB of output: two pieces
[(0, 8), (8, 16)]
>>> ranges(10, 1 << 30)  # at most eight
[(0, 1), (1, 2), (2, 3), (3, 5), (5, 6), (6, 7), (7, 8), (8, 10)]
>>> ranges(10, 100)  # small work: one piece
[(0, 10)]
"""

from autodiff._accel import parallel as _parallel

SPLIT_BYTES = 1 << 19  # below this much output, handing work to a thread (tens of µs) does not pay
MAX_PIECES = 8


def ranges(n, nbytes):
    """``[(start, stop)]`` covering ``range(n)``: one piece for small work, else up to MAX_PIECES about equal ones."""
    count = min(n, MAX_PIECES, nbytes // SPLIT_BYTES)
    if count < 2:
        return [(0, n)]
    bounds = [n * k // count for k in range(count + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def run(pieces, work):
    """``work(start, stop)`` for every piece, on the caller's thread and (when several) the kernel thread."""
    _parallel.run_pieces(pieces, work)
