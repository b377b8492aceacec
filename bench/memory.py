"""Peak extra memory of one Hessian-vector product of the 784-512-512-10 MLP (float32, batch 128), each
framework in its own fresh process: ours (forward over reverse), torch's double backward (the goal's
yardstick, issue 16: ours ≤ torch's) and torch.func's forward over reverse (reported).

"Extra" is the RSS high-water mark (VmHWM in /proc/self/status) after one HVP minus the RSS before it,
with the model, inputs and direction already built and the mark reset to the current size just before.
The first HVP of a fresh process is the one judged, so one-time costs of the first call count; a second
HVP, measured the same way, is reported in the note as the steady-state figure.  Each process saves its
HVP, and the three must agree before any figure is reported.  Run alone: ``python -m bench.memory``.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

from ._timing import Row

_HVP_MEMORY = """
import sys
import numpy as np
from bench.mlp import hvp_inputs, ours_hvp, torch_hvps

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))

def extra(hvp):
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the high-water mark (VmHWM) to the current size
    before = status("VmHWM:")
    result = hvp()
    return status("VmHWM:") - before, result

FRAMEWORK, OUT = sys.argv[1], sys.argv[2]
params, x, onehot, v = hvp_inputs([784, 512, 512, 10], 128)
if FRAMEWORK == "ours":
    hvp = lambda: list(ours_hvp(params, x, onehot, v).values())
else:
    import torch
    double_backward, forward_over_reverse = torch_hvps(torch, params, x, onehot, v)
    step = double_backward if FRAMEWORK == "torch" else forward_over_reverse
    hvp = lambda: [t.detach().numpy() for t in step()]
first, result = extra(hvp)
del result
second, result = extra(hvp)
np.savez(OUT, *result)
print(first, second)
"""

FRAMEWORKS = {"ours": "ours", "torch": "torch double backward", "torch.func": "torch.func forward over reverse"}


def measure(framework, folder):
    """``(first MB, second MB, the HVP as a list of arrays)`` from a fresh process running ``framework``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(folder, f"{framework}.npz")
    done = subprocess.run([sys.executable, "-c", _HVP_MEMORY, framework, out], capture_output=True, text=True,
                          cwd=root, timeout=600)
    if done.returncode:
        raise RuntimeError(f"bench.memory: the {framework} subprocess failed:\n{done.stderr[-2000:]}")
    first, second = (int(n) / 1e6 for n in done.stdout.split()[-2:])
    with np.load(out) as saved:
        return first, second, [saved[f"arr_{k}"] for k in range(len(saved.files))]


def judge(ctx, measured):
    """The rows from ``measured`` (framework → :func:`measure`'s triple), after checking the HVPs agree."""
    suite = "peak extra memory of one HVP, MLP 784-512-512-10"
    ours = measured["ours"]
    rows = [Row(suite, ours=ours[0], unit="MB", goal_text="(reported: torch is not installed)",
                note=f"a second HVP in the same process: ours {ours[1]:.1f} MB")]
    if "torch" not in measured:
        return rows
    for name in ("torch", "torch.func"):
        ctx.check(f"{suite} vs {FRAMEWORKS[name]}", ours[2], measured[name][2], rtol=2e-3, atol=1e-5)
    theirs, func = measured["torch"], measured["torch.func"]
    # a ratio, not a difference: the chart scores every goal as value / goal
    rows[0].torch, rows[0].value, rows[0].goal = theirs[0], ours[0] / max(theirs[0], 0.1), 1.0
    rows[0].goal_text = "ours / torch double backward ≤ 1"
    rows[0].note += f", torch {theirs[1]:.1f} MB, torch.func {func[1]:.1f} MB"
    rows.append(Row(f"{suite}, vs torch.func", ours=ours[0], torch=func[0], unit="MB",
                    goal_text="(reported)"))
    return rows


def hvp_memory(ctx):
    names = ["ours"] + (["torch", "torch.func"] if ctx.torch is not None else [])
    with tempfile.TemporaryDirectory() as folder:
        return judge(ctx, {name: measure(name, folder) for name in names})


SUITES = [hvp_memory]

if __name__ == "__main__":
    from .__main__ import main

    main(["--only", "memory"])
