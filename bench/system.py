"""Costs outside the steady state: peak extra memory per training step (RSS high-water mark, each
framework in its own subprocess), import time, and numba's first-call compile time.
Run alone: ``python -m bench.system``."""

import os
import subprocess
import sys
import tempfile
import textwrap

from ._timing import Row

_MEMORY = """
import sys
import numpy as np
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))
FRAMEWORK, MODEL = sys.argv[1], sys.argv[2]
{setup}
step()  # warm: first-call allocations and caches are not "per step"
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the high-water mark (VmHWM) to the current size
base = status("VmRSS:")
step()
print(status("VmHWM:") - base)
"""

_SETUP = {
    "mlp": """
from bench.mlp import make, loss, torch_loss
params, x, onehot = make([784, 512, 512, 10], 128)
if FRAMEWORK == "ours":
    import autodiff
    g = autodiff.grad(loss)
    step = lambda: g(params, x, onehot)
else:
    import torch
    ts = [torch.tensor(params[k], requires_grad=True) for k in params]
    tx, toh = torch.tensor(x), torch.tensor(onehot)
    step = lambda: torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts)
""",
    "resnet": """
import layers
from layers.losses import softmax_cross_entropy
model = layers.resnet18(10)
x = np.random.default_rng(0).standard_normal((8, 3, 32, 32)).astype(np.float32)
labels = np.arange(8) % 10
if FRAMEWORK == "ours":
    import autodiff
    g = autodiff.grad(lambda m: softmax_cross_entropy(m.forward(x, train=True)[0], labels))
    step = lambda: g(model)
else:
    import torch
    from layers.torch_reference import ResNet18
    module, tx, tl = ResNet18(10), torch.tensor(x), torch.tensor(labels)
    def step():
        module.zero_grad()
        torch.nn.functional.cross_entropy(module(tx), tl).backward()
""",
}


def _python(code, *args, env=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          cwd=root, env={**os.environ, **(env or {})}, timeout=600)
    if done.returncode:
        raise RuntimeError(f"benchmark subprocess failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def memory(ctx):
    rows = []
    for model, label in (("mlp", "MLP 784-512-512-10 step"), ("resnet", "resnet18 step, batch 8")):
        code = _MEMORY.replace("{setup}", _SETUP[model])
        row = Row(f"peak extra memory: {label}", goal_text="(reported)")
        row.ours = _python(code, "ours", model) / 1e6
        if ctx.torch is not None:
            row.torch = _python(code, "torch", model) / 1e6
        row.unit = "MB"
        rows.append(row)
    return rows


def import_time(ctx):
    code = "import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"
    ours = min(_python(code.format(mod="autodiff, traversal")) for _ in range(3))
    row = Row("import time (autodiff + traversal)", ours=ours, goal_text="(reported)")
    if ctx.torch is not None:
        row.torch = min(_python(code.format(mod="torch")) for _ in range(3))
    return [row]


def numba_first_call(ctx):
    code = "import time, autodiff; t = time.perf_counter(); autodiff.warmup(); print(time.perf_counter() - t)"
    with tempfile.TemporaryDirectory() as fresh:
        cold = _python(code, env={"NUMBA_CACHE_DIR": fresh})
        warm = _python(code, env={"NUMBA_CACHE_DIR": fresh})
    return [Row("numba first call: compile every kernel", ours=cold, goal_text="(reported)",
                note=f"{warm:.2f} s from the on-disk cache; excluded from every other timing")]


SUITES = [memory, import_time, numba_first_call]

if __name__ == "__main__":
    from .__main__ import main

    main(["--only", "system"])
