"""Timing helpers shared by the benchmarks: warm up, repeat, take medians."""

import statistics
import time


def median_seconds(fn, repeats=7, min_time=0.05):
    """Median over ``repeats`` runs of the per-call time, each run long enough to time well."""
    fn()  # warm up (and compile anything lazy)
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_time / 5:
            break
        calls *= 2
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls)
    return statistics.median(runs)


def try_torch(threads=1):
    """torch if installed (``threads`` intra-op threads, or its default with ``None``), else ``None``."""
    try:
        import torch
    except ImportError:
        print("torch is not installed: running ours alone. Install it with pip install -e '.[bench]'")
        return None
    if threads is not None:
        torch.set_num_threads(threads)
    return torch
