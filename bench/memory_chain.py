"""What a tape keeps (issue 40): peak and held memory of long chains and of a deep MLP under ``remat``, and the
per-op cost of deciding what each entry keeps.

Each memory figure comes from a fresh process (``python -m bench.memory_chain probe ...`` prints one JSON line),
measured with tracemalloc, which sees numpy's array buffers; memory figures do not depend on the machine's load.

- ``needless``: autograd's ``peakmem_needless_nodes``, ``n`` chained additions (or multiplications by a Python
  float) on an 8 MB float64 array, ``grad`` of their sum: the peak above the input.
- ``mlp``: a 32-layer tanh MLP (width 512, batch 256, float32): the memory the recorded forward of a ``vjp``
  holds until the backward pass, plain, with ``remat`` over blocks of 4 layers, over every layer, and over blocks
  of 4 keeping the matmuls' outputs (``policy=("matmul",)``); with the loss and gradients against the plain one.

``python -m bench.memory_chain`` prints every figure, and the per-op bookkeeping: the time of recording and
pulling back a chain of small ops, with each entry keeping what its pullbacks read against keeping everything
and the time of the MLP's ``grad`` with ``remat`` against without (time both on a quiet machine).
"""

import json
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLP = {"layers": 32, "width": 512, "batch": 256}


def needless(n, op):
    """Peak bytes above the input while ``grad`` runs ``n`` chained ops (``add`` or ``multiply``)."""
    import autodiff
    import autodiff.numpy as anp

    def f(x):
        for _ in range(n):
            x = x + 1.0 if op == "add" else x * 1.0001
        return anp.sum(x)

    autodiff.grad(f)(np.ones(3))  # imports and first-call work outside the measurement
    x = np.ones((1000, 1000))
    tracemalloc.start()
    g = autodiff.grad(f)(x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"peak": peak, "array": x.nbytes, "gradient": float(g[0, 0])}


def mlp(mode):
    """Bytes the recorded forward of a ``vjp`` holds, for ``mode`` in ``plain``, ``block`` (remat over blocks of
    4), ``layer`` (remat over each layer), ``policy`` (blocks keeping the matmuls' outputs); and, against the
    plain program's, the loss and the largest error of a gradient relative to its largest entry."""
    import autodiff
    import autodiff.numpy as anp

    layers, width, batch = MLP["layers"], MLP["width"], MLP["batch"]
    rng = np.random.default_rng(0)
    params = [((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32),
               (0.1 * rng.standard_normal(width)).astype(np.float32)) for _ in range(layers)]
    x = rng.standard_normal((batch, width)).astype(np.float32)

    def layer(h, w, b):
        return anp.tanh(h @ w + b)

    def block(h, ps):
        for w, b in ps:
            h = layer(h, w, b)
        return h

    def each_layer(h, ps):
        one = autodiff.remat(layer)
        for w, b in ps:
            h = one(h, w, b)
        return h

    step = {"plain": block, "block": autodiff.remat(block), "layer": each_layer,
            "policy": autodiff.remat(block, policy=("matmul",))}[mode]
    size = 1 if mode == "layer" else 4

    def loss(ps, step):
        h = x
        for k in range(0, layers, size):
            h = step(h, ps[k:k + size])
        return anp.sum(h * h)

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    out, pullback = autodiff.vjp(lambda ps: loss(ps, step), params)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    (grads,) = pullback(np.float32(1.0))
    del pullback
    want, plain_pullback = autodiff.vjp(lambda ps: loss(ps, block), params)
    (want_grads,) = plain_pullback(np.float32(1.0))
    error = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w)))
                for pair, want_pair in zip(grads, want_grads) for g, w in zip(pair, want_pair))
    return {"held": held, "activation": x.nbytes, "loss": float(out), "plain_loss": float(want),
            "gradient_error": error}


def probe(*argv, env=None):
    """Run one figure in a fresh process (the engine of this checkout) and return its JSON."""
    environment = dict(os.environ, **(env or {}))
    environment["PYTHONPATH"] = ROOT + os.pathsep + environment.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-m", "bench.memory_chain", "probe", *map(str, argv)], cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"bench.memory_chain probe {' '.join(map(str, argv))} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bookkeeping(n=200, rounds=60):
    """Microseconds per op of recording and pulling back ``n`` small ops (``tanh``, ``x * c``, ``x + y``, ``sum``)
    with entries keeping what their pullbacks read, the same with every entry keeping everything (no plans),
    and the median over interleaved rounds of their ratio."""
    import autodiff
    import autodiff.numpy as anp
    from autodiff import _primitive

    c = np.full(16, 0.5)

    def f(x):
        for _ in range(n // 10):
            x = anp.tanh(x) * c + x * 0.5
            x = anp.sum(x * x) * 0.01 + x * 0.5
        return anp.sum(x)

    g, plans = autodiff.grad(f), dict(_primitive._plans)
    times = {"kept": [], "all": []}
    try:
        for _ in range(rounds):
            for name in times:
                _primitive._plans.update(plans) if name == "kept" else _primitive._plans.clear()
                start = time.perf_counter()
                g(np.ones(16))
                times[name].append((time.perf_counter() - start) / n * 1e6)
    finally:
        _primitive._plans.update(plans)
    ratio = float(np.median(np.array(times["kept"]) / np.array(times["all"])))
    return {"kept_us_per_op": float(np.median(times["kept"])), "keep_all_us_per_op": float(np.median(times["all"])),
            "ratio": ratio}


def remat_time(rounds=7):
    """The median over interleaved rounds of the time of ``grad`` of the 32-layer MLP with blocks of 4 under
    ``remat``, over the same without (one more forward pass per block: about 4/3 expected)."""
    import autodiff
    import autodiff.numpy as anp

    layers, width, batch = MLP["layers"], MLP["width"], MLP["batch"]
    rng = np.random.default_rng(0)
    params = [((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32),
               np.zeros(width, np.float32)) for _ in range(layers)]
    x = rng.standard_normal((batch, width)).astype(np.float32)

    def block(h, ps):
        for w, b in ps:
            h = anp.tanh(h @ w + b)
        return h

    def loss(ps, step):
        h = x
        for k in range(0, layers, 4):
            h = step(h, ps[k:k + 4])
        return anp.sum(h * h)

    steps = {"plain": block, "remat": autodiff.remat(block)}
    grad = autodiff.grad(loss)
    times = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            start = time.perf_counter()
            grad(params, step)
            times[name].append(time.perf_counter() - start)
    return float(np.median(np.array(times["remat"]) / np.array(times["plain"])))


def main(argv):
    if argv[:1] == ["probe"]:
        kind, *rest = argv[1:]
        result = needless(int(rest[0]), rest[1]) if kind == "needless" else mlp(rest[0])
        print(json.dumps(result))
        return
    for op in ("add", "multiply"):
        for n in (25, 100):
            r = probe("needless", n, op)
            print(f"needless nodes: {n:3d} chained {op:8s} peak {r['peak'] / 2**20:7.1f} MiB "
                  f"({r['peak'] / r['array']:.1f} arrays of 8 MB)")
    plain = probe("mlp", "plain")
    for mode in ("plain", "block", "layer", "policy"):
        r = probe("mlp", mode)
        print(f"MLP 32x512, batch 256: {mode:6s} holds {r['held'] / 2**20:6.2f} MiB = "
              f"{r['held'] / r['activation']:5.1f} activations, {r['held'] / plain['held']:.2f}x plain")
    print(f"MLP 32x512, batch 256: grad with blocks of 4 under remat takes {remat_time():.2f}x the time without")
    figures = bookkeeping()
    print(f"bookkeeping: {figures['kept_us_per_op']:.2f} us/op keeping what pullbacks read, "
          f"{figures['keep_all_us_per_op']:.2f} us/op keeping everything, median ratio {figures['ratio']:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
