"""The record every second-order task returns, and the check that compares two of its results.

A task is a program, not a timing: ``ours()`` runs our implementation once, each entry of
``torch_variants`` runs one torch approach once, and ``check(ours(), variant())`` raises
``AssertionError`` (naming the task and the result) unless they agree to rounding.  The harness
times them; this module never does.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Task:
    """One second-order workload, ours beside the torch approaches (issue 20, item 5).

    ``goal`` is the issue's bound on ``time(ours) / time(fastest torch variant)``, ``None`` for a
    task reported without a goal.  ``problem`` holds what the task was built from (model, data,
    loss), so a test can check ``ours()`` against an independent oracle on the same inputs.

    >>> task = Task("doubling", lambda: (np.array([2.0]),), {"by hand": lambda: (np.array([2.0]),)},
    ...             allclose("doubling", rtol=0, atol=0), goal=1.0)
    >>> task.check(task.ours(), task.torch_variants["by hand"]())
    """

    name: str
    ours: object
    torch_variants: dict
    check: object
    goal: float = None
    note: str = ""
    problem: dict = field(default_factory=dict, repr=False)


def allclose(name, rtol, atol):
    """A check: as many results on each side, each pair equal within ``rtol`` and ``atol``.

    >>> allclose("t", rtol=1e-9, atol=0)((np.ones(2),), (np.ones(2) + 1e-3,))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: ...
    """

    def check(ours, theirs):
        ours, theirs = list(ours), list(theirs)
        assert len(ours) == len(theirs), f"{name}: {len(ours)} results of ours against {len(theirs)}"
        for k, (a, b) in enumerate(zip(ours, theirs)):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape, f"{name}: result {k} has shape {a.shape} against {b.shape}"
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{name}: result {k}")

    return check
