"""The results: a table on the terminal, ``bench/results/latest.json`` with machine facts, and
``bench/results/latest.png``, a chart of each measurement against its goal."""

import datetime
import json
import os
import platform

import numpy as np

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _amount(value, unit):
    if value is None:
        return "—"
    if unit == "MB":
        return f"{value:.1f} MB"
    for scale, name in ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s")):
        if value < scale * 1000:
            return f"{value / scale:.3g} {name}"
    return f"{value:.3g} s"


def table(rows):
    head = ["suite", "ours", "torch", "floor", "ours/ref", "goal", "holds"]
    lines = [[r.suite, _amount(r.ours, r.unit), _amount(r.torch, r.unit), _amount(r.floor, r.unit),
              f"{r.ratio:.2f}" if r.ratio else "—", _goal(r), {True: "yes", False: "NO", None: ""}[r.held]]
             for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(line) for line in lines])


def _goal(row):
    if row.goal is None:
        return row.goal_text
    shown = f"{row.value:.3g}" if row.value is not None else "?"
    return f"{row.goal_text} (is {shown})"


def machine_facts(torch):
    facts = {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
        "numpy": np.__version__, "numpy_blas": _numpy_blas(),
        "env": {k: v for k, v in os.environ.items()
                if k.startswith(("OPENBLAS", "OMP_", "MKL_", "NUMBA_", "AUTODIFF_", "GOTO", "BLIS"))},
    }
    try:
        import numba

        facts["numba"] = numba.__version__
    except ImportError:
        facts["numba"] = None
    if torch is not None:
        facts["torch"] = torch.__version__
        facts["torch_threads"] = torch.get_num_threads()
        facts["torch_config"] = torch.__config__.show()
    return facts


def _numpy_blas():
    try:
        config = np.show_config(mode="dicts")
        return config.get("Build Dependencies", {}).get("blas", {})
    except Exception:  # older numpy: no machine-readable config
        return {}


def write_json(rows, facts, extra, path=None):
    path = path or os.path.join(RESULTS, "latest.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = {"machine": facts, **extra,
            "rows": [{**{k: getattr(r, k) for k in ("suite", "ours", "torch", "floor", "value", "goal", "goal_text",
                                                     "at_least", "note", "unit")},
                      "ratio": r.ratio, "held": r.held} for r in rows]}
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=str)
    return path


def write_chart(rows, path=None):
    """Two panels: each goal's measurement divided by the goal (left of 1 holds), and ours/torch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    path = path or os.path.join(RESULTS, "latest.png")
    goals = [r for r in rows if r.goal is not None and r.value is not None]
    versus = [r for r in rows if r.torch and r.ours and r.unit == "s"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 0.42 * max(len(goals), len(versus)) + 1.8))
    score = [(r.goal / r.value if r.at_least else r.value / r.goal) for r in goals]
    left.barh([r.suite for r in goals], score, color=["#4c9a2a" if r.held else "#c0392b" for r in goals])
    left.axvline(1.0, color="black", linewidth=1)
    left.set_xscale("log")
    left.set_xlabel("measurement ÷ goal  (bars left of the line hold)")
    left.invert_yaxis()
    right.barh([r.suite for r in versus], [r.ours / r.torch for r in versus], color="#2e86c1")
    right.axvline(1.0, color="black", linewidth=1)
    right.set_xscale("log")
    right.set_xlabel("ours ÷ torch time  (left of the line: we are faster)")
    right.invert_yaxis()
    right.yaxis.tick_right()
    for ax in (left, right):
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="x", which="both", alpha=0.3)
    fig.suptitle("autodiff + traversal against PyTorch 2.13 (CPU): python -m bench", fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
