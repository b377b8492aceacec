"""Did other processes use the CPU while a row was measured?  Such a row is NOISY and its goal is not judged.

Two kernel counters, both in clock ticks (``USER_HZ``, 100 a second):

* ``/proc/stat``'s first line: the CPU time every process on the machine used, all cores (user, nice,
  system, irq, softirq, and steal: time the hypervisor gave our virtual CPUs to another tenant);
* ``/proc/self/stat``: the time this process used, all its threads, plus its finished and waited-for
  children (the fresh processes some suites start).

Their difference over a row is what *others* used.  A row is NOISY when others used more than
``THRESHOLD`` of one core on average over the row, beyond ``SLACK`` seconds.  A quiet machine's daemons use
about 1% of a core; another job on a 2-core machine uses 50% or more of one, and torch's and OpenBLAS's
thread pools slow down badly when they share cores, so 10% of one core separates the two with room on both
sides.  The slack covers the counters' rounding to ticks and the way ``/proc/stat`` *samples* (each tick goes
to whatever ran at that instant) while the process's own time is exact: over a race of short, bursty
batches the two can disagree by a few ticks on a quiet machine.

Without ``/proc`` (not Linux) nothing is read and no row is flagged; the report says the check was off.

>>> before = Reading(busy=100.0, own=10.0, wall=0.0)
>>> between(before, Reading(busy=101.1, own=11.0, wall=1.0)).noisy    # others: 0.1 s in 1 s
False
>>> between(before, Reading(busy=101.5, own=11.0, wall=1.0)).noisy    # others: half a core
True
"""

import os
import time
from dataclasses import dataclass

THRESHOLD = 0.10  # of one core, averaged over the row
SLACK = 0.05  # seconds: the counters' tick rounding, and /proc/stat's sampling of bursty use (see above)
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user nice system [idle iowait] irq softirq steal; guest is inside user


@dataclass(frozen=True)
class Reading:
    """CPU seconds every process used (``busy``), this process and its children used (``own``), and the
    wall clock (``perf_counter``), read together."""

    busy: float
    own: float
    wall: float


@dataclass(frozen=True)
class Interference:
    """What others used over ``wall`` seconds; ``load`` cores of it were started on purpose (``--contention``)."""

    others: float
    wall: float
    load: float = 0.0

    @property
    def cores(self):
        """Others' average use, in cores."""
        return self.others / self.wall if self.wall > 0 else 0.0

    @property
    def noisy(self):
        return self.others > (THRESHOLD + self.load) * self.wall + SLACK


def busy_seconds(proc_stat, hz):
    """CPU seconds all processes used, from the text of ``/proc/stat``.

    >>> busy_seconds("cpu  100 5 50 9000 20 1 2 3 0 0\\ncpu0 50 2 25 4500 10 0 1 1 0 0\\n", 100)
    1.61
    """
    fields = proc_stat.split("\n", 1)[0].split()
    if fields[0] != "cpu":
        raise ValueError(f"bench._noise: /proc/stat starts with {fields[0]!r}, expected the 'cpu' total line")
    ticks = [int(x) for x in fields[1:]]
    return sum(ticks[k] for k in _BUSY_FIELDS if k < len(ticks)) / hz


def own_seconds(self_stat, hz):
    """CPU seconds this process and its waited-for children used, from the text of ``/proc/self/stat``.

    The command name (field 2) may hold spaces and parentheses, so the fields are counted after its last ``)``.

    >>> own_seconds("42 (py (x) y) R 1 2 3 4 5 6 7 8 9 10 150 50 7 3 20 0", 100)
    2.1
    """
    after = self_stat.rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in after[11:15])  # fields 14 to 17 of proc(5)
    return (utime + stime + cutime + cstime) / hz


def read():
    """A :class:`Reading` now, or ``None`` where ``/proc`` is missing."""
    try:
        with open("/proc/stat") as f, open("/proc/self/stat") as g:
            stat, own = f.read(), g.read()
    except OSError:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    return Reading(busy_seconds(stat, hz), own_seconds(own, hz), time.perf_counter())


def between(before, after, load=0.0):
    """The :class:`Interference` from two readings (``None`` if either is)."""
    if before is None or after is None:
        return None
    others = (after.busy - before.busy) - (after.own - before.own)
    return Interference(max(others, 0.0), after.wall - before.wall, load)


class Watch:
    """``with Watch() as w: ...`` then ``w.result``: the :class:`Interference` over the block."""

    def __init__(self, load=0.0):
        self.load, self.result, self._start = load, None, None

    def __enter__(self):
        self._start = read()
        return self

    def __exit__(self, *exc):
        self.result = between(self._start, read(), self.load)
        return False


def sample(seconds=0.5):
    """What others used over the next ``seconds`` (this process sleeps meanwhile), or ``None`` without ``/proc``."""
    start = read()
    time.sleep(seconds)
    return between(start, read())
