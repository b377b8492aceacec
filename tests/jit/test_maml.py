"""MAML under ``jit``: a meta-step whose inner loop takes ``optimisers.setup``/``update`` steps compiles (no
fallback: the optimiser reads shapes and dtypes, never a traced value's data), and the program's value and
meta-gradient equal the eager run's (which tests/models/test_differentiable_optimisers.py checks against torch),
on the call traced and on a replay with other weights and tasks."""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import optimisers as O
from autodiff import JitFallbackWarning, grad
from bench._so_maml import maml_meta_step, sine_tasks
from layers import MLP
from layers.losses import mse
from optimisers import setup, update
from tests.trees import leaves
from traversal import fmap, isnumeric


def _moved(model, seed):
    rng = np.random.default_rng(seed)
    return fmap(lambda p: p + 0.1 * rng.standard_normal(p.shape), model, exclude=isnumeric)


def _assert_same(got, want):
    """Equal values and meta-gradients (rtol 1e-12: float64, the same operations in the same order)."""
    (got_value, got_grad), (want_value, want_grad) = got, want
    np.testing.assert_allclose(got_value, want_value, rtol=1e-12)
    got, want = leaves(got_grad), leaves(want_grad)
    assert [p for p, _ in got] == [p for p, _ in want] and want
    for (_, a), (_, b) in zip(got, want):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)


def _compiled(f, *calls):
    """``jit(f)`` on each call, checked against ``f``: every call but the first replays, none falls back."""
    jf = autodiff.jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        for args in calls:
            _assert_same(jf(*args), f(*args))
    info = jf.cache_info()
    assert info.fallbacks == () and info.traces == 1 and info.hits == len(calls) - 1
    return jf


def test_the_bench_maml_meta_step_compiles_and_equals_the_eager_run():
    problem = maml_meta_step().problem  # bench/jit.py's MAML lane: 4 sine tasks, 5 inner Descent steps
    model = problem["model"]
    _compiled(autodiff.value_and_grad(problem["meta_loss"]), (model,), (_moved(model, 1),))


def _meta_loss(rule, steps=3):
    def meta_loss(model, task):
        (xs, ys), (xq, yq) = task
        state = setup(rule, model)
        for _ in range(steps):
            state, model = update(state, model, grad(lambda m: mse(m(xs), ys))(model))  # noqa: B023
        return mse(model(xq), yq)

    return meta_loss


RULES = {
    "Descent": O.Descent(0.05), "Momentum": O.Momentum(0.05), "Nesterov": O.Nesterov(0.05), "Adam": O.Adam(0.02),
    "AdamW": O.AdamW(0.02), "ClipNorm+Adam": O.OptimiserChain(O.ClipNorm(0.5), O.Adam(0.02)),
    "SignDecay+Descent": O.OptimiserChain(O.SignDecay(0.01), O.Descent(0.05)),
    "WeightDecay+Descent": O.OptimiserChain(O.WeightDecay(0.01), O.Descent(0.05)),
    "ClipGrad+Descent": O.OptimiserChain(O.ClipGrad(0.1), O.Descent(0.05)),
}


@pytest.mark.parametrize("name", list(RULES))
def test_every_rule_in_the_inner_loop_compiles(name):
    model = MLP([1, 8, 1], dtype=np.float64, seed=0)
    (support, query), (support2, query2) = sine_tasks(np.random.default_rng(0), 2, 6)
    f = autodiff.value_and_grad(_meta_loss(RULES[name]))
    _compiled(f, (model, (support, query)), (_moved(model, 2), (support2, query2)))


def test_a_0d_parameter_stays_an_array_through_the_compiled_inner_steps():
    def meta_loss(m):  # numpy gives scalars for 0-d arithmetic: the step casts them back to 0-d arrays
        state = setup(O.Adam(0.1), m)
        for _ in range(3):
            state, m = update(state, m, grad(lambda m: anp.sum(m["v"] * m["w"]) ** 2)(m))  # noqa: B023
        assert isnumeric(m["w"]) and m["w"].shape == ()
        return anp.sum(m["v"]) * m["w"]

    f = autodiff.value_and_grad(meta_loss)
    _compiled(f, ({"w": np.array(0.5), "v": np.ones(3)},), ({"w": np.array(-0.25), "v": np.arange(3.0)},))
