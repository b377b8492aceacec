"""Peak extra memory of a step, ours beside torch's, each framework in its own fresh process (how it is
measured: ``bench/_fresh.py``): one HVP of the MLP 784-512-512-10 and the ResNet-18 training step (batch 8;
32 with ``--full``), each judged; with ``--full`` also the MLP's training step and its gradient-norm penalty
step, reported.  Each process saves its
result, and ours and torch's must agree before a figure is reported.  Run alone: ``python -m bench --only memory``.
"""

import os
import tempfile

import numpy as np

from . import _fresh
from ._row import Row
from ._stats import summary


def measure(workload, frameworks, batch, folder):
    """``{framework: (first MB, second MB, result arrays)}``, each from its own fresh process."""
    outs = [os.path.join(folder, f"{workload}-{name}.npz") for name in frameworks]
    found = _fresh.run_all([["memory", workload, name, batch, out] for name, out in zip(frameworks, outs)],
                           env=_fresh.MEMORY_ENV)
    measured = {}
    for name, out, figures in zip(frameworks, outs, found):
        with np.load(out) as saved:
            arrays = [saved[f"arr_{k}"] for k in range(len(saved.files))]
        measured[name] = (figures["first"] / 1e6, figures["second"] / 1e6, arrays)
    return measured


def judge(ctx, suite, measured, goal=None, tolerance=(2e-3, 1e-5)):
    """The rows from ``measured`` (framework → :func:`measure`'s triple), after checking that every framework's
    result agrees with ours.  With torch and a ``goal``, the row judges ours / torch's second-step peak."""
    ours = measured["ours"]
    row = Row(suite, ours=ours[1], unit="MB", goal_text="(reported)",
              note=f"first step: ours {ours[0]:.1f} MB")
    if "torch" not in measured:
        row.goal_text = "(reported: torch is not installed)"
        return [row]
    for name, figures in measured.items():
        ctx.check(f"{suite} ({name})", ours[2], figures[2], rtol=tolerance[0], atol=tolerance[1])
    row.torch, row.ratio = measured["torch"][1], ours[1] / max(measured["torch"][1], 0.1)
    row.note += f", torch {measured['torch'][0]:.1f} MB"
    if goal is not None:
        row.goal, row.goal_text = goal, f"ours/torch ≤ {goal:g}"
        row.value, row.band = summary([row.ratio])
    rows = [row]
    for name in [n for n in measured if n not in ("ours", "torch")]:
        rows.append(Row(f"{suite}, vs {name}", ours=ours[1], torch=measured[name][1], unit="MB",
                        ratio=ours[1] / max(measured[name][1], 0.1), goal_text="(reported)",
                        note=f"first step: {name} {measured[name][0]:.1f} MB"))
    return rows


def _suite(ctx, workload, label, goal=None, batch=0, extra=(), tolerance=(2e-3, 1e-5)):
    frameworks = ["ours"] + (["torch", *extra] if ctx.torch is not None else [])
    with tempfile.TemporaryDirectory() as folder:
        return judge(ctx, f"peak extra memory: {label}", measure(workload, frameworks, batch, folder), goal,
                     tolerance)


def mlp_step(ctx):
    return _suite(ctx, "mlp_step", "MLP 784-512-512-10 step")


def mlp_hvp(ctx):
    extra = () if ctx.quick else ("torch.func",)
    return _suite(ctx, "mlp_hvp", "one HVP, MLP 784-512-512-10", goal=1.0, extra=extra)


def penalty(ctx):
    return _suite(ctx, "penalty", "gradient-norm penalty step, big MLP")


def resnet_step(ctx):
    batch = 8 if ctx.quick else 32
    return _suite(ctx, "resnet_step", f"ResNet-18 training step, batch {batch}", goal=1.0, batch=batch,
                  tolerance=(1e-3, 1e-5))


SUITES = [mlp_hvp, resnet_step]  # the rows with a goal
FULL = [mlp_step, penalty]  # reported only: four fresh processes, about 8 s of the quick run's 60
