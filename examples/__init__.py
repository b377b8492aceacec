"""Worked second-order examples; run each as ``python examples/NAME.py`` or ``python -m examples.NAME``.

Each prints its result and saves a figure to ``examples/figures/NAME.png``.
``EXAMPLES_QUICK=1`` in the environment shortens the training loops and skips
the comparisons with torch, and ``EXAMPLES_FIGURES=DIR`` saves the figures
there instead (the tests run every example that way, both ways).
"""

import os

QUICK = os.environ.get("EXAMPLES_QUICK", "") == "1"


def training_steps(full, quick):
    """``quick`` training steps under ``EXAMPLES_QUICK=1``, else ``full``.

    >>> training_steps(1000, 40) in (1000, 40)
    True
    """
    return quick if QUICK else full


def compare_with_torch():
    """True when torch is installed and the run is not quick; otherwise print why the comparison is skipped."""
    import importlib.util

    if QUICK:
        print("EXAMPLES_QUICK=1: comparison with torch skipped (tests/models/test_examples.py makes it)")
        return False
    if importlib.util.find_spec("torch") is None:
        print("torch is not installed; skipping the comparison (pip install -e '.[test]')")
        return False
    return True
