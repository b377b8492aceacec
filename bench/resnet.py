"""A ResNet-18 training step (train mode: forward, softmax cross-entropy, backward to the parameter
gradients) on 3×32×32 float32 inputs, at batch 8 and 32, beside torch on the same weights.

With the ``[onednn]`` extra the step races twice in the same rounds: with the oneDNN convolutions (the row
judged, issue 43's goals) and with the numpy im2col reference (its own row, ``numpy convolutions``).
Run alone: ``python -m bench --only resnet``."""

import contextlib

import numpy as np

import autodiff
import layers
from layers.losses import softmax_cross_entropy

from ._row import Row, record
from ._timing import Lane

GOALS = {8: 0.85, 32: 1.0}  # ours / the faster torch setting (issue 43)
NUMPY_CONVS = "ours, numpy convolutions"


@contextlib.contextmanager
def onednn(flag):
    """The oneDNN convolutions on (when installed and working) or off, for a lane's batches."""
    previous = layers._onednn.set_enabled(flag)
    try:
        yield
    finally:
        layers._onednn.set_enabled(previous)


def step_workload(torch=None, batch=8):
    """The lanes of one training step: ours and (with torch) torch's on a copy of our weights, each returning
    ``[loss, gradient of the fc weight]`` for the check."""
    model = layers.resnet18(10)
    x = np.random.default_rng(0).standard_normal((batch, 3, 32, 32)).astype(np.float32)
    labels = np.arange(batch) % 10
    step = autodiff.value_and_grad(lambda m: softmax_cross_entropy(m.forward(x, train=True)[0], labels))

    def ours():
        value, g = step(model)
        return [value, g.fc.weight]

    lanes = {"ours": ours}
    if torch is not None:
        module, tx, tl = _torch_resnet(torch, model), torch.tensor(x), torch.tensor(labels)
        params = list(module.parameters())
        fc = next(k for k, p in enumerate(params) if p is module.fc.weight)

        def theirs():  # gradients returned, as ours are, not accumulated into .grad and kept between steps
            value = torch.nn.functional.cross_entropy(module(tx), tl)
            return [value, torch.autograd.grad(value, params)[fc]]

        lanes["torch"] = theirs
    return lanes


def _torch_resnet(torch, model):
    from layers.torch_reference import ResNet18

    module = ResNet18(model.fc.weight.shape[0])
    module.load_state_dict(layers.save_torch_state_dict(model))
    return module.train()


def _with_and_without_onednn(lanes):
    """``lanes`` with ours on the oneDNN convolutions and, where they run, a twin on the numpy reference's."""
    ours = lanes.pop("ours")
    out = {"ours": Lane("ours", ours, lambda: onednn(True))}
    if layers._onednn.ready():
        out[NUMPY_CONVS] = Lane(NUMPY_CONVS, ours, lambda: onednn(False))
    return {**out, **lanes}


def _step(ctx, batch):
    lanes = _with_and_without_onednn(step_workload(ctx.torch, batch))
    goal = GOALS[batch]
    row = Row(f"ResNet-18 training step, batch {batch}, 3×32×32", goal=goal, goal_text=f"ours/torch ≤ {goal}",
              note=f"convolutions: {'oneDNN' if NUMPY_CONVS in lanes else 'numpy im2col'}")
    if "torch" in lanes:
        for name, lane in lanes.items():
            if name.startswith("ours"):
                with lane.around():
                    ctx.check(f"{row.suite} ({name})", lane.fn(), lanes["torch"](), rtol=1e-3, atol=1e-5)
    rounds = ctx.race(lanes)
    rows = [record(row, rounds)]
    if NUMPY_CONVS in lanes:
        numpy_row = Row(f"ResNet-18 training step, batch {batch}, 3×32×32, numpy convolutions",
                        note="the reference convolutions (no oneDNN), in the same rounds")
        rows.append(record(numpy_row, rounds, value=(NUMPY_CONVS, "torch"), ours=NUMPY_CONVS))
    return rows


def batch8(ctx):
    return _step(ctx, 8)


def batch32(ctx):
    return _step(ctx, 32)


SUITES = [batch8, batch32]
