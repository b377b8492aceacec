"""What the layers' tape entries keep (issue 40): a convolution its input and weight, batch norm its input and
statistics, a ReLU at a block's end its output, max pooling one byte per output; a small ResNet-like net's tape
stays within what those rules name, computed from its activations' shapes; and gradients, second derivatives,
pushforwards and vmap through the new primitives against finite differences, torch or a loop."""

import dataclasses

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import plain_value
from autodiff.nn import functional as F
from layers import BatchNorm, Conv2d, Dense, MaxPool2d, global_avg_pool
from tests.internals import (
    Like,
    batch_stats,
    im2col,
    max_pool,
    new_input,
    normalise,
    normalise_relu,
    open_tape,
    release,
)

EPS = 1e-5
TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def _base(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _recorded(f, *args):
    """``f(*args)`` recorded on a tape of its own, and that tape's entries (each keeping what it keeps)."""
    with open_tape() as tape:
        out = f(*[new_input(tape, a) for a in args])
    entries = [e for e in tape.entries if e[0] is not None]
    release(tape)
    return plain_value(out), entries


def _kept_bytes(entries, given):
    """The bytes of the distinct arrays the entries keep, those in ``given`` (the caller's own) left out."""
    mine = {id(_base(a)) for a in given}
    found = {}
    for entry in entries:
        stack = [entry[3], entry[4]]
        while stack:
            v = stack.pop()
            if isinstance(v, (tuple, list)):
                stack.extend(v)
            elif isinstance(v, np.ndarray) and id(_base(v)) not in mine:
                found[id(_base(v))] = _base(v).nbytes
    return sum(found.values())


def _entry(entries, name):
    (found,) = [e for e in entries if e[0].__name__ == name]
    return found


# ---- what each entry keeps --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])  # float32: oneDNN's convolution when installed
def test_a_convolution_keeps_its_input_and_weight_never_its_output(dtype):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4, 8, 8)).astype(dtype), rng.standard_normal((5, 4, 3, 3)).astype(dtype)
    _, entries = _recorded(lambda x, w: Conv2d(w, None, 1, 1)(x), x, w)
    (prim, _, _, ans, args, _) = entries[-1]
    assert prim.__name__ in ("conv2d", "onednn_conv2d")
    assert type(ans) is Like and args[0] is x and args[1] is w


def test_im2col_keeps_no_array():
    _, entries = _recorded(lambda x: im2col(x, 3, 3, 1, 1), np.ones((1, 2, 6, 6)))
    (_, _, _, ans, args, _) = entries[-1]
    assert type(ans) is Like and type(args[0]) is Like


def test_batch_norm_keeps_its_input_gamma_and_statistics_never_its_output():
    rng = np.random.default_rng(1)
    x, gamma, beta, skip = (rng.standard_normal(s) for s in ((4, 72, 5, 5), 72, 72, (4, 72, 5, 5)))  # above SMALL

    def block(x, gamma, beta, skip):
        stats = batch_stats(x)
        return normalise(x, gamma, beta, stats, EPS) + normalise_relu(x, gamma, beta, stats, EPS, skip)

    _, entries = _recorded(block, x, gamma, beta, skip)
    stats_ans = _entry(entries, "batch_stats")[3]
    _, _, _, ans, args, _ = _entry(entries, "normalise")
    assert type(ans) is Like and args[0] is x and args[1] is gamma and args[3] is stats_ans
    assert type(args[2]) is Like  # beta: its cotangent is a sum of g, no value of beta read
    _, _, _, ans, args, _ = _entry(entries, "normalise_relu")
    assert type(ans) is np.ndarray and args[0] is x and type(args[2]) is Like and type(args[5]) is Like


def test_max_pooling_keeps_one_byte_per_output_never_its_input():
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8))
    y, entries = _recorded(lambda x: max_pool(x, 3, 2, 1), x)
    _, _, _, ans, args, _ = _entry(entries, "gather_at")
    assert type(ans) is Like and type(args[0]) is Like
    assert args[1].dtype == np.uint8 and args[1].shape == y.shape


# ---- a small ResNet-like net keeps no more than its activations' share ------------------------------------

def _net(dtype, c=8):
    conv = lambda i, o, k, s: Conv2d.init(i, o, k, stride=s, padding=k // 2, bias=False, dtype=dtype, seed=i + o)  # noqa: E731
    return {"stem": conv(3, c, 3, 1), "bn0": BatchNorm.init(c, dtype), "conv1": conv(c, c, 3, 1),
            "bn1": BatchNorm.init(c, dtype), "conv2": conv(c, c, 3, 1), "bn2": BatchNorm.init(c, dtype),
            "head": Dense.init(c, 4, dtype=dtype)}


def _run(m, x):
    """ResNet's order: conv, BN, max pool, ReLU, then one basic block (conv-BN-ReLU, conv-BN, skip, ReLU)."""
    acts = {}
    acts["a0"] = m["stem"](x)
    acts["pooled"] = MaxPool2d(2, 2)(m["bn0"].forward(acts["a0"], True)[0])
    acts["h"] = F.relu(acts["pooled"])
    acts["a1"] = m["conv1"](acts["h"])
    acts["r1"] = m["bn1"].forward_relu(acts["a1"], True)[0]
    acts["a2"] = m["conv2"](acts["r1"])
    acts["out"] = m["bn2"].forward_relu(acts["a2"], True, acts["h"])[0]
    acts["features"] = global_avg_pool(acts["out"])
    acts["logits"] = m["head"](acts["features"])
    return anp.sum(acts["logits"] ** 2), acts


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_small_resnet_keeps_its_activations_once_each_and_the_max_pool_one_byte_per_output(dtype):
    """Needed: BN inputs (a0, a1, a2), convolution inputs (h, r1), the ReLUs' inputs or outputs (pooled, r1,
    out), the max pool's places (a byte per pooled value) and per-channel statistics.  Before, the tape also
    kept each BN's output, the ReLUs' inputs and the max pool's input: about 1.5 times this bound."""
    m = _net(dtype)
    x = np.random.default_rng(3).standard_normal((4, 3, 12, 12)).astype(dtype)
    names = [(k, field) for k, layer in m.items() for field in ("weight", "bias", "gamma", "beta")
             if isinstance(getattr(layer, field, None), np.ndarray)]
    params = [getattr(m[k], field) for k, field in names]
    shapes = {}

    def loss(x, *ps):  # the parameters traced, as a training step's are
        traced = dict(m)
        for (k, field), p in zip(names, ps):
            traced[k] = dataclasses.replace(traced[k], **{field: p})
        value, acts = _run(traced, x)
        shapes.update({k: (np.shape(plain_value(a)), np.dtype(dtype).itemsize) for k, a in acts.items()})
        return value

    _, entries = _recorded(loss, x, *params)
    nbytes = {k: int(np.prod(s)) * size for k, (s, size) in shapes.items()}
    statistics = 3 * 2 * shapes["a0"][0][1] * np.dtype(dtype).itemsize  # three BNs' (2, C) arrays
    places = nbytes["pooled"] // np.dtype(dtype).itemsize  # the max pool's, one byte each
    bound = sum(nbytes[k] for k in ("a0", "a1", "a2", "h", "pooled", "r1", "out", "features", "logits"))
    bound += statistics + places + 4 * np.dtype(dtype).itemsize  # and a few 0-d scalars (the mean's count)
    kept = _kept_bytes(entries, [x, *params])
    assert kept <= bound, (kept, bound)
    scalars = 4 * np.dtype(dtype).itemsize
    assert kept >= bound - nbytes["pooled"] - scalars  # all needed, but the ReLU after the pool keeps h (conv1's)


# ---- derivatives through the new primitives ---------------------------------------------------------------

def _bn_args(seed=4, shape=(3, 2, 4, 4)):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape), rng.uniform(0.5, 1.5, shape[1]), rng.standard_normal(shape[1]),
            rng.standard_normal(shape))


def _block(x, gamma, beta, skip):
    stats = batch_stats(x)
    y = normalise_relu(x, gamma, beta, stats, EPS, skip) * anp.sin(normalise(x, gamma, beta, stats, EPS))
    return anp.sum(anp.tanh(y)) + anp.sum(stats[1] * stats[0])  # a cotangent reaches the statistics too


@pytest.mark.parametrize("order", [1, 2])
def test_normalise_and_its_relu_match_finite_differences(order):
    assert autodiff.gradcheck(_block, *_bn_args(), order=order)


def test_normalise_pushes_forward_as_finite_differences_say():
    args = _bn_args(5)
    rng = np.random.default_rng(6)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    _, derivative = autodiff.jvp(_block, args, tangents)
    h = 1e-6
    plus = _block(*[a + h * t for a, t in zip(args, tangents)])
    minus = _block(*[a - h * t for a, t in zip(args, tangents)])
    np.testing.assert_allclose(derivative, (plus - minus) / (2 * h), rtol=1e-6)


def test_forward_relu_in_training_matches_torch_and_in_evaluation_its_plain_ops():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    x, gamma, beta, skip = _bn_args(7)
    layer = BatchNorm(gamma, beta, np.zeros(2), np.ones(2))
    w = np.random.default_rng(8).standard_normal(x.shape)

    def ours(x, skip):
        return anp.sum(layer.forward_relu(x, True, skip)[0] * w)

    tx, tskip = torch.tensor(x, requires_grad=True), torch.tensor(skip, requires_grad=True)
    ty = torch.relu(torch.nn.functional.batch_norm(tx, None, None, torch.tensor(gamma), torch.tensor(beta),
                                                   training=True, eps=EPS) + tskip)
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(layer.forward_relu(x, True, skip)[0], ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    gx, gskip = autodiff.grad(ours, argnums=(0, 1))(x, skip)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gskip, tskip.grad.numpy(), rtol=1e-9, atol=1e-12)
    trained = layer.forward_relu(x, True, skip)[1]
    np.testing.assert_allclose(trained.running_mean, layer.forward(x, True)[1].running_mean, rtol=1e-12)
    evaluated = layer.forward_relu(x, False, skip)[0]
    np.testing.assert_allclose(evaluated, np.maximum(layer(x) + skip, 0), rtol=1e-12)


def _conv_bn_loss(conv, bn, x):
    y, _ = bn.forward(conv(x), True)
    pooled = F.relu(MaxPool2d(2, 2)(y))
    return anp.sum(anp.tanh(pooled) ** 2)


def test_an_hvp_through_conv_bn_and_max_pool_matches_finite_differences_of_the_gradient():
    rng = np.random.default_rng(9)
    conv, bn = Conv2d.init(2, 3, 3, padding=1, dtype=np.float64, seed=1), BatchNorm.init(3, np.float64)
    x = rng.standard_normal((2, 2, 6, 6))
    v = rng.standard_normal(conv.weight.shape)
    f = lambda w: _conv_bn_loss(Conv2d(w, conv.bias, 1, 1), bn, x)  # noqa: E731
    got = autodiff.hvp(f, conv.weight, v)
    h = 1e-5
    want = (autodiff.grad(f)(conv.weight + h * v) - autodiff.grad(f)(conv.weight - h * v)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


def test_per_example_gradients_through_forward_relu_and_max_pool_match_a_loop():
    rng = np.random.default_rng(11)
    m = _net(np.float64, c=3)
    xs = rng.standard_normal((3, 2, 3, 6, 6))  # 3 examples of 2 images: BN's statistics over each example's two

    def one(stem, x):
        return _run({**m, "stem": stem}, x)[0]

    got = autodiff.vmap(autodiff.grad(one), in_axes=(None, 0))(m["stem"], xs)
    for k, x in enumerate(xs):
        np.testing.assert_allclose(got.weight[k], autodiff.grad(one)(m["stem"], x).weight, rtol=1e-9, atol=1e-12)


# ---- max pooling at kept places: kernels against twins ----------------------------------------------------


def test_max_pool_then_relu_is_relu_then_max_pool_in_value_and_gradient():
    """What ResNet's stem relies on, ties and all-negative windows included."""
    x = np.random.default_rng(14).standard_normal((2, 3, 6, 6))
    x[0, 0, :2, :2] = -1.0  # a window with no positive value: no gradient either way
    x[1, 1, 2:4, 2:4] = 0.7  # a tie among positive values: the first wins either way
    before, after = (lambda x: max_pool(F.relu(x), 2, 2, 0)), (lambda x: F.relu(max_pool(x, 2, 2, 0)))
    np.testing.assert_array_equal(before(x), after(x))
    w = np.random.default_rng(15).standard_normal(before(x).shape)
    grads = [autodiff.grad(lambda x, f=f: anp.sum(f(x) * w))(x) for f in (before, after)]
    np.testing.assert_array_equal(grads[0], grads[1])
