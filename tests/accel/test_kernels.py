"""The numba kernels against their numpy references (one shared table), and their operating limits."""

import math
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff._accel import kernels as K
from tests.hypothesis_policy import DERANDOMIZE

_OFF = "numba kernels are off (AUTODIFF_ACCEL_OFF=kernels, NUMBA_DISABLE_JIT=1 or AUTODIFF_REFERENCE=1)"
shapes = st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple)


def _arrays(shape, dtype, seed, n=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(n)]


FUSED = {"sumsq_double": (), "abssum_sign": (), "scale_into": (0.37,), "tanh_into": ()}  # kernels writing an array


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(set(K.REFERENCE) - set(FUSED)))
def test_kernel_matches_reference(name, dtype):
    @settings(max_examples=25, deadline=None, derandomize=DERANDOMIZE)
    @given(shape=shapes, seed=st.integers(0, 1000))
    def check(shape, seed):
        xs = _arrays(shape, dtype, seed, 2 if name == "dot" else 1)
        assert math.isclose(K.run(name, *xs), K.REFERENCE[name](*[K.flat(x) for x in xs]),
                            rel_tol=1e-12, abs_tol=1e-12)

    check()


@pytest.mark.parametrize("name", ["sum", "sumsq", "abssum"])
def test_non_contiguous_views_and_empty(name):
    x = np.arange(24.0).reshape(4, 6)[:, ::2].T
    assert not x.flags.c_contiguous
    assert math.isclose(K.reduce(name, x), K.REFERENCE[name](np.ascontiguousarray(x).ravel()), rel_tol=1e-15)
    assert K.reduce(name, np.zeros((0, 3), np.float32)) == K.REFERENCE[name](np.zeros(0))


@pytest.mark.parametrize("name", ["sum", "sumsq", "abssum"])
def test_nan_and_inf_propagate(name):
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert math.isnan(K.reduce(name, x))
    y = np.array([1.0, np.inf], np.float64)
    assert K.reduce(name, y) == K.REFERENCE[name](y)


def test_float32_sum_of_squares_is_accurate_to_1e12():
    x = np.random.default_rng(0).standard_normal(10_000_000).astype(np.float32)
    exact = math.fsum(float(v) * float(v) for v in x.astype(np.float64))
    assert abs(K.reduce("sumsq", x) - exact) / exact <= 1e-12


def test_numpy_fallback_gives_the_same_answers(monkeypatch):
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    compiled = {name: K.reduce(name, x) for name in ["sum", "sumsq", "abssum"]}
    monkeypatch.setattr(K, "_compiled", dict.fromkeys(K.REFERENCE))  # every kernel "unavailable"
    for name, value in compiled.items():
        assert math.isclose(K.reduce(name, x), value, rel_tol=1e-12)


def test_other_dtypes_use_numpy():
    assert K.reduce("sumsq", np.arange(4)) == 14.0
    assert K.reduce("sum", np.ones(3, np.float16)) == 3.0


def test_at_most_two_specialisations_per_kernel():
    for dtype in (np.float32, np.float64):
        for shape in [(3,), (4, 5), (2, 3, 4), (7,)]:
            x = np.ones(shape, dtype)
            for name in ["sum", "sumsq", "abssum"]:
                K.reduce(name, x)
                K.reduce(name, x.T)
            K.run("dot", x, x)
    assert all(n <= 2 for n in K.signatures().values()), K.signatures()


def _python(code, **env):
    return subprocess.run([sys.executable, "-W", "always", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


@pytest.mark.skipif(not K._use_numba(), reason=_OFF)
def test_unwritable_package_folder_compiles_without_cache_and_without_warnings():
    done = _python("""
        import os
        real_access = os.access
        os.access = lambda path, mode: False if mode == os.W_OK else real_access(path, mode)
        import numpy as np
        from autodiff._accel import kernels as K
        assert K._cache_allowed() is False
        assert K.reduce("sumsq", np.ones(10, np.float32)) == 10.0
        assert K.load_now("sumsq") is not None
        print("ok")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok" and "Warning" not in done.stderr


def test_disable_jit_and_forced_numpy():
    for env in ({"NUMBA_DISABLE_JIT": "1"}, {"AUTODIFF_ACCEL_OFF": "kernels"}):
        done = _python("""
            import numpy as np
            from autodiff._accel import kernels as K
            assert K.kernel("sumsq") is None
            print(K.reduce("sumsq", np.ones(10, np.float32)))
        """, **env)
        assert done.returncode == 0, done.stderr
        assert float(done.stdout) == 10.0


def test_forked_child_can_use_the_kernels():
    x = np.ones(1000, np.float32)
    K.reduce("sumsq", x)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.write(write, repr(K.reduce("sumsq", x)).encode())
        finally:
            os._exit(0)
    os.close(write)
    got = os.read(read, 100).decode()
    os.waitpid(pid, 0)
    assert float(got) == 1000.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_kernels_match_their_references(name, dtype):
    @settings(max_examples=25, deadline=None, derandomize=DERANDOMIZE)
    @given(shape=shapes, seed=st.integers(0, 1000))
    def check(shape, seed):
        (x,) = _arrays(shape, dtype, seed)
        value, grad = K.fused(name, x, *FUSED[name])
        ref_out = np.empty(x.size, dtype)
        ref = K.REFERENCE[name](K.flat(x), *FUSED[name], ref_out)
        assert math.isclose(value, ref, rel_tol=1e-12, abs_tol=1e-12)
        np.testing.assert_allclose(grad.reshape(-1), ref_out, rtol=1e-6 if dtype == np.float32 else 1e-15)
        assert grad.shape == x.shape and grad.dtype == x.dtype

    check()


def _mixed_arrays():
    """Every kind of array a model holds: both float dtypes, 0-d, empty, views, Fortran order, and the
    dtypes and types the batch loops leave to their caller (int, complex, float16, a numpy scalar)."""
    rng = np.random.default_rng(3)
    big = rng.standard_normal((6, 8))
    return [big.astype(np.float32), big, big[:, ::2], np.asfortranarray(big), np.array(2.5), np.float64(2.5),
            np.zeros((0, 4), np.float32), big[1], np.arange(5), big + 1j, big.astype(np.float16),
            np.array([1.0, np.nan])]


@pytest.mark.parametrize("name", ["sum", "sumsq", "abssum"])
def test_reduce_each_matches_reduce_one_by_one(name):
    xs = _mixed_arrays()
    got = K.reduce_each(name, xs)
    for x, v in zip(xs, got):
        if type(x) is not np.ndarray or x.dtype not in (np.float32, np.float64):
            assert v is None
        else:
            np.testing.assert_equal(v, K.reduce(name, x))


@pytest.mark.parametrize("name", ["sum", "sumsq", "abssum"])
def test_sum_each_is_the_float64_sum_of_the_kernels(name):
    floats = [x for x in _mixed_arrays() if type(x) is np.ndarray and x.dtype == np.float64]  # views, 0-d, F order
    total, dtype = K.sum_each(name, floats, math.sqrt if name == "sumsq" else None)
    one_by_one = [K.reduce(name, x) for x in floats]
    expected = sum(map(math.sqrt, one_by_one)) if name == "sumsq" else sum(one_by_one)
    np.testing.assert_equal(total, expected)
    assert dtype == np.float64
    assert K.sum_each(name, [x.astype(np.float32) for x in floats])[1] == np.float32
    assert K.sum_each(name, floats + [np.arange(3)]) is None
    assert K.sum_each(name, floats + [np.float64(1.0)]) is None
    assert K.sum_each(name, floats + [floats[0].astype(np.float32)]) is None  # the caller sums mixed dtypes


@pytest.mark.parametrize("name", ["sumsq_double", "abssum_sign"])
def test_fused_sum_each_matches_fused_one_by_one(name):
    floats = [x for x in _mixed_arrays() if type(x) is np.ndarray and x.dtype == np.float64]  # views, 0-d, F order
    total, dtype, outs = K.fused_sum_each(name, floats, lambda x: np.empty(x.shape, x.dtype))
    singles = [K.fused(name, x) for x in floats]
    np.testing.assert_equal(total, sum(value for value, _ in singles))
    assert dtype == np.float64
    for x, out, (_, single) in zip(floats, outs, singles):
        np.testing.assert_array_equal(out, single)
        assert out.shape == x.shape and out.dtype == x.dtype
    assert K.fused_sum_each(name, floats + [np.arange(2)], np.empty_like) is None
    assert K.fused_sum_each(name, floats + [floats[0].astype(np.float32)], np.empty_like) is None


def test_models_of_3_62_and_500_arrays_compile_nothing_new():
    import autodiff
    from traversal import total

    before = K.signatures()
    rng = np.random.default_rng(0)
    for n in (3, 62, 500):
        for dtype in (np.float32, np.float64):
            model = [rng.standard_normal((k % 7) + 1).astype(dtype) for k in range(n)]
            for f in (autodiff.sumsq, autodiff.abssum, autodiff.maxabs, autodiff.numpy.sum):
                total(f, model)
                autodiff.grad(lambda m, f=f: total(f, m))(model)
    assert K.signatures() == before


@pytest.mark.skipif(not K._use_numba(), reason=_OFF)
def test_first_call_runs_numpy_while_the_kernel_loads_in_the_background():
    done = _python("""
        import sys, threading
        import numpy as np
        from autodiff._accel import kernels as K
        x = np.arange(1000, dtype=np.float32)
        assert K.reduce("sumsq", x) == K.REFERENCE["sumsq"](x)  # answered before numba was imported
        assert K.kernel("sumsq") is None or "numba" in sys.modules
        for t in threading.enumerate():
            if t.name.startswith("autodiff kernel"):
                t.join()
        assert K.kernel("sumsq") is not None and K.signatures()["sumsq"] == 2
        assert K.reduce("sumsq", x) == K.REFERENCE["sumsq"](x)
        print("ok")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok" and "Warning" not in done.stderr


def test_only_the_wait_after_th_call_waits_for_a_loading_kernel(monkeypatch):
    release = threading.Event()  # the load ends when the test says so
    monkeypatch.setattr(K, "_compile", lambda name: release.wait(10) and "compiled")
    monkeypatch.setattr(K, "_compiled", {})
    monkeypatch.setattr(K, "_loading", {})
    monkeypatch.setattr(K, "_use_numba", lambda: True)
    monkeypatch.setattr(K, "WAIT_AFTER", 3)
    assert [K.kernel("sumsq"), K.kernel("sumsq")] == [None, None]  # the reference serves them meanwhile
    threading.Timer(0.1, release.set).start()
    assert K.kernel("sumsq") == "compiled"  # the third call waited for the load
    assert K._loading == {}


@pytest.mark.skipif(not K._use_numba(), reason=_OFF)
def test_a_hot_loop_of_reductions_waits_for_its_kernel_instead_of_starving_the_load():
    done = _python("""
        import numpy as np
        from autodiff._accel import kernels as K
        x = np.array([3.0, 4.0])
        calls = 0
        while K.kernel("sumsq") is None:  # a busy thread left the loading one the GIL every 5 ms: 11 s here
            assert K.reduce("sumsq", x) == 25.0
            calls += 1
        assert calls <= K.WAIT_AFTER, calls
        print("ok")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_missing_numba_falls_back_to_numpy():
    done = _python("""
        import sys
        sys.modules["numba"] = None  # an import of numba now fails
        import numpy as np
        from autodiff._accel import kernels as K
        assert K.load_now("sumsq") is None
        print(K.reduce("sumsq", np.ones(10, np.float32)))
    """)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == 10.0


def test_engine_float32_sum_uses_the_float64_kernel():
    import autodiff.numpy as anp

    x = np.random.default_rng(0).standard_normal(100_000).astype(np.float32) * 1e3 + 1e4
    exact = math.fsum(float(v) for v in x)
    got = anp.sum(x)
    assert got.dtype == np.float32 and abs(float(got) - exact) <= abs(exact) * 2 ** -23
