"""Timing shared by every suite: A/B rounds of calibrated batches, each after this process's threads went idle.

``ctx.race({"ours": f, "torch": g, "floor": h})`` times the contenders (*lanes*) in alternating rounds: round
1 runs ours, torch, torch with one thread, floor; round 2 runs them in the reverse order; and so on.  Every
lane that is torch's gets a twin run with ``torch.set_num_threads(1)`` (restored after its batch), so each
comparison can take the faster torch setting measured under the same conditions.  A suite may race ours's
twin too (``ours_one_thread``: numpy's BLAS and autodiff's kernel thread at one), and the comparison then
takes the faster setting on each side.  A slow stretch of the
machine then slows every lane of a round, and the per-round *ratios* (``Rounds.per_round``) cancel it.

Before each timed batch the race waits until no thread of another lane is running (:func:`settle`): OpenBLAS's
and OpenMP's worker threads spin for a while after a parallel call, and a batch started under another lane's
runs on a busy core (a lane's own spin between its calls is part of its steady state); then one untimed call
wakes the lane's own workers, which slept through the wait (:func:`batch`).  The garbage collector
is paused during a race, as ``timeit`` does, for every lane alike.
"""

import contextlib
import gc
import os
import statistics
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from . import _noise

ONE_THREAD = "@1"  # suffix of a lane's one-thread twin: "torch" and "torch@1", "ours" and "ours@1"


@dataclass(frozen=True)
class Settings:
    """How long to time: rounds (at most; at least ``min_rounds``), seconds of rounds a race may take, and the
    shortest timed batch (short calls are repeated until a batch is this long)."""

    rounds: int
    min_rounds: int
    budget: float
    min_batch: float
    wait: float = 0.25  # seconds a batch waits at most for the other lanes' threads to go idle (settle)


MODES = {
    "quick": Settings(rounds=15, min_rounds=9, budget=2.5, min_batch=0.005),  # 15 where a round is cheap:
    # with 9, one slow round among them moved a band's edge across its goal from one run to the next; and at
    # least 9, the fewest whose band drops the extreme rounds (bench/_stats.py): the ResNet steps ran 5 or 6,
    # and one round at 0.98 among ratios of 1.08 to 1.28 made a missed goal "within noise"
    "full": Settings(rounds=21, min_rounds=9, budget=12.0, min_batch=0.02),
    "smoke": Settings(rounds=2, min_rounds=2, budget=0.0, min_batch=0.0005),  # checks the plumbing only
}
# While other processes keep the CPU busy, a row is NOISY and not judged whatever it measures, every wait for
# idle threads runs out (0.25 s a batch), and thread pools on a shared core collapse (a ResNet-18 step took
# 4 s instead of 33 ms beside a spinning process; a quick run took almost 6 minutes). So while busy, every
# pool runs one thread (``Context.observe``) and a race times one call per lane without waiting: figures to
# look at, no verdict, on time.
BUSY = Settings(rounds=1, min_rounds=1, budget=0.0, min_batch=0.0, wait=0.0)


def settle(window=0.002, quiet=0.1, timeout=0.25, own=frozenset()):
    """Sleep until this process's other threads are idle; ``False`` if they never were within ``timeout`` s.

    Idle: none of them is running (state ``R`` in ``/proc/self/task/*/stat``), but for the thread ids in
    ``own``, the timed lane's own workers (:func:`calibrate` learns them), which spin between its calls in
    a loop anyway.  A worker spinning after a parallel call (OpenBLAS's spins about 0.13 s here) is running
    all the while; a sleeping one is not.  Without ``/proc``: a ``window`` of wall time in which all threads
    together used under ``quiet`` of a core.  That reading is the fallback only: ``time.process_time``
    counts another core's running thread at the scheduler's tick (4 ms here), so a 2 ms window missed a
    spinning worker about half the time, and the lane after it ran beside it (up to twice as slow).
    """
    deadline = time.perf_counter() + timeout
    while True:
        running = others_running(own)
        if running == 0:
            return True
        if running is None:
            cpu, wall = time.process_time(), time.perf_counter()
            time.sleep(window)
            if time.process_time() - cpu < quiet * (time.perf_counter() - wall):
                return True
        else:
            time.sleep(window)
        if time.perf_counter() > deadline:
            return False


def _threads():
    """The ids of this process's threads other than the caller, or ``None`` without ``/proc``."""
    me = str(threading.get_native_id())
    try:
        return [tid for tid in os.listdir("/proc/self/task") if tid != me]
    except OSError:
        return None


def others_running(own=frozenset()):
    """How many of this process's threads, other than the caller and ``own``, are running now; ``None``
    without ``/proc``."""
    tids = _threads()
    if tids is None:
        return None
    running = 0
    for tid in tids:
        if tid in own:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                running += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue  # the thread ended meanwhile
    return running


def thread_cpu():
    """``{thread id: nanoseconds on a CPU}`` of this process's other threads (``{}`` without ``/proc``)."""
    out = {}
    for tid in _threads() or ():
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return out


@dataclass
class Lane:
    """A contender: ``fn`` is timed; ``around`` (a context-manager factory) is entered around each batch,
    untimed, to switch a setting such as a thread count.  ``own`` holds the ids of the worker threads its
    calls ran on (learnt by :func:`calibrate`): a batch does not wait for those to go idle."""

    name: str
    fn: object
    around: object = contextlib.nullcontext
    own: frozenset = frozenset()


@contextlib.contextmanager
def torch_threads(torch, n):
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@contextlib.contextmanager
def own_threads(n):
    """Ours at ``n`` threads: numpy's BLAS (through ``threadpoolctl``) and autodiff's kernel thread, restored
    after.  Only numpy's BLAS library is limited: another library's (scipy's, which ARPACK calls) is the
    user's program's, shared by every lane alike."""
    from threadpoolctl import ThreadpoolController

    from autodiff._accel import parallel as _parallel

    controller = ThreadpoolController()
    numpy_blas = controller.select(filepath=[lib.filepath for lib in controller.lib_controllers
                                             if "numpy" in lib.filepath])
    previous = _parallel.set_threads(n)
    try:
        with numpy_blas.limit(limits=n):
            yield
    finally:
        _parallel.set_threads(previous)


def ours_one_thread(fn):
    """The lane ``"ours@1"``: ``fn`` under :func:`own_threads` (1), the twin of a torch lane's one-thread run;
    ``None`` without ``threadpoolctl``."""
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        return None
    return Lane("ours" + ONE_THREAD, fn, lambda: own_threads(1))


def lanes(contenders, torch):
    """The lanes of ``{name: fn or Lane}``, each torch lane (name starting with "torch") followed by its
    one-thread twin when torch is there."""
    out = []
    for name, fn in contenders.items():
        lane = fn if isinstance(fn, Lane) else Lane(name, fn)
        out.append(lane)
        if name.startswith("torch") and torch is not None:
            out.append(Lane(name + ONE_THREAD, lane.fn, lambda: torch_threads(torch, 1)))
    return out


def batch(lane, calls, wait=0.25):
    """``(seconds per call, whether the threads had settled)`` of ``calls`` back-to-back calls, after one
    untimed call.

    The untimed call wakes the lane's own workers, which went to sleep while the race waited for the other
    lanes' threads.  On this VM a thread pool's first parallel call after such a pause took up to four
    times as long as the next (torch's big-MLP HVP: 8 to 23 ms right after ours, 5 to 8 ms back to back),
    so a batch of one call timed the wake-up, not the lane, and the big HVP's per-round ratios alternated
    between 0.33 and 1.3 with the rounds' order."""
    with lane.around():
        settled = settle(own=lane.own, timeout=wait)
        lane.fn()
        start = time.perf_counter()
        for _ in range(calls):
            lane.fn()
        return (time.perf_counter() - start) / calls, settled


def calibrate(lane, min_batch, wait=0.25):
    """``(calls, seconds per call)``: how many calls make a batch at least ``min_batch`` long, after a warm-up
    call (which compiles anything lazy, so it is not the one measured).  A call longer than ``min_batch`` is its
    own batch.  Sets ``lane.own``: the threads that ran during these batches, each started with every other
    thread idle, so the lane's own workers (numpy's BLAS for ours and the floor, torch's OpenMP for torch)."""
    with lane.around():
        settle(timeout=wait)  # every other thread idle before counting: what runs from here on is the lane's
    before = thread_cpu()
    batch(lane, 1, wait)
    calls, elapsed = 1, batch(lane, 1, wait)[0]
    while elapsed * calls < min_batch:
        calls = max(2 * calls, int(1.2 * min_batch / max(elapsed, 1e-9)))
        elapsed = batch(lane, calls, wait)[0]
    after = thread_cpu()
    lane.own = frozenset(tid for tid, ns in after.items() if ns > before.get(tid, 0))
    return calls, elapsed


@contextlib.contextmanager
def gc_paused():
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class Rounds:
    """Per-call seconds of every lane, one sample per round, and what others used meanwhile."""

    times: dict
    noise: object = None  # a _noise.Interference, or None where /proc is missing
    unsettled: int = 0  # batches started before this process's threads went idle (after the wait timed out)
    busy: bool = False  # timed with the short BUSY settings: figures to look at, never a verdict

    def median(self, name):
        return statistics.median(self.times[name]) if name in self.times else None

    def fastest(self, name):
        """``name`` or its one-thread twin, whichever has the lower median."""
        twin = name + ONE_THREAD
        if twin in self.times and self.median(twin) < self.median(name):
            return twin
        return name

    def per_round(self, a, b, scale=1.0):
        """``scale * a / b`` in each round, each the faster of its lane and that lane's one-thread twin (when
        there is one: every torch lane, and ours where a suite races ``ours@1``)."""
        a, b = self.fastest(a), self.fastest(b)
        return [scale * x / y for x, y in zip(self.times[a], self.times[b])]


class Mismatch(AssertionError):
    """Ours and the reference disagree: the benchmark stops before timing anything."""


def as_array(x):
    """A numpy array of ``x``, which may be a torch tensor (detached first, so torch does not warn)."""
    detach = getattr(x, "detach", None)
    return np.asarray(detach().numpy() if detach else x, np.float64)


@dataclass
class Context:
    """One run's settings: the mode (quick, full or smoke), torch (or None), a suite whose result to corrupt
    (a self-test), the cores of load started on purpose (``--contention``), and whether other processes are
    keeping the CPU busy (``busy``: set before the run and after each race by what others used meanwhile;
    while it is set, races take the short ``BUSY`` settings, and their rows are NOISY, not judged)."""

    mode: str = "quick"
    torch: object = None
    inject: str = ""
    load: float = 0.0
    busy: bool = False
    adapt: bool = False  # follow the machine's load (observe): python -m bench does; a test's context does not
    unsettled: list = field(default_factory=list)
    _one_thread: object = None  # while busy: the ExitStack holding every thread pool at one thread

    @property
    def quick(self):
        return self.mode != "full"

    @property
    def settings(self):
        return BUSY if self.busy and self.mode != "smoke" else MODES[self.mode]

    def observe(self, interference):
        """Note what others used during the last measurement (a ``bench._noise.Interference``): while they keep
        the CPU busy, the next races are short and every thread pool (ours, numpy's BLAS, torch's) runs one
        thread, so that none collapses on a shared core."""
        if not self.adapt or interference is None or interference.noisy == self.busy:
            return
        self.busy = interference.noisy
        if self.busy:
            self._one_thread = contextlib.ExitStack()
            with contextlib.suppress(ImportError):  # without threadpoolctl, numpy's BLAS keeps its threads
                self._one_thread.enter_context(own_threads(1))
            if self.torch is not None:
                self._one_thread.enter_context(torch_threads(self.torch, 1))
        else:
            self._one_thread.close()

    def release(self):
        """Give every thread pool back its threads (the end of a run that ended busy)."""
        if self.busy:
            self.busy = False
            self._one_thread.close()

    def check(self, suite, ours, theirs, rtol=1e-5, atol=1e-8):
        """Raise :class:`Mismatch` unless every array in ``ours`` is close to ``theirs`` (tensors allowed)."""
        ours, theirs = [as_array(a) for a in ours], [as_array(b) for b in theirs]
        if self.inject and self.inject in suite:
            ours[0] = ours[0] + 1.0  # a deliberately wrong result
        if len(ours) != len(theirs):
            raise Mismatch(f"{suite}: {len(ours)} results against {len(theirs)} from the reference; nothing was timed")
        for k, (a, b) in enumerate(zip(ours, theirs)):
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
                worst = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("nan")
                raise Mismatch(f"{suite}: result {k} differs from the reference (largest difference {worst:.3g}, "
                               f"shapes {a.shape} and {b.shape}); nothing was timed")

    def race(self, contenders, per=1):
        """:class:`Rounds` of ``contenders`` (``{name: fn or Lane}``), each time divided by ``per``.

        As many rounds as fit the mode's budget (within its bounds), judged by the first round's wall time,
        which counts the waits for other lanes' threads to go idle (0.13 s after each OpenBLAS call here).
        """
        racing, s = lanes(contenders, self.torch), self.settings
        with gc_paused(), _noise.Watch(self.load) as watch:  # calibration too: a longer window reads truer
            calls = {lane.name: calibrate(lane, s.min_batch, s.wait)[0] for lane in racing}
            times, start = {lane.name: [] for lane in racing}, time.perf_counter()
            unsettled = _round(racing, 0, calls, times, per, s.wait)
            round_cost = time.perf_counter() - start
            count = max(s.min_rounds, min(s.rounds, int(s.budget / max(round_cost, 1e-9))))
            for r in range(1, count):
                unsettled += _round(racing, r, calls, times, per, s.wait)
        self.unsettled.append(unsettled)
        self.observe(watch.result)
        return Rounds(times, watch.result, unsettled, busy=s is BUSY)


def _round(racing, r, calls, times, per, wait):
    """Round ``r`` (odd rounds in reverse order), each lane's time per call added to ``times``; how many of its
    batches started before the other lanes' threads had gone idle."""
    unsettled = 0
    for lane in (racing if r % 2 == 0 else racing[::-1]):
        seconds, settled = batch(lane, calls[lane.name], wait)
        times[lane.name].append(seconds / per)
        unsettled += not settled
    return unsettled


def try_torch():
    """torch if installed (at its default thread count), else ``None``."""
    try:
        import torch
    except ImportError:
        return None
    return torch
