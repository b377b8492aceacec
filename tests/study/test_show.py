"""autodiff.show refuses a cyclic structure within a second, naming the path that closes the cycle; it keeps ties
and repeated containers apart, and shows a structure nested three times deeper than the recursion limit."""

import signal
import sys
from contextlib import contextmanager

import numpy as np
import pytest

from autodiff import show


@contextmanager
def _deadline(seconds):
    """Raise TimeoutError in the main thread if the block runs longer than ``seconds``."""
    if not hasattr(signal, "setitimer"):
        pytest.skip("signal.setitimer (POSIX) bounds the would-be hang; this platform has none")

    def on_alarm(signum, frame):
        raise TimeoutError(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _cyclic_list():
    x = [np.ones(2)]
    x.append(x)
    return x, r"arg grad: \[1\]"


def _cyclic_dict():
    d = {"w": np.ones(2), "inner": {"b": 1.0}}
    d["inner"]["loop"] = d
    return d, r"arg grad: \['inner'\]\['loop'\]"


@pytest.mark.parametrize("make", [_cyclic_list, _cyclic_dict], ids=["list", "dict"])
def test_show_refuses_a_cycle_naming_its_path_within_a_second(make):
    tree, path = make()
    with _deadline(1.0), pytest.raises(ValueError, match=rf"cycle: the object at {path} contains itself"):
        show(tree)


def test_show_keeps_ties_and_repeated_containers():
    w, inner = np.ones(2), [np.zeros(1)]
    text = show({"a": w, "b": w, "c": inner, "d": inner})
    assert text.count("float64[2]") == 2 and text.count("grad.c[0]") == 1 and text.count("grad.d[0]") == 1


def test_show_a_structure_nested_three_times_the_recursion_limit_deep():
    depth = 3 * sys.getrecursionlimit()  # no recursion; deeper only costs time (each line prints its whole path)
    x = np.array([3.0, 4.0])
    for _ in range(depth):
        x = [x]
    lines = show(x).splitlines()
    assert len(lines) == depth + 1 and lines[-1].endswith("float64[2]  norm 5")
