"""vmap (issue 21): every op of the table batched against a Python loop over the batch (values, gradients
through and inside vmap, second order), nesting with grad/jvp/hvp/vmap against loops and torch.func, the
errors, and the explicit list of built-in primitives that still fall back to the loop."""

import gc
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_table import OPS

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hvp, jvp, vmap
from autodiff._batch_rules import _batch_rules
from autodiff.extend import BatchingWarning, Primitive, defbatch, defvjp, primitive

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=bool(os.environ.get("CI")))
B = 3
TOL = {np.float64: 1e-9, np.float32: 2e-4}

# rows whose forward cannot run under vmap at all (a Python branch on a batched value, a ragged result)
NOT_BATCHABLE = {
    "reductions of lists", "real_if_close", "repeat varying", "integrate.odeint",
}


def _inputs(op, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [op.domain(rng.standard_normal(s)).astype(dtype) for s in shapes]


def _examples(op, shapes, dtype, seed):
    """B examples of every argument (each drawn from the op's domain)."""
    return [_inputs(op, shapes, dtype, seed + k) for k in range(B)]


def _mixes(n):
    """Which arguments are batched: all of them, only the first, and (with two or more) all but the first."""
    mixes = [tuple([True] * n), tuple([True] + [False] * (n - 1))]
    if n > 1:
        mixes.append(tuple([False] + [True] * (n - 1)))
    return list(dict.fromkeys(mixes))


def _batched_args(examples, mix, axis):
    """Batched arguments (the examples stacked at ``axis``) and ``in_axes``; unbatched ones are example 0's."""
    args, axes = [], []
    for i, batched in enumerate(mix):
        if batched:
            stacked = np.stack([ex[i] for ex in examples])
            args.append(np.moveaxis(stacked, 0, axis) if stacked.ndim > 1 else stacked)
            axes.append(axis if stacked.ndim > 1 else 0)
        else:
            args.append(examples[0][i])
            axes.append(None)
    return args, tuple(axes)


def _example_args(examples, mix, k):
    return [examples[k][i] if batched else examples[0][i] for i, batched in enumerate(mix)]


def _close(a, b, dtype):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    tol = TOL[dtype]
    assert np.allclose(a, b, rtol=tol * 10, atol=tol * 10, equal_nan=True), np.max(np.abs(a - b))


def _weights(out, seed=7):
    return np.random.default_rng(seed).standard_normal(np.shape(out))


def _rows():
    return [op for op in OPS if op.name not in NOT_BATCHABLE]


def _check_row(op, dtype, axis, check):
    @SETTINGS
    @given(case=op.cases, seed=st.integers(0, 2**16))
    def run(case, seed):
        shapes, kwargs = case
        examples = _examples(op, shapes, dtype, seed)
        for mix in _mixes(len(shapes)):
            check(lambda *xs: op.fn(*xs, **kwargs), examples, mix, axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchingWarning)
        run()


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", _rows(), ids=repr)
def test_values_match_a_loop(op, dtype, axis):
    def check(f, examples, mix, axis):
        args, in_axes = _batched_args(examples, mix, axis)
        got = vmap(f, in_axes=in_axes)(*args)
        want = np.stack([f(*_example_args(examples, mix, k)) for k in range(B)])
        _close(got, want, dtype)
        assert np.result_type(got) == np.result_type(want)

    _check_row(op, dtype, axis, check)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", _rows(), ids=repr)
def test_gradient_of_a_sum_through_vmap(op, dtype):
    """grad(vmap): the gradient of a weighted sum of the per-example outputs, against the loop's."""

    def check(f, examples, mix, axis):
        args, in_axes = _batched_args(examples, mix, axis)
        w = _weights(np.stack([f(*_example_args(examples, mix, k)) for k in range(B)]))

        def batched(*xs):
            return anp.sum(vmap(f, in_axes=in_axes)(*xs) * w)

        def looped(*xs):
            return sum(anp.sum(f(*_example_from(xs, in_axes, k)) * w[k]) for k in range(B))

        nums = tuple(range(len(args)))
        for got, want in zip(grad(batched, nums)(*args), grad(looped, nums)(*args)):
            _close(got, want, dtype)

    _check_row(op, dtype, 0, check)


def _example_from(xs, in_axes, k):
    return [x if a is None else anp.moveaxis(x, a, 0)[k] for x, a in zip(xs, in_axes)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", _rows(), ids=repr)
def test_per_example_gradients(op, dtype):
    """vmap(grad): each example's gradient (of a weighted sum of its output) against a loop of grads."""

    def check(f, examples, mix, axis):
        args, in_axes = _batched_args(examples, mix, axis)
        w = _weights(f(*examples[0]))
        nums = tuple(range(len(args)))

        def loss(*xs):
            return anp.sum(f(*xs) * w)

        got = vmap(grad(loss, nums), in_axes=in_axes)(*args)
        per = [grad(loss, nums)(*_example_args(examples, mix, k)) for k in range(B)]
        for i, g in enumerate(got):
            _close(g, np.stack([p[i] for p in per]), dtype)

    _check_row(op, dtype, 0, check)


@pytest.mark.parametrize("op", _rows(), ids=repr)
def test_second_order_per_example(op):
    """vmap(hvp): each example's Hessian-vector product against a loop of hvps (float64)."""

    def check(f, examples, mix, axis):
        args, in_axes = _batched_args(examples, mix, axis)
        w = _weights(f(*examples[0]))
        rng = np.random.default_rng(3)
        v = [rng.standard_normal(np.shape(a)) for a in examples[0]]

        def loss(*xs):
            return anp.sum(f(*xs) * w)

        got = vmap(lambda *xs: hvp(loss, tuple(xs), tuple(v)), in_axes=in_axes)(*args)
        per = [hvp(loss, tuple(_example_args(examples, mix, k)), tuple(v)) for k in range(B)]
        for i, g in enumerate(got):
            _close(g, np.stack([p[i] for p in per]), np.float64)

    _check_row(op, np.float64, 0, check)
