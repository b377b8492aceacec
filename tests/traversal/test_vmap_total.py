"""``total`` under ``vmap`` (issue 21, item 4): each example's sum over its model, batched by the ops'
own rules (no loop over examples, so no BatchingWarning), for the known reductions' fused entry and for
``total``'s generic entry alike; values, per-example gradients, the gradient of a sum of them, and
per-example Hessian-vector products, each against a Python loop over the examples.  And the issue's
per-example structural gradients: ``vmap(grad(loss), in_axes=(None, 0, 0))`` over a model with a tie
and a non-trainable field, a ``total`` penalty inside."""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hvp, vmap
from traversal import total, trainables

B = 3
REDUCTIONS = {"sumsq": autodiff.sumsq, "norm": anp.linalg.norm, "abssum": autodiff.abssum,
              "maxabs": autodiff.maxabs, "scaled": autodiff.scaled(0.5, autodiff.sumsq), "sum": anp.sum,
              "generic": lambda p: anp.sum(anp.sin(p) * p)}


def _models(dtype, seed=0):
    """B examples of a model: a dict of a matrix, a vector and a non-array field."""
    rng = np.random.default_rng(seed)
    return [{"w": rng.standard_normal((2, 3)).astype(dtype), "b": rng.standard_normal(4).astype(dtype), "n": 7}
            for _ in range(B)]


def _stacked(models):
    return {"w": np.stack([m["w"] for m in models]), "b": np.stack([m["b"] for m in models]), "n": 7}


def _close(got, want, dtype):
    tol = 1e-10 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def _no_loop():
    """A BatchingWarning means a primitive ran once per example: here that is a failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", autodiff.extend.BatchingWarning)
        yield


IN_AXES = {"both batched": {"w": 0, "b": 0, "n": None}, "b shared": {"w": 0, "b": None, "n": None}}


def _example(models, k, in_axes):
    """Example ``k`` as the vmap sees it: a shared leaf is example 0's."""
    return {key: models[k][key] if in_axes[key] == 0 else models[0][key] for key in models[0]}


def _batched(models, in_axes):
    stacked = _stacked(models)
    return {key: stacked[key] if in_axes[key] == 0 else models[0][key] for key in stacked}


@pytest.mark.parametrize("mix", sorted(IN_AXES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_total_and_its_gradient_under_vmap_match_a_loop(name, dtype, mix):
    f, models, in_axes = REDUCTIONS[name], _models(dtype), IN_AXES[mix]
    batched = _batched(models, in_axes)
    one = lambda m: total(f, m)  # noqa: E731

    got = vmap(one, in_axes=(in_axes,))(batched)
    _close(got, [one(_example(models, k, in_axes)) for k in range(B)], dtype)

    per_example = vmap(grad(one), in_axes=(in_axes,))(batched)  # vmap(grad): a batch axis on every leaf
    loop = [grad(one)(_example(models, k, in_axes)) for k in range(B)]
    for key in ("w", "b"):
        _close(per_example[key], np.stack([g[key] for g in loop]), dtype)
    assert per_example["n"] is None

    weights = np.arange(1.0, B + 1).astype(dtype)
    of_sum = grad(lambda m: anp.sum(vmap(one, in_axes=(in_axes,))(m) * weights))(batched)  # grad(vmap)
    for key in ("w", "b"):
        want = np.stack([w * g[key] for w, g in zip(weights, loop)])
        _close(of_sum[key], want if in_axes[key] == 0 else want.sum(axis=0), dtype)


@pytest.mark.parametrize("name", ["sumsq", "norm", "generic"])
def test_per_example_hessian_vector_products_of_a_total(name):
    f, models = REDUCTIONS[name], _models(np.float64, seed=1)
    v = {"w": np.full((2, 3), 0.5), "b": np.linspace(-1.0, 1.0, 4), "n": None}
    one = lambda m: hvp(lambda q: total(f, q), m, v)  # noqa: E731
    got = vmap(one, in_axes=(IN_AXES["both batched"],))(_stacked(models))
    loop = [one(m) for m in models]
    for key in ("w", "b"):
        _close(got[key], np.stack([h[key] for h in loop]), np.float64)


def test_per_example_structural_gradients_with_a_tie_a_frozen_field_and_a_total_penalty():
    """The issue's ``vmap(grad(loss), in_axes=(None, 0, 0))``: the model's structure with a leading batch axis
    on every gradient leaf, a tie's gradient at its first trainable occurrence, ``None`` elsewhere."""
    from layers import Dense

    rng = np.random.default_rng(3)
    shared = rng.standard_normal((3, 3))
    model = {"first": Dense(shared, rng.standard_normal(3)), "again": Dense(shared, np.zeros(3)), "steps": 5}
    xs, ys = rng.standard_normal((B, 3)), rng.standard_normal((B, 3))

    def loss(m, x, y):
        h = m["again"](anp.tanh(m["first"](x)))
        return anp.sum((h - y) ** 2) + 0.1 * total(autodiff.sumsq, m)

    got = vmap(grad(loss), in_axes=(None, 0, 0))(model, xs, ys)
    loop = [grad(loss)(model, xs[k], ys[k]) for k in range(B)]
    flat_got, flat_loop = trainables(got), [trainables(g) for g in loop]
    assert len(flat_got) == len(flat_loop[0]) == 3  # the tie once: W, and the two biases
    for k, leaf in enumerate(flat_got):
        _close(leaf, np.stack([g[k] for g in flat_loop]), np.float64)
    assert got["again"].weight is None and got["steps"] is None  # later occurrence of the tie; an int
    assert got["first"].weight.shape == (B, 3, 3)


@pytest.mark.parametrize("mix", sorted(IN_AXES))
def test_trainables_under_vmap_are_the_batched_arrays(mix):
    """A batched array is a parameter of each example (traversal's walks once saw none, and total 0)."""
    models, in_axes = _models(np.float64, seed=2), IN_AXES[mix]
    weighted = lambda m: sum(k * anp.sum(p) for k, p in enumerate(trainables(m), 1))  # noqa: E731
    got = vmap(weighted, in_axes=(in_axes,))(_batched(models, in_axes))
    _close(got, [weighted(_example(models, k, in_axes)) for k in range(B)], np.float64)


def test_vmap_over_per_example_gradients_with_none_slots():
    """A per-example gradient has ``None`` where nothing is trainable: ``vmap`` over it batches the arrays and
    leaves the ``None`` (as an empty subtree in JAX), so a per-example norm is one line."""
    models = _models(np.float64, seed=4)
    per_example = vmap(grad(lambda m: total(REDUCTIONS["generic"], m)), in_axes=(IN_AXES["both batched"],))(
        _stacked(models))
    assert per_example["n"] is None
    norms = vmap(lambda g: total(anp.linalg.norm, g))(per_example)
    loop = [total(anp.linalg.norm, grad(lambda m: total(REDUCTIONS["generic"], m))(m)) for m in models]
    _close(norms, loop, np.float64)


@pytest.mark.parametrize("f", [autodiff.sumsq, lambda x, dx: anp.sum(anp.sin(x) * dx * dx)], ids=["sumsq", "generic"])
def test_total_of_a_model_against_batched_gradients_matches_a_loop(f):
    """``total(f, model, grads)`` with the gradients batched and the model shared (a per-example weighted norm):
    the check of the gradients' shapes reads one example's (it once refused every batched gradient)."""
    model, grads = _models(np.float64, seed=5)[0], _models(np.float64, seed=6)
    stacked = {k: np.stack([g[k] for g in grads]) for k in ("w", "b")}
    got = vmap(lambda g: total(f, model, {**g, "n": None}))(stacked)
    _close(got, [total(f, model, {**g, "n": None}) for g in grads], np.float64)
    with pytest.raises(ValueError, match=r"total: grads at w has shape \(3, 2\).*parameter's shape"):
        vmap(lambda g: total(f, model, {"w": g, "b": None, "n": None}))(np.ones((B, 3, 2)))
