"""Measure ``layers._onednn._primitives.MIN_POSITIONS``: from how many output positions per image oneDNN's
convolution beats im2col with ``dnnl_sgemm`` (issue 43).  Run it on a quiet machine:

    python -m bench.onednn_threshold                 # batches 8 and 32, 15 rounds
    python -m bench.onednn_threshold --batches 32 --rounds 31
    python -m bench.onednn_threshold --smoke         # two tiny rounds: checks that it runs, figures meaningless

Part 1 times each convolution shape of the ResNet-18 step (3×32×32 images) on both paths, forward plus both
gradients, in alternating rounds (A/B); part 2 times the whole training step with the threshold at each
candidate (every positions count the network has, 0: every convolution on oneDNN, and "never": the split
off, every convolution on im2col and ``dnnl_sgemm``), also in alternating rounds.  It prints medians and the
candidate with the fastest step per batch; it changes nothing (set ``MIN_POSITIONS`` by hand from it).
"""

import argparse
import statistics
import time

import numpy as np

import autodiff
import layers
from autodiff._hooks import hooks
from layers import _conv
from layers._onednn import _primitives
from layers._windows import output_size
from layers.losses import softmax_cross_entropy

NEVER = 1 << 30  # a threshold no convolution reaches: every one on im2col and dnnl_sgemm


def resnet_shapes(batch):
    """``[(x shape, w shape, stride, padding)]`` of the ResNet-18 step's convolutions, in order, without repeats."""
    seen, plain = [], hooks.convolve

    def record(x, w, stride, padding):
        key = (np.shape(x), np.shape(w), stride, padding)
        if key not in seen:
            seen.append(key)
        return _conv.conv2d(x, w, stride, padding)

    hooks.convolve = record
    try:
        layers.resnet18(10)(np.zeros((batch, 3, 32, 32), np.float32))
    finally:
        hooks.convolve = plain
    return seen


def positions(shape):
    """Output positions per image of a convolution ``(x shape, w shape, stride, padding)``."""
    (_, _, h, w), (_, _, kh, kw), stride, padding = shape
    return output_size(h, kh, stride, padding) * output_size(w, kw, stride, padding)


def _layer_call(shape, threshold):
    """Forward, input gradient and weight gradient of one convolution shape, with ``threshold`` in force."""
    x_shape, w_shape, stride, padding = shape
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape, np.float32), rng.standard_normal(w_shape, np.float32)
    g = rng.standard_normal(np.shape(_primitives._forward(x, w, stride, padding)), np.float32)

    def call():
        _primitives.MIN_POSITIONS = threshold
        _primitives._forward(x, w, stride, padding)
        _primitives._input(g, w, x_shape, stride, padding)
        _primitives._weight(x, g, w_shape, stride, padding)

    return call


def _step_call(batch, threshold):
    model = layers.resnet18(10)
    x = np.random.default_rng(0).standard_normal((batch, 3, 32, 32)).astype(np.float32)
    labels = np.arange(batch) % 10
    step = autodiff.value_and_grad(lambda m: softmax_cross_entropy(m.forward(x, train=True)[0], labels))

    def call():
        _primitives.MIN_POSITIONS = threshold
        step(model)

    return call


def _time(call, repeat):
    call()  # untimed: wakes the threads, builds oneDNN's primitives
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - start) / repeat


def race(calls, rounds, repeat):
    """``{name: median seconds}`` over ``rounds`` rounds, the order reversed every other round."""
    names, times = list(calls), {name: [] for name in calls}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(_time(calls[name], repeat))
    return {name: statistics.median(t) for name, t in times.items()}


def _label(threshold):
    return "never" if threshold == NEVER else str(threshold)


def per_layer(batch, rounds, repeat):
    print(f"\nbatch {batch}: each convolution shape, forward + both gradients (ms, medians of {rounds} rounds)")
    print(f"{'input':>20} {'weight':>18} {'s':>2} {'p':>2} {'positions':>9} {'oneDNN':>8} {'im2col+sgemm':>12} "
          f"{'ratio':>6}")
    for shape in resnet_shapes(batch):
        t = race({"onednn": _layer_call(shape, 0), "sgemm": _layer_call(shape, NEVER)}, rounds, repeat)
        print(f"{str(shape[0]):>20} {str(shape[1]):>18} {shape[2]:>2} {shape[3]:>2} {positions(shape):>9} "
              f"{t['onednn'] * 1e3:8.3f} {t['sgemm'] * 1e3:12.3f} {t['onednn'] / t['sgemm']:6.2f}")


def per_step(batch, rounds, repeat, default):
    counts = sorted({positions(shape) for shape in resnet_shapes(batch)})
    candidates = [0] + [p for p in counts if p > 1] + [NEVER]
    t = race({_label(c): _step_call(batch, c) for c in candidates}, rounds, repeat)
    best = min(t, key=t.get)
    print(f"\nbatch {batch}: the training step by MIN_POSITIONS (ms, medians of {rounds} rounds; "
          f"the default is {default})")
    for name, seconds in t.items():
        print(f"  MIN_POSITIONS={name:>6}: {seconds * 1e3:8.2f}{'   fastest' if name == best else ''}")
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.onednn_threshold", description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="8,32", help="comma list of batch sizes (default 8,32)")
    parser.add_argument("--rounds", type=int, default=15, help="A/B rounds per race (default 15)")
    parser.add_argument("--smoke", action="store_true", help="two rounds of one call: checks that it runs")
    args = parser.parse_args(argv)
    if not layers._onednn.ready():
        print(f"oneDNN is not running ({layers._onednn.describe()}): nothing to measure. "
              "pip install -e '.[onednn]' on Linux x86_64")
        return 1
    rounds, repeat = (2, 1) if args.smoke else (args.rounds, 3)
    default = _primitives.MIN_POSITIONS
    print(f"convolutions: {layers._onednn.describe()}")
    best = {}
    try:
        for batch in (int(b) for b in args.batches.split(",")):
            per_layer(batch, rounds, repeat)
            best[batch] = per_step(batch, rounds, repeat, default)
    finally:
        _primitives.MIN_POSITIONS = default
    print(f"\nfastest step: {', '.join(f'batch {b}: MIN_POSITIONS={v}' for b, v in best.items())}"
          + (" (--smoke: meaningless)" if args.smoke else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
