"""Checkpoints of ResNet-18 (1000 classes, 47 MB): traversal.save/load beside torch.save/torch.load
(weights_only=True) of the same state dict, in a RAM-backed folder where there is one (``/dev/shm``): the
disk's write-back is the same 47 MB for both, and its noise moved the save row's band across its goal from
one quiet run to the next.  Run alone: ``python -m bench --only checkpoint``."""

import os
import tempfile

import layers
from traversal import load, save, trainables

from ._row import Row, record
from .kernels import parameter_set

_RAM = "/dev/shm"


def save_and_load(ctx):
    model, like = parameter_set(), layers.resnet18(1000, seed=1)
    with tempfile.TemporaryDirectory(dir=_RAM if os.access(_RAM, os.W_OK) else None) as folder:
        ours_path, torch_path = os.path.join(folder, "r.npz"), os.path.join(folder, "r.pt")
        mb = sum(a.nbytes for a in trainables(model)) / 1e6
        rows = [Row(f"resnet18 checkpoint save ({mb:.0f} MB of parameters)", goal=2.0, goal_text="≤ 2× torch",
                    note="ours writes a temporary file and renames it over the old one (never half a checkpoint); "
                         "torch.save overwrites in place"),
                Row(f"resnet18 checkpoint load ({mb:.0f} MB of parameters)", goal=1.5, goal_text="≤ 1.5× torch",
                    note="ours verifies every member's CRC-32 (load's default; verify=False skips it, for trusted "
                         "files)")]
        save(ours_path, model)
        ctx.check(rows[1].suite, [load(ours_path, like).fc.weight], [model.fc.weight], rtol=0, atol=0)
        lanes = [{"ours": lambda: save(ours_path, model)}, {"ours": lambda: load(ours_path, like)}]
        if ctx.torch is not None:
            _torch_side(ctx, rows, lanes, model, torch_path)
        return [record(row, ctx.race(contenders)) for row, contenders in zip(rows, lanes)]


def _torch_side(ctx, rows, lanes, model, path):
    torch = ctx.torch
    state = layers.save_torch_state_dict(model)
    torch.save(state, path)
    ctx.check(rows[1].suite, [torch.load(path, weights_only=True)["fc.weight"]], [model.fc.weight])
    lanes[0]["torch"] = lambda: torch.save(state, path)
    lanes[1]["torch"] = lambda: torch.load(path, weights_only=True)


SUITES = [save_and_load]
