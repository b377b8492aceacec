"""The reading path of ``grad``: which of the library's files and lines one gradient of a model runs.

``AUTODIFF_REFERENCE=1 python -m bench.reading_path`` (a reader's measure, not a timing) traces
(``sys.settrace``) the second call of ``grad(loss)(model, x)`` for a two-layer tanh MLP held in a dict of
lists, and counts the files of ``autodiff/`` and ``traversal/`` it enters, their lines (``wc -l``), and the
distinct lines it executes: in all, and split into the engine and the definitions of the ops the model
calls (``autodiff/numpy``; autograd's counterpart is its ``numpy_vjps.py`` and ``numpy_wrapper.py``).  The
first call is left out: it imports and warms caches, which a reader of ``grad`` does not need.  It prints
the figures and the files, in the order first entered.
"""

import os
import sys

import numpy as np

import autodiff
import autodiff.numpy as anp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(autodiff.__file__)))
PACKAGES = tuple(os.path.join(ROOT, p) + os.sep for p in ("autodiff", "traversal"))


def loss(model, x):
    h = x
    for layer in model["layers"]:
        h = anp.tanh(h @ layer["w"] + layer["b"])
    return anp.sum(h ** 2)


def measure():
    """``(files in order first entered, {file: lines}, executed (file, line) pairs)`` of one ``grad``."""
    rng = np.random.default_rng(0)
    model = {"layers": [{"w": rng.standard_normal((4, 8)), "b": np.zeros(8)},
                        {"w": rng.standard_normal((8, 2)), "b": np.zeros(2)}]}
    x = rng.standard_normal((3, 4))
    g = autodiff.grad(loss)
    g(model, x)
    seen, order = set(), []

    def tracer(frame, event, arg):
        name = frame.f_code.co_filename
        if not name.startswith(PACKAGES):
            return None
        if name not in order:
            order.append(name)
        if event == "line":
            seen.add((name, frame.f_lineno))
        return tracer

    sys.settrace(tracer)
    try:
        g(model, x)
    finally:
        sys.settrace(None)
    lines = {f: sum(1 for _ in open(f)) for f in order}
    return order, lines, seen


def main():
    order, lines, seen = measure()
    mode = "reference" if os.environ.get("AUTODIFF_REFERENCE") == "1" else "default"
    print(f"grad of a model ({mode} mode): {len(order)} files, {sum(lines.values())} lines, {len(seen)} executed")
    ops = [f for f in order if os.sep + os.path.join("autodiff", "numpy") + os.sep in f]
    engine = [f for f in order if f not in ops]
    for name, files in (("the engine", engine), ("the ops the model calls (autodiff/numpy)", ops)):
        print(f"  {name}: {len(files)} files, {sum(lines[f] for f in files)} lines, "
              f"{sum(1 for s in seen if s[0] in files)} executed")
    for f in order:
        print(f"  {os.path.relpath(f, ROOT)}: {lines[f]} lines, {sum(1 for s in seen if s[0] == f)} executed")


if __name__ == "__main__":
    main()
