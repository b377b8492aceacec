"""The recycling allocator never hands out an array someone still holds."""

import os
import subprocess
import sys

import numpy as np
import pytest

import autodiff
from autodiff._accel import buffers as _buffers
from traversal import total


def test_large_arrays_are_recycled_only_when_free():
    _buffers.clear()
    a = _buffers.empty((512, 1024), np.float32)
    b = _buffers.empty((512, 1024), np.float32)
    assert a is not b  # a is still held
    a_id = id(a)
    del a
    c = _buffers.empty((1024, 512), np.float32)
    assert id(c) == a_id or c is not b  # recycled (reshaped) or fresh, never b
    assert c.shape == (1024, 512) and c.flags.writeable
    view = b[:10]
    del b
    d = _buffers.empty((512, 1024), np.float32)
    assert d.base is None or d.base is not view.base  # a live view keeps its base from being reused
    np.testing.assert_array_equal(view, view.copy())


def test_small_arrays_are_not_pooled():
    _buffers.clear()
    x = _buffers.empty((3,), np.float64)
    assert _buffers._pool == [] and x.shape == (3,)


def test_gradients_held_by_the_caller_are_never_overwritten():
    rng = np.random.default_rng(0)
    model = {"w": rng.standard_normal((600, 600)).astype(np.float32)}  # 1.4 MB: pooled
    step = autodiff.grad(lambda m: total(autodiff.sumsq, m))
    first = step(model)["w"]
    kept = first.copy()
    second = step({"w": model["w"] * 3})["w"]
    assert second is not first
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_allclose(second, 6 * model["w"], rtol=1e-6)
    del first
    third = step(model)["w"]
    np.testing.assert_allclose(third, 2 * model["w"], rtol=1e-6)
    np.testing.assert_allclose(second, 6 * model["w"], rtol=1e-6)


@pytest.mark.skipif(not _buffers.POOLING, reason="buffer pools are off (switched off, or reference mode)")
def test_a_freed_large_array_is_handed_out_again():
    _buffers.clear()
    a = _buffers.empty((512, 1024), np.float32)
    a_id = id(a)
    del a
    assert id(_buffers.empty((512, 1024), np.float32)) == a_id  # the pooled array itself, not a copy


@pytest.mark.parametrize("env", [{"AUTODIFF_ACCEL_OFF": "buffers"}, {"AUTODIFF_REFERENCE": "1"}])
def test_the_pool_can_be_switched_off(env):
    code = ("import numpy as np; from autodiff._accel import buffers as _buffers\n"
            "a = _buffers.empty((512, 1024), np.float32); a_id = id(a); del a\n"
            "print(_buffers.POOLING, len(_buffers._pool))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, check=True, capture_output=True,
                         text=True, timeout=300)
    assert out.stdout.split() == ["False", "0"]
