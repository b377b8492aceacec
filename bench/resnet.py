"""ResNet-18 forward + backward at batch 8, 3×32×32, float32, beside torch on the same weights.
Run alone: ``python -m bench.resnet``."""

import numpy as np

import autodiff
import layers
from layers.losses import softmax_cross_entropy
from traversal import trainables

from ._timing import Row


def forward_backward(ctx):
    model = layers.resnet18(10)
    x = np.random.default_rng(0).standard_normal((8, 3, 32, 32)).astype(np.float32)
    labels = np.arange(8) % 10
    step = autodiff.value_and_grad(lambda m: softmax_cross_entropy(m.forward(x, train=True)[0], labels))
    row = Row("resnet18 forward + backward, batch 8, 32×32", goal_text="(no goal set)")
    if ctx.torch is not None:
        torch = ctx.torch
        module = _torch_resnet(torch, model)
        tx, tl = torch.tensor(x), torch.tensor(labels)

        def theirs():
            module.zero_grad()
            value = torch.nn.functional.cross_entropy(module(tx), tl)
            value.backward()
            return value

        value, g = step(model)
        ctx.check(row.suite, [value], [float(theirs())], rtol=1e-4)
        ctx.check(row.suite, [trainables(g)[-2]], [module.fc.weight.grad.numpy()], rtol=1e-3, atol=1e-5)
        row.torch = ctx.time(theirs)
    row.ours = ctx.time(lambda: step(model))
    return [row]


def _torch_resnet(torch, model):
    from layers._torch import torch_name
    from layers.torch_reference import ResNet18
    from traversal import fmap_with_path, isnumeric

    module = ResNet18(10)
    state = {}
    fmap_with_path(lambda p, a: state.__setitem__(torch_name(p), torch.tensor(a)) if isnumeric(a) else None, model)
    module.load_state_dict(state, strict=False)
    return module.train()


SUITES = [forward_backward]

if __name__ == "__main__":
    from .__main__ import main

    main(["--only", "resnet"])
