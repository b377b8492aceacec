"""Worked second-order examples; run each with ``python -m examples.NAME``."""
