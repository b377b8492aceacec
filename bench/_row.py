"""One line of the table: the medians of ours, torch (default threads and one thread) and the floor, the value a
goal judges with its band, and the verdict.

>>> from bench._timing import Rounds
>>> rounds = Rounds({"ours": [1.0, 1.1, 0.9], "torch": [2.0, 2.2, 1.8], "torch@1": [2.5, 2.4, 2.6]})
>>> row = record(Row("a step", goal=0.9, goal_text="ours/torch ≤ 0.9"), rounds)
>>> row.ours, row.torch, row.torch1, row.ratio, row.verdict
(1.0, 2.0, 2.5, 0.5, 'holds')
"""

import statistics
from dataclasses import dataclass

from ._stats import judge, summary
from ._timing import ONE_THREAD


@dataclass
class Row:
    """Times are seconds per call (``unit="s"``) or megabytes (``unit="MB"``).  ``value`` is the number the goal
    judges, ``band`` its spread (see ``bench._stats``), ``ratio`` the median per-round ours / the faster torch
    (or / the floor without torch), each side at its faster setting where its one-thread twin ran.
    ``goal_at`` is the ``ours`` at which the goal is exactly met, for the chart; left ``None``, it is taken as
    proportional (``ours * goal / value``), true of every ratio and every scaled time.  ``others`` is the cores
    other processes used meanwhile; ``noisy`` rows are never judged."""

    suite: str
    ours: float = None
    ours1: float = None  # ours at one thread, where the suite raced that twin (bench._timing.ours_one_thread)
    torch: float = None
    torch1: float = None
    floor: float = None
    ratio: float = None
    value: float = None
    band: tuple = None
    goal: float = None
    goal_text: str = ""
    at_least: bool = False
    goal_at: float = None
    note: str = ""
    unit: str = "s"
    others: float = None
    noisy: bool = False
    samples: list = None
    previous: dict = None  # the same row in the run given to --compare

    @property
    def verdict(self):
        """``"holds"``, ``"missed"``, ``"within noise"``, ``"noisy"``, or ``""`` without a goal."""
        if self.goal is None or self.value is None:
            return ""
        if self.noisy:
            return "noisy"
        return judge(self.goal, self.band or (self.value, self.value), self.at_least)

    @property
    def faster_ours(self):
        """``"ours@1"`` where ours's one-thread twin ran and was faster, else ``"ours"`` (``None`` without ours)."""
        return _faster("ours", self.ours, self.ours1)

    @property
    def best_ours(self):
        return self.ours1 if self.faster_ours == "ours" + ONE_THREAD else self.ours

    @property
    def faster_torch(self):
        """Which torch setting was faster: ``"torch"`` (its default threads) or ``"torch@1"``."""
        return _faster("torch", self.torch, self.torch1)

    @property
    def best_torch(self):
        return self.torch1 if self.faster_torch == "torch" + ONE_THREAD else self.torch

    @property
    def threshold(self):
        """The ``ours`` at which the goal is exactly met (``goal_at``, or proportional), or ``None``."""
        if self.goal_at is not None or self.goal is None:
            return self.goal_at
        if self.best_ours and self.value:
            return self.best_ours * self.goal / self.value
        return None


def _faster(lane, default, one):
    """``lane`` or its one-thread twin's name, whichever ran faster (``None`` if neither ran)."""
    if one is not None and (default is None or one < default):
        return lane + ONE_THREAD
    return lane if default is not None else None


def record(row, rounds, value=("ours", "torch"), scale=1.0, ours="ours"):
    """Fill ``row`` from :class:`~bench._timing.Rounds` and return it.

    ``value`` is what the goal judges: a pair of lanes (the per-round ratio, the second being the faster torch
    setting when it names a torch lane) or one lane (its per-round times); either times ``scale``.  ``ours``
    names the lane shown as ours.  A value whose lanes did not run (no torch) stays ``None``.
    """
    row.ours, row.ours1 = rounds.median(ours), rounds.median(ours + ONE_THREAD)
    row.torch, row.torch1 = rounds.median("torch"), rounds.median("torch" + ONE_THREAD)
    row.floor = rounds.median("floor")
    reference = next((name for name in ("torch", "floor") if name in rounds.times), None)
    if reference and ours in rounds.times:
        row.ratio = statistics.median(rounds.per_round(ours, reference))
    lanes = value if isinstance(value, tuple) else (value,)
    if all(lane in rounds.times for lane in lanes):
        samples = (rounds.per_round(*value, scale=scale) if isinstance(value, tuple)
                   else [scale * t for t in rounds.times[value]])
        row.value, row.band = summary(samples)
        row.samples = samples
    absorb(row, rounds.noise)
    row.noisy = row.noisy or rounds.busy
    return row


def absorb(row, noise):
    """Mark ``row`` NOISY if others used the CPU during ``noise`` (a ``bench._noise.Interference``)."""
    if noise is not None:
        row.others = max(row.others or 0.0, noise.cores)
        row.noisy = row.noisy or noise.noisy
    return row
