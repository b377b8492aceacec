"""Benchmarks, side by side with PyTorch in one process.  Run ``python -m bench``."""
