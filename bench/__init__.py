"""Benchmarks beside PyTorch.  Run ``python -m bench``; how it measures is in ``bench/README.md``.

``MODULES`` names the suite modules in the order they run.  A module ``bench/NAME.py`` defines ``SUITES``, a
list of functions ``suite(ctx) -> [Row]`` (``bench._timing.Context``, ``bench._row.Row``), and optionally
``FULL``, suites run only with ``--full`` or when ``--only`` names the module; adding one is one entry here.
"""

MODULES = ("overhead", "mlp", "total", "kernels", "resnet", "checkpoint", "memory", "system", "second_order", "jit")
