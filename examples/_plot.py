"""Saving figures for the examples (matplotlib's Agg backend: no screen needed)."""

import os

FIGURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures")


def save(fig, name):
    """Write ``fig`` to ``examples/figures/NAME.png`` (or ``$EXAMPLES_FIGURES/NAME.png``) and return the path."""
    folder = os.environ.get("EXAMPLES_FIGURES") or FIGURES
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
