"""One chart of a run: a row per workload, ours and torch side by side, the goal marked, the value printed.

Rows measure different things (microseconds to seconds, megabytes), so each row is scaled to its own
longest mark; the printed values carry the units.  The goal is a black tick at the ours-figure that would
meet it exactly; ours is coloured by its verdict; with ``--compare`` a hollow diamond marks ours in the
earlier run.  :func:`layout` computes what is drawn (and is what the tests check); :func:`write` draws it.
"""

import os
from dataclasses import dataclass

from .report import VERDICTS, amount

COLOURS = {"holds": "#4c9a2a", "missed": "#c0392b", "within noise": "#e69f00", "noisy": "#9a9a9a",
           "": "#2e86c1"}
TORCH_COLOUR = "#b8c4d6"


@dataclass
class Entry:
    """One row of the chart; positions are fractions of the row's longest mark."""

    label: str
    verdict: str
    ours: float = None
    ours_text: str = ""
    torch: float = None  # torch's faster setting, or the floor in a row without torch
    torch_text: str = ""
    goal: float = None
    previous: float = None


def _ours(row):
    """``(ours, its text, the goal, ours before)`` in one unit: ours's figure, or the value for a row judged on
    something that is not a time (a bandwidth ratio)."""
    previous = row.previous or {}
    if row.ours is not None:
        one = " (1 thread)" if row.faster_ours == "ours@1" else ""
        return row.best_ours, amount(row.best_ours, row.unit) + one, row.threshold, previous.get("ours")
    text = f"{row.value:.3g}" if row.value is not None else ""
    return row.value, text, row.goal, previous.get("value")


def _versus(row):
    """``(figure, text)`` of torch's faster setting, or of the floor in a row without torch."""
    if row.best_torch is None:
        return row.floor, "" if row.floor is None else "floor " + amount(row.floor, row.unit)
    one = " (1 thread)" if row.faster_torch == "torch@1" else ""
    return row.best_torch, "torch " + amount(row.best_torch, row.unit) + one


def _entry(row):
    ours, text, goal, before = _ours(row)
    versus, versus_text = _versus(row)
    if ours is None and versus is None:
        return None
    marks = [x for x in (ours, versus, goal, before) if x is not None and x > 0]
    scale = max(marks) if marks else 1.0
    fraction = lambda x: None if x is None else x / scale  # noqa: E731
    verdict = VERDICTS[row.verdict]
    return Entry(f"{row.suite}  [{verdict}]" if verdict else row.suite, row.verdict, fraction(ours), text,
                 fraction(versus), versus_text, fraction(goal), fraction(before))


def layout(rows):
    """The :class:`Entry` of every row that has something to draw, in the table's order."""
    return [e for e in map(_entry, rows) if e is not None]


def write(rows, path):
    """Draw the chart of ``rows`` to ``path`` (a PNG); needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = layout(rows)
    height = 0.5 * len(entries) + 2.0
    fig, ax = plt.subplots(figsize=(14, height))
    for y, e in enumerate(entries):
        _draw(ax, y, e)
    ax.set_yticks(range(len(entries)), [e.label for e in entries], fontsize=8)
    ax.set_ylim(len(entries) - 0.4, -0.6)
    ax.set_xlim(0, 1.45)
    ax.set_xticks([])
    ax.set_xlabel("each row is scaled to its longest mark; values are printed on the bars; "
                  "black tick: the goal; ◇: ours in the run compared against", fontsize=8)
    fig.suptitle("autodiff + traversal against PyTorch (CPU): python -m bench", fontsize=11, y=1 - 0.1 / height)
    fig.legend(handles=_legend(), loc="upper center", fontsize=7, ncol=8, bbox_to_anchor=(0.5, 1 - 0.4 / height))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / height))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _draw(ax, y, e):
    if e.ours is not None:
        ax.barh(y - 0.19, e.ours, height=0.36, color=COLOURS[e.verdict])
        ax.text(e.ours + 0.01, y - 0.19, "ours " + e.ours_text, va="center", fontsize=7)
    if e.torch is not None:
        ax.barh(y + 0.19, e.torch, height=0.36, color=TORCH_COLOUR)
        ax.text(e.torch + 0.01, y + 0.19, e.torch_text, va="center", fontsize=7)
    if e.goal is not None:
        ax.vlines(e.goal, y - 0.42, y + 0.42, color="black", linewidth=2)
    if e.previous is not None:
        ax.plot(e.previous, y - 0.19, marker="D", markerfacecolor="none", markeredgecolor="black", markersize=6)


def _legend():
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    verdicts = [Patch(color=COLOURS[v], label=f"ours: {v or 'no goal'}") for v in COLOURS]
    return verdicts + [Patch(color=TORCH_COLOUR, label="torch's faster setting (or the floor)"),
                       Line2D([], [], color="black", linewidth=2, label="goal")]
