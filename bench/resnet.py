"""A ResNet-18 training step (train mode: forward, softmax cross-entropy, backward to the parameter
gradients) on 3×32×32 float32 inputs, at batch 8 and 32, beside torch on the same weights.
Run alone: ``python -m bench --only resnet``."""

import numpy as np

import autodiff
import layers
from layers.losses import softmax_cross_entropy

from ._row import Row, record


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


def _step(ctx, batch):
    lanes = step_workload(ctx.torch, batch)
    row = Row(f"ResNet-18 training step, batch {batch}, 3×32×32", goal=1.0, goal_text="ours/torch ≤ 1.0")
    if "torch" in lanes:
        ctx.check(row.suite, lanes["ours"](), lanes["torch"](), rtol=1e-3, atol=1e-5)
    return [record(row, ctx.race(lanes))]


def batch8(ctx):
    return _step(ctx, 8)


def batch32(ctx):
    return _step(ctx, 32)


SUITES = [batch8, batch32]
