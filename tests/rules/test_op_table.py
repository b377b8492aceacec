"""Every op in the table passes gradcheck at orders 1 and 2, float32 and float64."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
from tests.hypothesis_policy import DERANDOMIZE
from tests.op_table import OPS

# A fixed sequence of examples unless AUTODIFF_EXPLORE=1 (tests/hypothesis_policy.py).
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=DERANDOMIZE)


def _inputs(op, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [op.domain(rng.standard_normal(s)).astype(dtype) for s in shapes]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_gradcheck(op, dtype, order):
    @SETTINGS
    @given(case=op.cases, seed=st.integers(0, 2**16))
    def check(case, seed):
        shapes, kwargs = case
        args = _inputs(op, shapes, dtype, seed)
        assert autodiff.gradcheck(lambda *xs: op.fn(*xs, **kwargs), *args, order=order, eps=op.eps)

    check()


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_keeps_float32(op):
    @SETTINGS
    @given(case=op.cases)
    def check(case):
        shapes, kwargs = case
        args = _inputs(op, shapes, np.float32, 0)
        out, pullback = autodiff.vjp(lambda *xs: op.fn(*xs, **kwargs), *args)
        assert np.result_type(out) == np.float32
        grads = pullback(np.ones_like(out))
        assert all(np.result_type(g) == np.float32 for g in grads)

    check()
