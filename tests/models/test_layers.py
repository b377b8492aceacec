"""Every layer's forward and gradients (input and parameters) against torch on the same weights."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
from layers import (
    AvgPool2d,
    BatchNorm,
    Chain,
    Conv2d,
    Dense,
    Embedding,
    LayerNorm,
    MaxPool2d,
    Residual,
    load_torch_state_dict,
    save_torch_state_dict,
)
from tests.internals import batch_norm, conv2d, max_pool
from traversal import fmap, isnumeric, trainables

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
RTOL, ATOL = 1e-4, 1e-5
rng = np.random.default_rng(0)


def _weights_like(y, seed=1):
    return np.random.default_rng(seed).standard_normal(np.shape(y)).astype(np.float32)


def _ours(layer, x, train=False):
    """Output, and gradients of sum(w * y) with respect to the layer and the input."""
    y, _ = layer.forward(x, train)
    w = _weights_like(y)
    g_layer, g_x = autodiff.grad(lambda m, x: anp.sum(m.forward(x, train)[0] * w), argnums=(0, 1))(layer, x)
    return y, g_layer, g_x, w


def _theirs(module, x, w):
    tx = torch.tensor(x, requires_grad=x.dtype.kind == "f")
    y = module(tx)
    (y * torch.tensor(w)).sum().backward()
    return y.detach().numpy(), {n: p.grad.numpy() for n, p in module.named_parameters()}, tx.grad


def _check(layer, module, x, train=False, rtol=RTOL, atol=ATOL):
    layer = load_torch_state_dict(layer, module.state_dict())
    module.train(train)
    y, g_layer, g_x, w = _ours(layer, x, train)
    ty, t_grads, t_gx = _theirs(module, x, w)
    np.testing.assert_allclose(y, ty, rtol=rtol, atol=atol)
    if t_gx is not None:
        np.testing.assert_allclose(g_x, t_gx.numpy(), rtol=rtol, atol=atol)
    named = {} if g_layer is None else save_torch_state_dict(g_layer)  # our gradients by torch's names (None: a pool)
    ours = {name: g.numpy() for name, g in named.items()}
    for name, tg in t_grads.items():
        assert ours[name].dtype == y.dtype == x.dtype
        np.testing.assert_allclose(ours[name], tg, rtol=rtol, atol=atol, err_msg=name)
    return layer


def test_dense():
    _check(Dense.init(5, 3), torch.nn.Linear(5, 3), rng.standard_normal((4, 5)).astype(np.float32))


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1), (1, 2)])
def test_conv2d(stride, padding):
    _check(Conv2d.init(3, 4, 3, stride, padding), torch.nn.Conv2d(3, 4, 3, stride, padding),
           rng.standard_normal((2, 3, 7, 6)).astype(np.float32))


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_train_and_eval(train):
    module = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
        module.running_mean.uniform_(-1, 1)
        module.running_var.uniform_(0.5, 2)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    layer = _check(BatchNorm.init(3), module, x, train)
    _, updated = layer.forward(x, train)
    torch_stats = module.state_dict()  # torch updated its running stats in the forward above
    np.testing.assert_allclose(updated.running_mean, torch_stats["running_mean"].numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(updated.running_var, torch_stats["running_var"].numpy(), rtol=RTOL, atol=ATOL)
    assert [p is q for p, q in zip(trainables(layer), [layer.gamma, layer.beta])] == [True, True]


def test_layernorm():
    module = torch.nn.LayerNorm(6)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
    _check(LayerNorm.init(6), module, rng.standard_normal((3, 6)).astype(np.float32))


def test_embedding_with_repeated_ids():
    layer = load_torch_state_dict(Embedding.init(7, 3), (module := torch.nn.Embedding(7, 3)).state_dict())
    ids = np.array([1, 4, 1, 1, 6])
    w = _weights_like(np.zeros((5, 3)))
    g = autodiff.grad(lambda m: anp.sum(m(ids) * w))(layer)
    (module(torch.tensor(ids)) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(g.weight, module.weight.grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("pool, module", [(MaxPool2d(3, 2, 1), "MaxPool2d(3, 2, 1)"), (AvgPool2d(2), "AvgPool2d(2)"),
                                          (AvgPool2d(3, 2, 1), "AvgPool2d(3, 2, 1)")])
def test_pooling(pool, module):
    _check(pool, eval("torch.nn." + module), rng.standard_normal((2, 3, 6, 7)).astype(np.float32))


def test_global_average_pool():
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    g = autodiff.grad(lambda x: anp.sum(layers.global_avg_pool(x) * np.arange(3.0, dtype=np.float32)))(x)
    tx = torch.tensor(x, requires_grad=True)
    (tx.mean(dim=(2, 3)) * torch.arange(3.0)).sum().backward()
    np.testing.assert_allclose(g, tx.grad.numpy(), rtol=RTOL)


def test_chain_and_residual():
    inner = Chain([Dense.init(4, 4, seed=3), np.tanh, Dense.init(4, 4, seed=4)])
    block = Residual(inner, activation=np.tanh)
    tinner = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4))
    tinner.load_state_dict({k: torch.tensor(v) for k, v in
                            zip(["0.weight", "0.bias", "2.weight", "2.bias"], trainables(inner))})
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = _weights_like(np.zeros((3, 4)))
    g = autodiff.grad(lambda b, x: anp.sum(b(x) * w), argnums=(0, 1))(block, x)
    tx = torch.tensor(x, requires_grad=True)
    (torch.tanh(tinner(tx) + tx) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(g[1], tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(g[0].inner.layers[0].weight, tinner[0].weight.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_mlp_helper_and_tied_embedding_example():
    emb = Embedding.init(6, 4)
    model = {"embed": emb, "head": Dense(emb.weight, np.zeros(6, np.float32))}  # the head reuses the table
    ids = np.array([0, 3, 3])
    loss = lambda m: anp.sum(m["head"](m["embed"](ids)) ** 2)  # noqa: E731
    g = autodiff.grad(loss)(model)
    assert g["head"].weight is None and g["embed"].weight is not None  # the tie's total sits first
    assert autodiff.gradcheck(loss, model)
    assert len(trainables(model)) == 2


def test_resnet18_matches_torch_float32():
    """Evaluation mode, float32, rtol 1e-4, after load_torch_state_dict; every name and shape too."""
    from layers.torch_reference import ResNet18

    torch.manual_seed(0)
    module = ResNet18(10)
    ours = layers.resnet18(10)
    names = {k: tuple(v.shape) for k, v in save_torch_state_dict(ours).items() if "num_batches" not in k}
    torch_shapes = {k: tuple(v.shape) for k, v in module.state_dict().items() if "num_batches" not in k}
    assert names == torch_shapes  # every name and shape, buffers included
    x = np.random.default_rng(5).standard_normal((2, 3, 32, 32)).astype(np.float32)
    _check(ours, module, x, train=False)


def test_resnet18_training_mode_matches_torch_float64():
    """Training mode normalises layer4 over 2 values per channel, which amplifies float32 rounding
    (outputs differ by ~4e-4 in float32, ~1e-12 in float64, input gradients by ~1e-8), so it runs in float64."""
    from layers.torch_reference import ResNet18

    torch.manual_seed(0)
    module = ResNet18(10).double()
    ours = fmap(lambda a: a.astype(np.float64) if isnumeric(a) else a, layers.resnet18(10), exclude=isnumeric)
    x = np.random.default_rng(5).standard_normal((2, 3, 32, 32))
    _check(ours, module, x, train=True, rtol=1e-6, atol=1e-8)


def test_losses_match_torch():
    from layers.losses import binary_cross_entropy_with_logits, mse, softmax_cross_entropy

    z = rng.standard_normal((5, 4)) * 30
    labels = np.array([0, 3, 3, 1, 2])
    y = (rng.random((5, 4)) > 0.5).astype(float)
    cases = [
        (lambda z: softmax_cross_entropy(z, labels),
         lambda t: torch.nn.functional.cross_entropy(t, torch.tensor(labels))),
        (lambda z: binary_cross_entropy_with_logits(z, y),
         lambda t: torch.nn.functional.binary_cross_entropy_with_logits(t, torch.tensor(y))),
        (lambda z: mse(z, y), lambda t: torch.nn.functional.mse_loss(t, torch.tensor(y))),
    ]
    for ours, theirs in cases:
        tz = torch.tensor(z, requires_grad=True)
        value = theirs(tz)
        value.backward()
        np.testing.assert_allclose(ours(z), value.item(), rtol=1e-10)
        np.testing.assert_allclose(autodiff.grad(ours)(z), tz.grad.numpy(), rtol=1e-9, atol=1e-12)
        assert autodiff.gradcheck(ours, z / 30, order=2)


# --- inputs and settings torch refuses (an audit's findings): refused here too, saying what to do ------------------


def _raises_like_torch(ours, theirs, error, *words):
    """``ours()`` raises ``error`` naming ``words`` (the layer and the fix) where ``theirs()`` (torch) raises."""
    with pytest.raises((RuntimeError, ValueError, IndexError)):
        theirs()
    with pytest.raises(error) as caught:
        ours()
    assert all(w in str(caught.value) for w in words), str(caught.value)


@pytest.mark.parametrize("shape", [(1, 2), (1, 2, 1, 1)])
def test_batchnorm_training_refuses_one_value_per_channel(shape):
    """It gave ``y = beta`` and pulled running_var towards 0 (resnet18 at batch 1: layer4 is 1x1)."""
    x = np.full(shape, 7.0, np.float32)
    module = torch.nn.BatchNorm1d(2) if len(shape) == 2 else torch.nn.BatchNorm2d(2)
    _raises_like_torch(lambda: BatchNorm.init(2).forward(x, train=True), lambda: module.train()(torch.tensor(x)),
                       ValueError, "BatchNorm", str(shape), "larger batch", "eval mode")
    np.testing.assert_allclose(BatchNorm.init(2)(x), module.eval()(torch.tensor(x)).detach().numpy(), rtol=RTOL)


def test_batchnorm_under_vmap_refuses_only_examples_of_one_value_per_channel():
    """vmap folds the examples into the channels: three examples of (1, 2) are one (1, 6), which is refused,
    as torch.func.vmap refuses it; three of (2, 2) are one (2, 6), which is fine."""
    gamma, beta = np.ones(2), np.zeros(2)
    f = lambda xi: batch_norm(xi, gamma, beta, 1e-5)[0]  # noqa: E731
    g = lambda xi: torch.nn.functional.batch_norm(xi, None, None, training=True)  # noqa: E731
    x = rng.standard_normal((3, 1, 2))
    _raises_like_torch(lambda: autodiff.vmap(f)(x), lambda: torch.func.vmap(g)(torch.tensor(x)),
                       ValueError, "BatchNorm", "larger batch")
    x = rng.standard_normal((3, 2, 2))
    np.testing.assert_allclose(autodiff.vmap(f)(x), torch.func.vmap(g)(torch.tensor(x)).numpy(), atol=1e-6)


@pytest.mark.parametrize("shape", [(0, 2), (0, 2, 3, 3)])
def test_batchnorm_training_on_an_empty_batch_leaves_the_running_statistics(shape):
    module = torch.nn.BatchNorm1d(2) if len(shape) == 2 else torch.nn.BatchNorm2d(2)
    with torch.no_grad():
        module.running_mean.fill_(1.0)
        module.running_var.fill_(2.0)
    x = np.ones(shape, np.float32)
    layer = load_torch_state_dict(BatchNorm.init(2), module.state_dict())
    y, updated = layer.forward(x, train=True)
    assert y.shape == module.train()(torch.tensor(x)).shape == shape
    np.testing.assert_array_equal(updated.running_mean, module.running_mean.numpy())  # torch: 1, unchanged
    np.testing.assert_array_equal(updated.running_var, module.running_var.numpy())


x4 = np.ones((1, 2, 4, 4), np.float32)


@pytest.mark.parametrize("ours, theirs, words", [
    (lambda: Conv2d.init(2, 3, 1, stride=0), lambda: torch.nn.Conv2d(2, 3, 1, stride=0)(torch.tensor(x4)),
     ("Conv2d", "stride", "got 0", "stride=1 or more")),
    (lambda: Conv2d(np.ones((3, 2, 1, 1), np.float32), None, 1, -1),
     lambda: torch.nn.Conv2d(2, 3, 1, padding=-1)(torch.tensor(x4)),
     ("Conv2d", "padding", "got -1", "padding=0 or more")),
    (lambda: conv2d(x4, np.ones((3, 2, 1, 1), np.float32), 0, 0),
     lambda: torch.nn.functional.conv2d(torch.tensor(x4), torch.ones(3, 2, 1, 1), stride=0),
     ("conv2d", "stride", "stride=1 or more")),
    (lambda: MaxPool2d(2, 0), lambda: torch.nn.MaxPool2d(2, 0)(torch.tensor(x4)),
     ("MaxPool2d", "stride", "got 0", "stride=1 or more")),
    (lambda: AvgPool2d(2, 0), lambda: torch.nn.AvgPool2d(2, 0)(torch.tensor(x4)),
     ("AvgPool2d", "stride", "got 0", "stride=1 or more")),
    (lambda: MaxPool2d(0), lambda: torch.nn.MaxPool2d(0)(torch.tensor(x4)),
     ("MaxPool2d", "kernel", "got 0", "kernel=1 or more")),
    (lambda: AvgPool2d(2, 1, -1), lambda: torch.nn.AvgPool2d(2, 1, -1)(torch.tensor(x4)),
     ("AvgPool2d", "padding", "padding=0 or more")),
    (lambda: max_pool(x4, 2, 0, 0), lambda: torch.nn.functional.max_pool2d(torch.tensor(x4), 2, 0),
     ("max_pool", "stride", "stride=1 or more")),
])
def test_windows_refuse_a_kernel_or_stride_below_1_and_negative_padding(ours, theirs, words):
    """Stride 0 pooled at stride = kernel, or raised ZeroDivisionError; padding -1 cropped."""
    _raises_like_torch(ours, theirs, ValueError, *words)


def test_pool_stride_none_still_means_the_kernel():
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    np.testing.assert_array_equal(MaxPool2d(3, None)(x), torch.nn.MaxPool2d(3, None)(torch.tensor(x)).numpy())


@pytest.mark.parametrize("bad", [-1, 7])
def test_embedding_refuses_ids_outside_the_table(bad):
    """-1 read the last row (numpy's negative indexing); plain ids, and ids batched by (nested) vmap."""
    layer, module = Embedding.init(7, 3), torch.nn.Embedding(7, 3)
    ids = np.array([[2, 0, 6], [1, bad, 3]])
    words = ("Embedding", "[0, 7)", f"got {bad}", "valid id")
    _raises_like_torch(lambda: layer(ids), lambda: module(torch.tensor(ids)), IndexError, *words)
    _raises_like_torch(lambda: autodiff.vmap(layer)(ids), lambda: torch.func.vmap(module)(torch.tensor(ids)),
                       IndexError, *words)
    _raises_like_torch(lambda: autodiff.vmap(autodiff.vmap(layer))(ids[:, :, None]),
                       lambda: module(torch.tensor(ids)), IndexError, *words)
    _raises_like_torch(lambda: autodiff.grad(lambda m: anp.sum(autodiff.vmap(m)(ids)))(layer),
                       lambda: module(torch.tensor(ids)), IndexError, *words)


# --- what a layer is built from, and what it is given: refused naming the layer, the shapes and the fix -----------


@pytest.mark.parametrize("build, error, words", [
    (lambda: Dense.init(0, 3), ValueError, ("Dense.init", "n_in", "got 0", "n_in=1 or more")),
    (lambda: Dense.init(4, 2.5), ValueError, ("Dense.init", "n_out", "got 2.5")),
    (lambda: Conv2d.init(3, 0, 3), ValueError, ("Conv2d.init", "c_out", "got 0")),
    (lambda: Embedding.init(0, 4), ValueError, ("Embedding.init", "num", "got 0")),
    (lambda: Conv2d(np.ones((3, 3, 3), np.float32)), ValueError, ("Conv2d", "4 axes", "(3, 3, 3)", "Conv2d.init")),
    (lambda: Chain(5), TypeError, ("Chain", "list of layers", "int", "Chain([layer, ...])")),
    (lambda: Chain([np.tanh, 5]), TypeError, ("Chain", "layers[1]", "int", "cannot be called")),
])
def test_a_layer_built_from_the_wrong_things_is_refused_naming_it(build, error, words):
    """Each of these failed deep in numpy (a divide by zero, an unpacking, ``'int' object is not iterable``)."""
    with pytest.raises(error) as caught:
        build()
    assert all(w in str(caught.value) for w in words), str(caught.value)


def test_dense_refuses_inputs_of_another_width_as_torch_does():
    layer = Dense.init(4, 3)
    module = torch.nn.Linear(4, 3)
    x = np.ones((2, 5), np.float32)
    _raises_like_torch(lambda: layer(x), lambda: module(torch.tensor(x)), ValueError,
                       "linear", "(2, 5)", "(3, 4)", "4 features")
    _raises_like_torch(lambda: autodiff.vmap(layer)(x), lambda: torch.func.vmap(module)(torch.tensor(x)),
                       ValueError, "linear", "(5,)", "(3, 4)")


def test_embedding_refuses_float_ids_as_torch_does():
    layer, module = Embedding.init(7, 3), torch.nn.Embedding(7, 3)
    ids = np.array([1.0, 2.0])
    _raises_like_torch(lambda: layer(ids), lambda: module(torch.tensor(ids)), TypeError,
                       "Embedding", "integers", "float64", "astype(int)")


@pytest.mark.parametrize("args, words", [
    ((np.ones((2, 3)), np.ones((4, 3)), np.ones(5)), ("linear", "bias of shape (5,)", "shape (4,)")),
    ((np.ones((2, 3)), np.ones((4, 3, 1))), ("linear", "laid out (out, in)", "(4, 3, 1)")),
    ((np.ones((2, 5)), np.ones((4, 3))), ("linear", "(2, 5)", "(..., 3)", "a weight of shape (4, 5)")),
    ((np.float64(2.0), np.ones((4, 1))), ("linear", "x of shape ()", "(..., 1)")),
])
def test_linear_refuses_shapes_torch_refuses_naming_them(args, words):
    from autodiff.nn.functional import linear

    t_args = [torch.tensor(a) for a in args]
    _raises_like_torch(lambda: linear(*args), lambda: torch.nn.functional.linear(*t_args), ValueError, *words)


def test_linear_takes_a_scalar_bias_as_torch_does():
    from autodiff.nn.functional import linear

    x, w, b = np.ones((2, 3)), np.arange(12.0).reshape(4, 3), np.array(0.5)
    np.testing.assert_allclose(linear(x, w, b), torch.nn.functional.linear(*map(torch.tensor, (x, w, b))).numpy())
