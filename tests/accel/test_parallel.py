"""The two-thread path for large reductions gives the serial answers, in forked children and under
concurrent Python threads too (timings live in bench/, not here)."""

import json
import math
import os
import threading
import weakref

import numpy as np
import pytest

import autodiff
from autodiff._accel import parallel as _parallel
from traversal import total


@pytest.fixture
def big_model():
    rng = np.random.default_rng(0)
    return {"a": rng.standard_normal(2_000_000).astype(np.float32),
            "b": [rng.standard_normal((700, 900)).astype(np.float32), rng.standard_normal(5000)],
            "c": rng.standard_normal((1000, 1000)).astype(np.float32)}


def _serial(f):
    previous = _parallel.set_threads(1)
    try:
        return f()
    finally:
        _parallel.set_threads(previous)


def _value_and_grad(model):
    value, g = autodiff.value_and_grad(lambda m: total(autodiff.sumsq, m) + 0.5 * total(autodiff.abssum, m))(model)
    return value, [g["a"], g["b"][0], g["b"][1], g["c"]]


def test_parallel_equals_serial(big_model):
    assert sum(a.nbytes for a in [big_model["a"], *big_model["b"], big_model["c"]]) > _parallel.PARALLEL_BYTES
    value, grads = _value_and_grad(big_model)
    s_value, s_grads = _serial(lambda: _value_and_grad(big_model))
    assert math.isclose(value, s_value, rel_tol=1e-12)
    for a, b in zip(grads, s_grads):
        np.testing.assert_array_equal(a, b)
    norm = math.sqrt(total(autodiff.sumsq, big_model))
    assert math.isclose(norm, _serial(lambda: math.sqrt(total(autodiff.sumsq, big_model))), rel_tol=1e-12)


def _watch_pieces(names):
    """Make ``_parallel._share`` append, for every piece, the name of the thread that runs it.  The caller's
    pieces wait (10 s at most) until the worker has started one, so a worker that exists always shows in
    ``names``, however busy the machine; a serial run never calls the worker and shows none."""
    share, worker_started = _parallel._share, threading.Event()

    def watched(n, run):
        def run_named(k):
            name = threading.current_thread().name
            names.append(name)
            if name.startswith("autodiff-kernel"):  # the pool's worker (parallel.py names its thread so)
                worker_started.set()
            else:
                worker_started.wait(10)
            run(k)

        share(n, run_named)

    _parallel._share = watched


def test_forked_child_uses_the_parallel_path(big_model):
    """A forked child has no worker thread of its own until it makes one: the child's reduction must still be
    shared with a worker (when the parent's is) and give the parent's answer."""
    expected, parallel = total(autodiff.sumsq, big_model), _parallel._threads > 1  # 1 under AUTODIFF_REFERENCE=1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            names = []
            _watch_pieces(names)  # in the child only
            value = float(total(autodiff.sumsq, big_model))
            worker = sum(name.startswith("autodiff-kernel") for name in names)
            os.write(write, json.dumps({"value": value, "worker": worker, "pieces": len(names)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    child = json.loads(os.read(read, 1000).decode())
    os.waitpid(pid, 0)
    assert math.isclose(child["value"], expected, rel_tol=1e-12)
    if parallel:
        assert child["worker"] >= 1, f"the child ran all {child['pieces']} pieces on one thread"
    else:
        assert child["worker"] == 0


def test_two_python_threads_at_once(big_model):
    expected = _serial(lambda: _value_and_grad(big_model))
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append(_value_and_grad(big_model))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 6
    for value, grads in results:
        assert math.isclose(value, expected[0], rel_tol=1e-12)
        for a, b in zip(grads, expected[1]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["sumsq", "abssum", "norm"])
def test_fused_forward_gradients_equal_the_generic_path_on_a_large_model(big_model, name):
    import autodiff.numpy as anp

    fast, generic = {
        "sumsq": (autodiff.sumsq, lambda p: anp.sum(p * p)),
        "abssum": (autodiff.abssum, lambda p: anp.sum(anp.abs(p))),
        "norm": (anp.linalg.norm, lambda p: anp.sqrt(anp.sum(p * p))),
    }[name]
    v1, g1 = autodiff.value_and_grad(lambda m: total(fast, m))(big_model)
    v2, g2 = autodiff.value_and_grad(lambda m: total(generic, m))(big_model)
    assert math.isclose(v1, v2, rel_tol=1e-5)
    for a, b in zip([g1["a"], g1["b"][0], g1["b"][1], g1["c"]], [g2["a"], g2["b"][0], g2["b"][1], g2["c"]]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    h1 = autodiff.grad(lambda m: total(autodiff.scaled(3.0, fast), m))(big_model) if name != "norm" else None
    if h1 is not None:  # a scaled fused reduction: the gradient at g = 1 is scaled too
        np.testing.assert_allclose(h1["c"], 3.0 * g1["c"], rtol=1e-6)


def test_pieces_cover_every_element_once_and_add_up_per_array():
    rng = np.random.default_rng(1)
    flats = [rng.standard_normal(n).astype(np.float32) for n in (0, 5, _parallel.CHUNK, 2 * _parallel.CHUNK + 7)]
    outs = [np.full(x.size, np.nan, np.float32) for x in flats]
    sums = _parallel.sum_pieces(lambda piece, out: (np.multiply(piece, 2, out=out), float(piece.sum()))[1],
                                flats, outs)
    for x, out, total_ in zip(flats, outs, sums):
        np.testing.assert_array_equal(out, 2 * x)  # every element written, by exactly the right piece
        assert math.isclose(total_, float(x.astype(np.float64).sum()), rel_tol=1e-6, abs_tol=1e-6)
    assert _parallel.sum_pieces(lambda piece: 1.0, flats) == [0.0, 1.0, 1.0, 3.0]  # pieces per array


def test_a_task_left_waiting_in_the_pool_holds_none_of_the_work():
    """When the worker is busy, the caller takes every piece and cancels the worker's task, which still waits in
    the pool's queue: it must not keep the work alive (a column matrix, an output), or a step's peak memory
    grows by whatever the work held, depending on when the worker gets to the queue."""
    gate = threading.Event()
    blocker = _parallel._executor().submit(gate.wait)  # the worker is busy until the gate opens

    class Payload:
        pass

    payload = Payload()
    held = weakref.ref(payload)
    done = []

    def run(k, payload=payload):
        done.append(k)

    try:
        _parallel._share(3, run)
        del run, payload
        assert done == [0, 1, 2]  # the caller took every piece
        assert held() is None
    finally:
        gate.set()
        blocker.result()
