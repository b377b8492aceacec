"""Where a ResNet-18 training step's time goes, ours and torch's, as proportions per part (issue 43).

``python -m bench.step_profile [--batch 8] [--steps 6]`` runs the step (forward, softmax cross-entropy,
backward, ``Momentum`` / ``torch.optim.SGD(momentum=0.9)`` update) and prints each part's share of the step:

- ours: every primitive's function is timed (its own time, not its callees'), grouped by layer kind; inside the
  convolutions, oneDNN's forward, backward data, backward weights and weight reorders, and the im2col kernels
  and ``dnnl_sgemm`` below the split, are timed apart; what the step spends outside them is the engine's
  (recording, and the backward loop with its accumulation), and ``optimisers.update`` is the optimiser's;
- torch: ``torch.profiler``'s self CPU time of each aten operator, grouped the same way, the rest of the step
  (Python, the autograd engine, the profiler's own cost) as the engine.

Shares only: this is a reader's measure of where the time goes, not a timing (the machine may be shared, and
both sides pay their instrumentation), so ratios between ours and torch are not read off it.
"""

import argparse
import contextlib
import gc
import time
from collections import defaultdict

import numpy as np

import autodiff
import layers
import optimisers
from autodiff._primitive import Primitive
from layers._onednn import _convolutions, _primitives
from layers.losses import softmax_cross_entropy

PART_OF_PRIMITIVE = {  # primitive name -> part; any other primitive is "other ops" (loss, fc, pooling, adds)
    "conv2d": "conv: numpy reference", "im2col": "conv: im2col/col2im", "col2im": "conv: im2col/col2im",
    "batch_stats": "BatchNorm", "normalise": "BatchNorm", "normalise_relu": "BatchNorm (+add+ReLU)",
    "bn_grad_sums": "BatchNorm", "bn_grad_input": "BatchNorm",
    "relu": "ReLU", "where": "ReLU",
    "maxima": "max pool", "gather_at": "max pool", "scatter_at": "max pool",
    "onednn_conv2d": "conv: rest", "onednn_conv2d_input": "conv: rest", "onednn_conv2d_weight": "conv: rest",
}
PART_OF_FUNCTION = {  # layers._onednn functions timed apart inside the convolution primitives
    (_convolutions, "forward"): "conv: oneDNN forward", (_convolutions, "backward_data"): "conv: oneDNN backward data",
    (_convolutions, "backward_weights"): "conv: oneDNN backward weights", (_convolutions, "sgemm"): "conv: dnnl_sgemm",
    (_primitives, "_im2col"): "conv: im2col/col2im", (_primitives, "_col2im"): "conv: im2col/col2im",
}


class Clock:
    """Own times per part: a timed call's time, less its timed callees'."""

    def __init__(self):
        self.own, self.stack = defaultdict(float), []

    def timed(self, part, f):
        def call(*args, **kwargs):
            self.stack.append(0.0)
            start = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                inner = self.stack.pop()
                self.own[part] += spent - inner
                if self.stack:
                    self.stack[-1] += spent
        return call

    def total(self):
        return sum(self.own.values())


@contextlib.contextmanager
def _instrumented(clock):
    """Time every primitive and the oneDNN functions while inside; reorders are ``_execute`` calls of a reorder
    primitive.  Everything is put back on the way out."""
    prims = [o for o in gc.get_objects() if issubclass(type(o), Primitive)]  # type(): a dead weakref.proxy raises
    saved = [(prim, "fun", prim.fun) for prim in prims]
    saved += [(module, name, getattr(module, name)) for module, name in [*PART_OF_FUNCTION, (_convolutions, "_execute"),
                                                                         (_convolutions, "_reorder")]]
    for prim in prims:
        prim.fun = clock.timed(PART_OF_PRIMITIVE.get(prim.__name__, "other ops"), prim.fun)
    for (module, name), part in PART_OF_FUNCTION.items():
        setattr(module, name, clock.timed(part, getattr(module, name)))
    reorders, execute, reorder = set(), _convolutions._execute, _convolutions._reorder

    def made(src, dst):
        primitive = reorder(src, dst)
        reorders.add(primitive.value)
        return primitive

    timed_reorder = clock.timed("conv: weight reorders", execute)
    _convolutions._reorder = made
    _convolutions._execute = lambda p, pairs: (timed_reorder if p.value in reorders else execute)(p, pairs)
    _convolutions.plan.cache_clear()  # plans made from here on note their reorders
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
        _convolutions.plan.cache_clear()


def ours(batch, steps):
    """``{part: seconds}`` over ``steps`` training steps (after two warm-ups)."""
    clock = Clock()
    with _instrumented(clock):
        return _profiled(clock, batch, steps)


def _profiled(clock, batch, steps):
    model = layers.resnet18(10)
    x = np.random.default_rng(0).standard_normal((batch, 3, 32, 32)).astype(np.float32)
    labels = np.arange(batch) % 10
    phases = {}

    def loss(m):
        value = softmax_cross_entropy(m.forward(x, train=True)[0], labels)
        phases["forward"], phases["own"] = time.perf_counter(), clock.total()
        return value

    step, state = autodiff.value_and_grad(loss), optimisers.setup(optimisers.Momentum(0.01, 0.9), model)
    update = clock.timed("optimiser", optimisers.update)
    parts = defaultdict(float)
    for k in range(steps + 2):
        if k == 2:
            clock.own.clear()
            parts.clear()
        start, own = time.perf_counter(), clock.total()
        _, g = step(model)
        end, own_end = time.perf_counter(), clock.total()
        parts["engine: recording"] += phases["forward"] - start - (phases["own"] - own)
        parts["engine: backward loop"] += end - phases["forward"] - (own_end - phases["own"])
        state, model = update(state, model, g)
    return {**parts, **clock.own}


TORCH_PARTS = [  # (substring of an aten operator's name, part), the first that matches
    ("convolution_backward", "conv: backward (data + weights)"), ("convolution", "conv: forward"),
    ("batch_norm", "BatchNorm"), ("threshold_backward", "ReLU"), ("relu", "ReLU"), ("max_pool", "max pool"),
    ("Optimizer.", "optimiser"),
]


def _torch_part(event):
    """The part of a profiled torch event: its own name's, else its nearest caller's (an ``add_`` inside
    ``Optimizer.step`` is the optimiser's), else "other ops"."""
    while event is not None:
        part = next((p for s, p in TORCH_PARTS if s in event.name), None)
        if part is not None:
            return part
        event = event.cpu_parent
    return "other ops"


def theirs(batch, steps):
    """``{part: seconds}`` of torch's step under ``torch.profiler`` (self CPU time of each operator)."""
    import torch

    from layers.torch_reference import ResNet18

    module = ResNet18(10)
    module.load_state_dict(layers.save_torch_state_dict(layers.resnet18(10)))
    module.train()
    tx, tl = torch.tensor(np.random.default_rng(0).standard_normal((batch, 3, 32, 32)).astype(np.float32)), \
        torch.arange(batch) % 10
    opt = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(module(tx), tl).backward()
        opt.step()

    step(), step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        wall = time.perf_counter() - start
    parts = defaultdict(float)
    for event in prof.events():
        parts[_torch_part(event)] += event.self_cpu_time_total / 1e6
    parts["engine and Python (the rest)"] = wall - sum(parts.values())
    return dict(parts)


def _table(title, parts):
    total = sum(parts.values())
    lines = [f"{title}: share of the step"]
    for part, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {part:34s} {100 * seconds / total:5.1f} %")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args(argv)
    print(f"convolutions: {layers._onednn.describe()}")
    print(_table(f"ours, batch {args.batch}", ours(args.batch, args.steps)))
    if not args.no_torch:
        print(_table(f"torch, batch {args.batch}", theirs(args.batch, args.steps)))


if __name__ == "__main__":
    main()
