"""vmap over the layers' own primitives (issue 21): ``batch_norm``, ``bn_grad_sums``, ``bn_grad_input``,
``pool_gather`` and ``pool_scatter`` each against a Python loop over the batch (values, vmap(grad), grad(vmap),
vmap(hvp)), in float32 and float64, with the batch axis first and last, and batched and shared operands mixed;
each batched in one call, not a loop; and per-example gradients of a small convnet with BatchNorm and MaxPool
against torch.func.vmap(grad)."""

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import autodiff.numpy as anp
from autodiff import grad, hvp, vmap
from autodiff.extend import BatchingWarning
from autodiff.nn import functional as F
from layers import BatchNorm, Conv2d, Dense, Embedding, MaxPool2d
from tests.internals import batch_norm, bn_grad_input, bn_grad_sums, pool_gather, pool_scatter

B = 3
EPS = 1e-5
TOL = {np.float64: 1e-9, np.float32: 3e-4}


@dataclass
class Case:
    """A primitive called on one example's arguments (``make(rng)`` draws them), and the shapes to draw."""

    name: str
    prim: object
    fn: object
    make: object


def _positive(a):
    return np.abs(a) + 0.5


def _bn_args(shape):
    def make(rng):
        c = shape[1]
        return [rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c)]

    return make


def _sums_args(shape):
    def make(rng):
        c = shape[1]
        return [rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(c),
                _positive(rng.standard_normal(c))]

    return make


def _input_args(shape):
    def make(rng):
        c = shape[1]
        return [rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(c),
                rng.standard_normal(c), _positive(rng.standard_normal(c)), rng.standard_normal((2, c))]

    return make


def _pool_args(shape, out_shape):
    def make(rng):
        return [rng.standard_normal(out_shape), rng.standard_normal(shape)]

    return make


def _image_args(shape):
    return lambda rng: [rng.standard_normal(shape), rng.standard_normal(shape)]


CASES = [
    Case("batch_norm NCHW", batch_norm, lambda x, g, b: batch_norm(x, g, b, EPS), _bn_args((2, 3, 4, 4))),
    Case("batch_norm one image", batch_norm, lambda x, g, b: batch_norm(x, g, b, EPS), _bn_args((1, 2, 3, 5))),
    Case("batch_norm NC", batch_norm, lambda x, g, b: batch_norm(x, g, b, EPS), _bn_args((5, 3))),
    Case("bn_grad_sums", bn_grad_sums, lambda g, x, m, v: bn_grad_sums(g, x, m, v, EPS), _sums_args((2, 3, 3, 3))),
    Case("bn_grad_sums NC", bn_grad_sums, lambda g, x, m, v: bn_grad_sums(g, x, m, v, EPS), _sums_args((4, 2))),
    Case("bn_grad_input", bn_grad_input, lambda g, x, gm, m, v, s: bn_grad_input(g, x, gm, m, v, s, EPS),
         _input_args((2, 3, 3, 3))),
    Case("pool_gather", pool_gather, lambda h, x: pool_gather(h, x, 2, 2, 0), _image_args((2, 2, 4, 4))),
    Case("pool_gather padded", pool_gather, lambda h, x: pool_gather(h, x, 3, 2, 1), _image_args((1, 2, 5, 5))),
    Case("pool_scatter", pool_scatter, lambda g, x: pool_scatter(g, x, 2, 2, 0), _pool_args((2, 2, 4, 4),
                                                                                             (2, 2, 2, 2))),
    Case("pool_scatter padded", pool_scatter, lambda g, x: pool_scatter(g, x, 3, 2, 1),
         _pool_args((1, 2, 5, 5), (1, 2, 3, 3))),
    Case("max_pool", pool_gather, lambda x: pool_gather(x, x, 3, 2, 1),
         lambda rng: [rng.standard_normal((2, 2, 5, 5))]),
]
IDS = [c.name for c in CASES]


def _examples(case, dtype, seed=0):
    return [[a.astype(dtype) for a in case.make(np.random.default_rng(seed + k))] for k in range(B)]


def _mixes(n):
    """Which arguments are batched: all, only the first, and all but the first."""
    mixes = [(True,) * n, (True,) + (False,) * (n - 1)]
    if n > 1:
        mixes.append((False,) + (True,) * (n - 1))
    return list(dict.fromkeys(mixes))


def _stacked(examples, mix, axis):
    """The arguments vmap gets (batched ones stacked at ``axis``, shared ones example 0's) and ``in_axes``."""
    args, axes = [], []
    for i, batched in enumerate(mix):
        if batched:
            args.append(np.moveaxis(np.stack([ex[i] for ex in examples]), 0, axis))
            axes.append(axis)
        else:
            args.append(examples[0][i])
            axes.append(None)
    return args, tuple(axes)


def _per_example(examples, mix, k):
    return [examples[k][i] if batched else examples[0][i] for i, batched in enumerate(mix)]


def _parts(out):
    return list(out) if type(out) is tuple else [out]


def _close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = TOL[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _loss(case):
    """A scalar of one example's outputs with a nonzero second derivative everywhere: ``Σ w·sin(out)``."""
    rng = np.random.default_rng(11)
    weights = [rng.standard_normal(np.shape(p)) for p in _parts(case.fn(*case.make(np.random.default_rng(0))))]

    def loss(*args):
        outs = case.fn(*args)
        parts = [outs[k] for k in range(len(weights))] if len(weights) > 1 else [outs]
        return sum(anp.sum(anp.sin(p) * w) for p, w in zip(parts, weights))

    return loss


def _each(case, dtype):
    """Every mix and axis: ``(examples, mix, batched args, in_axes)``."""
    examples = _examples(case, dtype)
    for mix in _mixes(len(examples[0])):
        for axis in (0, -1):  # first, and last (after every axis of one example)
            args, in_axes = _stacked(examples, mix, axis)
            yield examples, mix, args, in_axes


@pytest.fixture(autouse=True)
def _no_loop():
    """Every call here batches by its rule: the loop's warning would be an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)
        yield


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_match_a_loop(case, dtype):
    for examples, mix, args, in_axes in _each(case, dtype):
        got = _parts(vmap(case.fn, in_axes=in_axes)(*args))
        want = [_parts(case.fn(*_per_example(examples, mix, k))) for k in range(B)]
        for j, part in enumerate(got):
            assert part.dtype == want[0][j].dtype
            _close(part, np.stack([w[j] for w in want]), dtype)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_empty_batch_gives_one_examples_outputs_with_a_batch_axis_of_0(case):
    """No examples: each output is shaped as one example's with a batch axis of 0 (the folding rules once
    divided by the batch size), and a shared argument's gradient through it is the sum over no examples."""
    one = _examples(case, np.float64)[0]
    loss = _loss(case)
    for mix in _mixes(len(one)):
        args = [np.empty((0,) + np.shape(a), np.result_type(a)) if batched else a for a, batched in zip(one, mix)]
        in_axes = tuple(0 if batched else None for batched in mix)
        for part, want in zip(_parts(vmap(case.fn, in_axes=in_axes)(*args)), _parts(case.fn(*one))):
            assert part.shape == (0,) + np.shape(want) and part.dtype == want.dtype
        shared = [i for i, batched in enumerate(mix) if not batched]
        if shared:
            got = grad(lambda *a, in_axes=in_axes: anp.sum(vmap(loss, in_axes=in_axes)(*a)), tuple(shared))(*args)
            for i, g in zip(shared, got):
                np.testing.assert_array_equal(g, np.zeros_like(one[i]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_per_example_gradients_match_a_loop(case, dtype):
    loss = _loss(case)
    for examples, mix, args, in_axes in _each(case, dtype):
        argnums = tuple(range(len(args)))
        got = vmap(grad(loss, argnums), in_axes=in_axes)(*args)
        want = [grad(loss, argnums)(*_per_example(examples, mix, k)) for k in range(B)]
        for i in argnums:
            _close(got[i], np.stack([w[i] for w in want]), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_gradient_of_the_summed_losses_through_vmap(case, dtype):
    """grad(vmap): a batched argument's gradient is the per-example gradients stacked at its axis; a shared
    one's is their sum."""
    loss = _loss(case)
    for examples, mix, args, in_axes in _each(case, dtype):
        argnums = tuple(range(len(args)))
        got = grad(lambda *a, in_axes=in_axes: anp.sum(vmap(loss, in_axes=in_axes)(*a)), argnums)(*args)
        want = [grad(loss, argnums)(*_per_example(examples, mix, k)) for k in range(B)]
        for i, batched in enumerate(mix):
            each = [w[i] for w in want]
            _close(got[i], np.moveaxis(np.stack(each), 0, in_axes[i]) if batched else sum(each), dtype)


@pytest.mark.parametrize("mode", ["reverse_over_forward", "forward_over_reverse"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_per_example_hessian_vector_products_match_a_loop(case, dtype, mode):
    """Second order: vmap(hvp) through each rule's pullback and pushforward, against a loop of hvp."""
    loss = _loss(case)
    for examples, mix, args, in_axes in _each(case, dtype):
        rng = np.random.default_rng(5)
        vs = tuple(rng.standard_normal(np.shape(a)).astype(dtype) for a in examples[0])

        def product(*a, vs=vs):
            return hvp(loss, tuple(a), vs, mode=mode)

        got = vmap(product, in_axes=in_axes)(*args)
        want = [product(*_per_example(examples, mix, k)) for k in range(B)]
        for i in range(len(vs)):
            _close(got[i], np.stack([w[i] for w in want]), dtype)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_runs_once_for_the_whole_batch(case, monkeypatch):
    """Batched for real: the primitive's forward runs once on the stacked examples, not once per example."""
    calls = []
    inner = case.prim.fun
    monkeypatch.setattr(case.prim, "fun", lambda *a, **k: calls.append(1) or inner(*a, **k))
    examples = _examples(case, np.float64)
    args, in_axes = _stacked(examples, (True,) * len(examples[0]), 0)
    vmap(case.fn, in_axes=in_axes)(*args)
    assert len(calls) == 1


def test_batch_norm_under_vmap_normalises_each_example_by_its_own_statistics():
    """As torch.func.vmap does for functional batch_norm in training (no running statistics)."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    rng = np.random.default_rng(3)
    x, gamma, beta = rng.standard_normal((4, 2, 3, 5, 5)), rng.standard_normal(3), rng.standard_normal(3)
    y, mean, var = vmap(lambda xi: batch_norm(xi, gamma, beta, EPS))(x)
    want = torch.func.vmap(lambda xi: torch.nn.functional.batch_norm(
        xi, None, None, torch.tensor(gamma), torch.tensor(beta), training=True, eps=EPS))(torch.tensor(x))
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mean, x.mean(axis=(1, 3, 4)), rtol=1e-12)
    np.testing.assert_allclose(var, x.var(axis=(1, 3, 4)), rtol=1e-12)


def test_a_batch_norm_layer_trained_under_vmap_returns_running_statistics_per_example():
    rng = np.random.default_rng(6)
    x, layer = rng.standard_normal((4, 2, 3, 5, 5)), BatchNorm.init(3, np.float64)
    running = vmap(lambda xi: layer.forward(xi, train=True)[1].running_mean)(x)
    np.testing.assert_allclose(running, [layer.forward(xi, train=True)[1].running_mean for xi in x], rtol=1e-12)


# --- per-example gradients of a small convnet, against torch.func ----------------------------------------


@dataclass
class ConvNet:
    """Conv2d, BatchNorm (training statistics), ReLU, MaxPool2d, Dense: one group of images at a time."""

    conv: Conv2d
    norm: BatchNorm
    pool: MaxPool2d
    head: Dense

    def __call__(self, x):
        y, _ = self.norm.forward(self.conv(x), train=True)
        y = self.pool(F.relu(y))
        return self.head(anp.reshape(y, (np.shape(y)[0], -1)))


def _convnet(dtype):
    rng = np.random.default_rng(8)
    conv = Conv2d(rng.standard_normal((4, 2, 3, 3)).astype(dtype) * 0.4, rng.standard_normal(4).astype(dtype), 1, 1)
    norm = BatchNorm(rng.standard_normal(4).astype(dtype), rng.standard_normal(4).astype(dtype),
                     np.zeros(4, dtype), np.ones(4, dtype))
    head = Dense(rng.standard_normal((3, 4 * 3 * 3)).astype(dtype) * 0.3, rng.standard_normal(3).astype(dtype))
    return ConvNet(conv, norm, MaxPool2d(3, 2, 1), head)


def _torch_convnet(torch, p, x):
    nn = torch.nn.functional
    y = nn.conv2d(x, p["conv.weight"], p["conv.bias"], stride=1, padding=1)
    y = nn.batch_norm(y, None, None, p["norm.gamma"], p["norm.beta"], training=True, eps=EPS)
    y = nn.max_pool2d(torch.relu(y), 3, 2, 1)
    return nn.linear(y.reshape(y.shape[0], -1), p["head.weight"], p["head.bias"])


def _leaves(m):
    return {"conv.weight": m.conv.weight, "conv.bias": m.conv.bias, "norm.gamma": m.norm.gamma,
            "norm.beta": m.norm.beta, "head.weight": m.head.weight, "head.bias": m.head.bias}


@pytest.mark.parametrize("group", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_example_gradients_of_a_convnet_with_batch_norm_and_max_pool_match_torch_func(dtype, group):
    """``group`` images per example (1: the usual per-example gradient; 2: BatchNorm's statistics over two)."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    model = _convnet(dtype)
    rng = np.random.default_rng(9)
    X, labels = rng.standard_normal((5, group, 2, 6, 6)).astype(dtype), rng.integers(0, 3, (5, group))

    def one(m, x, y):
        logp = F.log_softmax(m(x), axis=-1)
        return -anp.sum(logp * (np.arange(3) == y[:, None]))

    got = _leaves(vmap(grad(one), in_axes=(None, 0, 0))(model, X, labels))

    def tone(p, x, y):
        return torch.nn.functional.cross_entropy(_torch_convnet(torch, p, x), y, reduction="sum")

    params = {k: torch.tensor(v) for k, v in _leaves(model).items()}
    want = torch.func.vmap(torch.func.grad(tone), in_dims=(None, 0, 0))(params, torch.tensor(X), torch.tensor(labels))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for k, g in got.items():
        assert g.shape == (5,) + np.shape(_leaves(model)[k]) and g.dtype == dtype, k
        np.testing.assert_allclose(g, want[k].numpy(), rtol=tol, atol=tol, err_msg=k)


def test_per_example_gradients_of_an_embedding_with_batched_ids_match_a_loop():
    """A language model's per-example gradients: ids batched by vmap (Embedding once converted them with
    np.asarray, which refused them)."""
    emb = Embedding.init(10, 4, dtype=np.float64)
    ids = np.array([[1, 1, 3], [0, 9, 2]])
    np.testing.assert_array_equal(vmap(emb)(ids), np.stack([emb(i) for i in ids]))
    loss = lambda e, i: anp.sum(anp.tanh(e(i)) ** 2)  # noqa: E731
    got = vmap(grad(loss), in_axes=(None, 0))(emb, ids).weight
    np.testing.assert_allclose(got, np.stack([grad(loss)(emb, i).weight for i in ids]), rtol=1e-12)
