"""What each acceleration buys: bench workloads timed with one acceleration off against all of them on.

``python -m bench.accelerations`` (options: ``--only NAMES`` for some accelerations, ``--workloads NAMES``,
``--rounds N``, ``--smoke`` for two tiny rounds that check the plumbing).  For each acceleration in
:data:`ACCELERATIONS` it starts a fresh Python process with only that acceleration switched off (by its
environment variables) beside one with everything on, and times each workload of :data:`WORKLOADS` in both,
alternating which goes first round by round (A/B), with the calibrated batches of ``bench._timing``.  A row
is the median over rounds of off / on (with its band, ``bench._stats``): 1.25 means the acceleration saves
20% of that workload's time.  ``all`` (``AUTODIFF_REFERENCE=1``) is the reference core alone.  Names for
``--only`` and ``--workloads`` are the keys of the two tables (``--only layouts,all --workloads mlp_step``).
It measures and prints; it asserts nothing about speed.
"""

import argparse
import json
import os
import subprocess
import sys

from ._stats import summary


def accelerations():
    """acceleration -> the environment that switches it alone off, read from the one hook table
    (``autodiff.accelerations()``), and ``"all"``: every acceleration at once, the reference core alone."""
    import autodiff
    import layers  # noqa: F401  (each package notes its accelerations when imported)
    import optimisers  # noqa: F401
    import traversal  # noqa: F401

    names = {name: {"AUTODIFF_ACCEL_OFF": name} for name in autodiff.accelerations()}
    return {**names, "all": {"AUTODIFF_REFERENCE": "1"}}


ACCELERATIONS = accelerations()


def _fresh_workload(name, batch=0):
    from ._workloads import WORKLOADS

    return WORKLOADS[name](None, batch)["ours"]


def _overhead():
    import numpy as np

    import autodiff
    import autodiff.numpy as anp

    from .overhead import chain

    x, step = np.linspace(-1.0, 1.0, 10), autodiff.grad(lambda x: chain(x, anp))
    return lambda: step(x)


def _l2_penalty():
    import autodiff
    from traversal import total

    from .kernels import parameter_set

    model, step = parameter_set(), autodiff.value_and_grad(lambda m: total(autodiff.sumsq, m))
    return lambda: step(model)


def _total_gradient():
    import autodiff
    import autodiff.numpy as anp
    from traversal import total

    from .total import optimisers171_model

    model = optimisers171_model()
    gradient = autodiff.grad(lambda m: total(lambda p: anp.sum(p * p), m))
    return lambda: gradient(model)


def _norm_total_gradient():
    import autodiff
    import autodiff.numpy as anp
    from traversal import total

    from .total import seed_model

    model = seed_model()
    gradient = autodiff.grad(lambda m: total(anp.linalg.norm, m))
    return lambda: gradient(model)


def _per_example():
    from ._so_per_example import per_example_gradients

    return per_example_gradients().ours


def _adam_resnet():
    import numpy as np

    import layers
    from optimisers import Adam, setup, update
    from traversal import fmap, isnumeric

    model = layers.resnet18(10)
    grads = fmap(lambda p: np.full_like(p, 0.01), model, exclude=isnumeric)
    state = setup(Adam(1e-3), model)
    return lambda: update(state, model, grads)


def _maml():
    from ._so_maml import maml_meta_step

    return maml_meta_step().ours


# workload -> (what it is, a function building its step); ours only: the suites they come from check them
WORKLOADS = {
    "overhead": ("100-op elementwise chain, grad (per-op overhead)", lambda: _overhead()),
    "mlp_step": ("MLP 784-512-512-10 training step", lambda: _fresh_workload("mlp_step")),
    "mlp_hvp": ("one HVP of that MLP", lambda: _fresh_workload("mlp_hvp")),
    "penalty": ("gradient-norm penalty step, big MLP", lambda: _fresh_workload("penalty")),
    "l2": ("L2 penalty + gradient, ResNet-18 params", _l2_penalty),
    "total": ("total's gradient, optimisers171 model", _total_gradient),
    "resnet_step": ("ResNet-18 training step, batch 8", lambda: _fresh_workload("resnet_step", 8)),
    "norm_total": ("norm gradient of total, 3-parameter dict", _norm_total_gradient),
    "per_example": ("per-example gradients (vmap), MLP 784-128-10", _per_example),
    "maml": ("MAML meta-step through optimisers.update, MLP 1-40-40-1", _maml),
    "adam_resnet": ("an Adam update of ResNet-18's 11M parameters", _adam_resnet),
}


def _switch_variables():
    """Every variable some row sets: cleared from the all-on process's environment."""
    return {name for env in ACCELERATIONS.values() if env for name in env}


class Child:
    """A fresh ``python -m bench.accelerations --child`` process with extra environment ``env``: it times a
    workload each time it is sent its name, and answers with the seconds per call."""

    def __init__(self, env, min_batch):
        base = {k: v for k, v in os.environ.items() if k not in _switch_variables()}
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.accelerations", "--child", str(min_batch)], cwd=root,
            env={**base, **env}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def time(self, workload):
        self.process.stdin.write(workload + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"bench.accelerations: the child process died timing {workload!r} (its stderr "
                               "is above); rerun with --workloads to narrow it down")
        return json.loads(line)["seconds"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def _serve(min_batch):
    """The child's loop: a workload name in, ``{"seconds": per call}`` out, each step built once."""
    import autodiff

    from ._timing import Lane, batch, calibrate, gc_paused

    autodiff.warmup()  # load the numba kernels now (none when they are off), not during the first rounds
    built = {}
    for line in sys.stdin:
        name = line.strip()
        if name not in built:
            lane = Lane(name, WORKLOADS[name][1]())
            built[name] = (lane, calibrate(lane, min_batch)[0])
        lane, calls = built[name]
        with gc_paused():
            seconds = batch(lane, calls)[0]
        print(json.dumps({"seconds": seconds}), flush=True)


def ratios(on, off, workload, rounds):
    """off / on per round, the order alternating (A/B) so a slow stretch of the machine hits both."""
    samples = []
    for r in range(rounds):
        first, second = (on, off) if r % 2 == 0 else (off, on)
        times = {id(first): first.time(workload), id(second): second.time(workload)}
        samples.append(times[id(off)] / times[id(on)])
    return samples


def measure(names, workloads, rounds, min_batch):
    """``[(acceleration, workload, median off/on, band)]``; ``None`` figures for an acceleration without a switch."""
    rows, on = [], Child({}, min_batch)
    try:
        for name in names:
            env = ACCELERATIONS[name]
            if env is None:
                rows.append((name, None, None, None))
                continue
            off = Child(env, min_batch)
            try:
                for workload in workloads:
                    rows.append((name, workload, *summary(ratios(on, off, workload, rounds))))
            finally:
                off.close()
    finally:
        on.close()
    return rows


def table(rows):
    """What each acceleration buys: off/on, its band, and the share of the time it saves."""
    lines = [f"{'acceleration':17} {'workload':42} {'off/on':>7}  {'band':14} saves"]
    for name, workload, value, band in rows:
        if workload is None:
            lines.append(f"{name:17} (no switch of its own yet: measured only within 'all')")
            continue
        saves = 1 - 1 / value
        lines.append(f"{name:17} {WORKLOADS[workload][0]:42} {value:7.2f}  [{band[0]:.2f}, {band[1]:.2f}]  "
                     f"{saves:6.0%} of the time")
    return "\n".join(lines)


def _names(choices):
    def parse(text):
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in choices]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(map(repr, unknown)) or repr(text)}; "
                                             f"choose a comma list among: {', '.join(choices)}")
        return names
    return parse


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.accelerations", description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=_names(ACCELERATIONS), default=list(ACCELERATIONS), metavar="NAMES")
    parser.add_argument("--workloads", type=_names(WORKLOADS), default=list(WORKLOADS), metavar="NAMES")
    parser.add_argument("--rounds", type=int, default=9, help="A/B rounds per workload (default 9)")
    parser.add_argument("--smoke", action="store_true", help="two tiny rounds: checks it runs (figures meaningless)")
    parser.add_argument("--child", type=float, metavar="MIN_BATCH", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    if args.child is not None:
        return _serve(args.child)
    from ._timing import MODES

    mode = MODES["smoke" if args.smoke else "quick"]
    rounds = 2 if args.smoke else args.rounds
    print(table(measure(args.only, args.workloads, rounds, mode.min_batch)))
    if args.smoke:
        print("(--smoke: two tiny rounds, the figures mean nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
