"""The optional oneDNN convolution backend (layers/_onednn, the [onednn] extra) against the numpy reference.

Every convolution shape of ResNet-18 (and more strides, paddings and kernels): oneDNN's forward and both
gradients, on both sides of the size split, equal the float64 numpy reference to 1e-5 relative; gradcheck at
orders 1 and 2 through Conv2d, in float64 (the reference) and in float32 on the backend (finite differences in
float64); vmap, jvp and per-example gradients of a conv net equal with and without the backend; the switches
and the self-check.  The tests that need oneDNN skip when the extra is not installed; the others always run.
"""

import functools
import gc
import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import optimisers
import traversal
from autodiff import _hooks
from autodiff.extend import BatchingWarning
from autodiff.nn import functional as F
from layers import BatchNorm, Chain, Conv2d, MaxPool2d, _onednn, global_avg_pool
from layers import _conv as conv
from layers._onednn import _convolutions, _library, _primitives, _switch, _weight_copies
from tests.tree_asserts import assert_same_tree

needs_onednn = pytest.mark.skipif(not _switch.installed(), reason="the [onednn] extra is not installed")
active = pytest.mark.skipif(not _switch.installed() or not _hooks.enabled("onednn"),
                            reason="the oneDNN backend is off (not installed, or AUTODIFF_REFERENCE=1)")


def _resnet18_shapes():
    """``(x shape, w shape, stride, padding)`` of every convolution of the bench's ResNet-18 step (3×32×32, batch 8)."""
    from bench.onednn_threshold import resnet_shapes

    return resnet_shapes(8)


EXTRA_SHAPES = [  # strides, paddings, odd and non-square sizes and kernels, one channel, one image
    ((1, 5, 7, 6), (3, 5, 2, 2), 2, 1), ((2, 1, 9, 9), (4, 1, 3, 3), 3, 2), ((2, 8, 10, 7), (6, 8, 3, 1), 1, 0),
    ((3, 16, 12, 12), (8, 16, 5, 5), 2, 2), ((2, 32, 6, 6), (16, 32, 1, 1), 1, 0),
    # taps that only see padding, left out below the split: the centre of a 5×5, a 2×2 corner; rows only
    # (kept whole: the layer's one padding cannot trim one axis)
    ((2, 4, 1, 1), (5, 4, 5, 5), 1, 2), ((3, 6, 2, 2), (4, 6, 3, 3), 2, 1), ((2, 3, 1, 4), (4, 3, 3, 3), 1, 1),
]
SHAPES = _resnet18_shapes() + EXTRA_SHAPES


def _reference(x, w, stride, padding, g):
    """The float64 forward and both cotangents of the plain windows path (``conv2d_reference``, no kernels)."""
    x, w, g = (np.asarray(a, np.float64) for a in (x, w, g))
    y, pullback = autodiff.vjp(lambda a, b: conv.conv2d_reference(a, b, stride, padding), x, w)
    return (y,) + tuple(pullback(g))


def _close(ours, reference, rtol=1e-5):
    error = np.linalg.norm(np.asarray(ours, np.float64) - reference) / max(np.linalg.norm(reference), 1e-30)
    assert error <= rtol, f"relative error {error:.2e} > {rtol:.0e}"


@needs_onednn
@pytest.mark.parametrize("split", ["onednn", "sgemm"])
@pytest.mark.parametrize("x_shape, w_shape, stride, padding", SHAPES)
def test_forward_and_both_gradients_equal_the_reference(monkeypatch, split, x_shape, w_shape, stride, padding):
    monkeypatch.setattr(_primitives, "MIN_POSITIONS", 0 if split == "onednn" else 1 << 30)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape, np.float32), rng.standard_normal(w_shape, np.float32)
    y = _primitives._forward(x, w, stride, padding)
    g = rng.standard_normal(y.shape, np.float32)
    y_ref, dx_ref, dw_ref = _reference(x, w, stride, padding, g)
    _close(y, y_ref)
    _close(_primitives._input(g, w, x_shape, stride, padding), dx_ref)
    _close(_primitives._weight(x, g, w_shape, stride, padding), dw_ref)
    assert y.dtype == np.float32 and y.transpose(0, 2, 3, 1).flags.c_contiguous  # channels-last, as conv2d's


@needs_onednn
def test_oneDNN_reads_any_layout_and_the_sgemm_any_transposition():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 16, 8), np.float32).transpose(0, 1, 3, 2)  # neither NCHW nor NHWC memory
    w = rng.standard_normal((3, 4, 3, 3), np.float32).transpose(1, 0, 2, 3)  # a transposed weight
    g = rng.standard_normal((2, 4, 8, 16), np.float32)
    y_ref, dx_ref, dw_ref = _reference(x, w, 1, 1, g)
    _close(_convolutions.forward(x, w, 1, 1), y_ref)
    _close(_convolutions.backward_data(g, w, x.shape, 1, 1), dx_ref)
    _close(_convolutions.backward_weights(x, g, w.shape, 1, 1), dw_ref)
    a, b = rng.standard_normal((70, 50), np.float32), rng.standard_normal((50, 30), np.float32)
    for ta in (False, True):
        for tb in (False, True):
            left, right = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
            _close(_convolutions.sgemm(left, right, ta, tb), a.astype(np.float64) @ b)
    assert _convolutions.sgemm(a[:, :0], b[:0]).tolist() == np.zeros((70, 30)).tolist()  # k = 0: zeros


def _net(dtype, seed=0):
    return Chain([Conv2d.init(3, 8, 3, padding=1, dtype=dtype, seed=seed), F.relu,
                  Conv2d.init(8, 8, 3, stride=2, padding=1, dtype=dtype, seed=seed + 1), anp.tanh, MaxPool2d(2),
                  Conv2d.init(8, 4, 1, dtype=dtype, seed=seed + 2), global_avg_pool])


def _penalty(x):
    """A gradient-norm penalty: its gradient differentiates the convolutions' pullbacks (order 2)."""
    def penalty(net):
        g = autodiff.grad(lambda m: anp.sum(m(x) ** 2))(net)
        return anp.sum(g.layers[2].weight ** 2) + anp.sum(net(x) ** 2)
    return penalty


@pytest.mark.parametrize("order", [1, 2])
def test_gradcheck_through_the_layer_in_float64_runs_the_reference(order):
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8))
    assert autodiff.gradcheck(lambda m: anp.sum(m(x) ** 2), _net(np.float64), order=order)


@active
@pytest.mark.parametrize("order", [1, 2])
def test_gradcheck_through_the_backend_in_float32(order, monkeypatch):
    """The float32 backend's VJP (and VJP of VJP) against float64 finite differences (the reference path)."""
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    monkeypatch.setattr(_primitives, "MIN_POSITIONS", 4)  # both sides of the split in one net
    assert autodiff.gradcheck(lambda m: anp.sum(m(x) ** 2), _net(np.float32), order=order)


@needs_onednn
def test_the_last_stage_multiplies_no_padding(monkeypatch):
    """ResNet-18's last stage on 3×32×32 images convolves 1×1 images with 3×3 kernels: below the split the
    GEMMs take the centre tap only (the eight others see padding), and the results are the reference's."""
    kernels, im2col = [], _primitives._im2col
    monkeypatch.setattr(_primitives, "_im2col",
                        lambda x, kh, kw, *a: (kernels.append((kh, kw)), im2col(x, kh, kw, *a))[1])
    monkeypatch.setattr(_primitives, "MIN_POSITIONS", 1 << 30)
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((4, 32, 1, 1), np.float32), rng.standard_normal((16, 32, 3, 3), np.float32)
    g = rng.standard_normal((4, 16, 1, 1), np.float32)
    y_ref, dx_ref, dw_ref = _reference(x, w, 1, 1, g)
    _close(_primitives._forward(x, w, 1, 1), y_ref)
    _close(_primitives._input(g, w, x.shape, 1, 1), dx_ref)
    _close(_primitives._weight(x, g, w.shape, 1, 1), dw_ref)
    assert kernels == [(1, 1), (1, 1)]  # the forward's and the weight gradient's columns


@pytest.mark.parametrize("order", [1, 2])
def test_gradcheck_of_the_three_primitives_rules(order):
    """The rules that make oneDNN's three primitives each other's pullbacks and pushforwards, in float64."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3))
    g = rng.standard_normal((2, 4, 3, 3))
    conv2d, conv_input, conv_weight = _primitives.onednn_conv2d, _primitives.conv_input, _primitives.conv_weight
    assert autodiff.gradcheck(lambda x, w: anp.sum(anp.sin(conv2d(x, w, 2, 1))), x, w, order=order)
    assert autodiff.gradcheck(lambda g, w: anp.sum(anp.sin(conv_input(g, w, x.shape, 2, 1))), g, w, order=order)
    assert autodiff.gradcheck(lambda x, g: anp.sum(anp.sin(conv_weight(x, g, w.shape, 2, 1))), x, g, order=order)
    x, w, g = x[:, :, :2, :2], rng.standard_normal((4, 3, 3, 3)), g[:, :, :1, :1]  # only a 2×2 corner of w reaches x
    assert autodiff.gradcheck(lambda x, w: anp.sum(anp.sin(conv2d(x, w, 2, 1))), x, w, order=order)
    assert autodiff.gradcheck(lambda g, w: anp.sum(anp.sin(conv_input(g, w, x.shape, 2, 1))), g, w, order=order)
    assert autodiff.gradcheck(lambda x, g: anp.sum(anp.sin(conv_weight(x, g, w.shape, 2, 1))), x, g, order=order)


def _with_and_without(fn):
    """``fn()`` with the backend on, then off (the numpy reference)."""
    previous = _onednn.set_enabled(True)
    try:
        on = fn()
        _onednn.set_enabled(False)
        off = fn()
    finally:
        _onednn.set_enabled(previous)
    return on, off


def _oneDNN_calls(monkeypatch):
    """A list that grows by one at every oneDNN forward convolution."""
    calls, forward = [], _convolutions.forward
    monkeypatch.setattr(_convolutions, "forward", lambda *a: (calls.append(1), forward(*a))[1])
    return calls


@active
def test_the_layer_runs_oneDNN_in_float32_and_the_reference_in_float64(monkeypatch):
    assert _onednn.ready() and _onednn.describe().startswith("oneDNN 3.2")  # the self-check ran before counting
    calls, x = _oneDNN_calls(monkeypatch), np.random.default_rng(4).standard_normal((2, 3, 8, 8))
    on, off = _with_and_without(lambda: _net(np.float32)(x.astype(np.float32)))
    expected = sum(p >= _primitives.MIN_POSITIONS for p in (8 * 8, 4 * 4, 2 * 2))  # _net's outputs per image
    assert len(calls) == expected  # the others ran im2col and dnnl_sgemm
    assert on.dtype == np.float32 and off.dtype == np.float32
    np.testing.assert_allclose(on, off, rtol=1e-5, atol=1e-6)
    _net(np.float64)(x)
    assert len(calls) == expected  # float64: the reference


def _programs():
    net, xs = _net(np.float32), np.random.default_rng(5).standard_normal((3, 2, 3, 8, 8)).astype(np.float32)
    t = np.random.default_rng(6).standard_normal(xs.shape[1:]).astype(np.float32)
    loss = lambda m, x: anp.sum(m(x) ** 2)  # noqa: E731
    return {
        "vmap": lambda: autodiff.vmap(net)(xs),
        "per-example gradients": lambda: autodiff.vmap(autodiff.grad(loss), in_axes=(None, 0))(net, xs),
        "jvp": lambda: autodiff.jvp(lambda x: net(x), xs[0], t),
        "vmap of a penalty's gradient": lambda: autodiff.vmap(autodiff.grad(_penalty_at), in_axes=(None, 0))(net, xs),
    }


@active
@pytest.mark.parametrize("name", list(_programs()))
def test_vmap_jvp_and_per_example_gradients_equal_with_and_without_the_backend(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)  # the three primitives batch: no loop over examples
        on, off = _with_and_without(_programs()[name])
    assert_same_tree(on, off, rtol=2e-4, atol=1e-5)


def _penalty_at(net, x):
    return _penalty(x)(net)


@pytest.mark.parametrize("backend", [True, False])
def test_vmap_of_grad_over_an_empty_batch(backend):
    net = _net(np.float32)
    previous = _onednn.set_enabled(backend)
    try:
        g = autodiff.vmap(autodiff.grad(lambda m, x: anp.sum(m(x) ** 2)), in_axes=(None, 0))(
            net, np.zeros((0, 2, 3, 8, 8), np.float32))
    finally:
        _onednn.set_enabled(previous)
    for layer, grads in zip(net.layers, g.layers):
        if isinstance(layer, Conv2d):
            assert grads.weight.shape == (0,) + layer.weight.shape and grads.weight.dtype == np.float32
            assert grads.bias.shape == (0,) + layer.bias.shape


@needs_onednn  # without the library, loading fails before the self-check (the next test's case)
def test_a_failed_self_check_warns_once_and_the_reference_runs(monkeypatch):
    monkeypatch.setattr(_hooks, "REFERENCE", False)
    monkeypatch.setattr(_hooks, "OFF", frozenset())
    monkeypatch.setattr(_switch, "installed", lambda: True)
    monkeypatch.setattr(_switch, "_status", None)
    monkeypatch.setattr(_switch, "_check_against_reference", lambda: "its forward differs (a test)")
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
    with pytest.warns(_onednn.OneDNNWarning, match="its forward differs"):
        y = _switch.convolve(x, w, 1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _switch.convolve(x, w, 1, 1)  # once only
    np.testing.assert_array_equal(y, conv.conv2d(x, w, 1, 1))
    assert not _onednn.ready() and "its forward differs" in _onednn.describe()


def test_a_library_that_does_not_load_warns_and_the_reference_runs(monkeypatch):
    monkeypatch.setattr(_hooks, "REFERENCE", False)
    monkeypatch.setattr(_hooks, "OFF", frozenset())
    monkeypatch.setenv("AUTODIFF_ONEDNN_LIB", "/nonexistent/libdnnl.so.3")
    monkeypatch.setattr(_switch, "_status", None)
    _library.load.cache_clear()
    try:
        with pytest.warns(_onednn.OneDNNWarning, match="cannot load oneDNN"):
            assert not _onednn.ready()
    finally:
        _library.load.cache_clear()


@needs_onednn
def test_a_convolution_reads_no_package_metadata(monkeypatch):
    """Every float32 convolution asks whether the extra is installed; the wheel's metadata is read once per
    process (reading it cost as much as a small convolution, issue 43's profile)."""
    assert _switch.installed()

    def refuse(name):
        raise AssertionError(f"the metadata of {name} was read again")

    monkeypatch.setattr(_switch.metadata, "version", refuse)
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
    np.testing.assert_allclose(_switch.convolve(x, w, 1, 1), conv.conv2d(x, w, 1, 1), rtol=1e-6)
    assert _switch.installed()


def test_a_library_named_in_the_environment_counts_as_installed(monkeypatch):
    monkeypatch.setattr(_switch, "_wheel_installed", lambda: False)
    monkeypatch.delenv("AUTODIFF_ONEDNN_LIB", raising=False)
    assert not _switch.installed()
    monkeypatch.setenv("AUTODIFF_ONEDNN_LIB", "/somewhere/libdnnl.so.3")
    assert _switch.installed()


def test_the_switches_and_the_reference_mode():
    if _hooks.REFERENCE:
        assert _hooks.hooks.convolve is conv.conv2d  # not even installed
        assert not _onednn.ready() and "AUTODIFF_REFERENCE=1" in _onednn.describe()
    previous = _onednn.set_enabled(False)
    try:
        assert not _onednn.ready() and _onednn.describe().startswith("numpy im2col reference")
        x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
        np.testing.assert_array_equal(_switch.convolve(x, w, 1, 1), conv.conv2d(x, w, 1, 1))
    finally:
        _onednn.set_enabled(previous)


def _conv_bn_loss(conv, bn, x):
    y, _ = bn.forward(conv(x), True)
    return anp.sum(anp.tanh(F.relu(MaxPool2d(2, 2)(y))) ** 2)


@pytest.mark.skipif(not _onednn.ready(), reason="the oneDNN backend is not installed or is off")
def test_the_float32_hvp_on_onednn_agrees_with_the_float64_reference():
    rng = np.random.default_rng(10)
    conv = Conv2d.init(4, 8, 3, padding=1, dtype=np.float64, seed=2)
    x, v = rng.standard_normal((2, 4, 8, 8)), rng.standard_normal(conv.weight.shape)

    def hvp(dtype):
        c32, b32 = Conv2d(conv.weight.astype(dtype), conv.bias.astype(dtype), 1, 1), BatchNorm.init(8, dtype)
        f = lambda w: _conv_bn_loss(Conv2d(w, c32.bias, 1, 1), b32, x.astype(dtype))  # noqa: E731
        return autodiff.hvp(f, c32.weight, v.astype(dtype))

    want = hvp(np.float64)
    np.testing.assert_allclose(hvp(np.float32), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())


def _copies(monkeypatch):
    """``{(kind, id(weight)): copies}``, growing at every copy of a weight into the layout a convolution reads:
    oneDNN's reorders, and the trimmed taps' matrix below the split (a view of the weight's taps)."""
    counts, reordered, copied = {}, _convolutions._reordered, _primitives._copied

    def count(key):
        counts[key] = counts.get(key, 0) + 1

    monkeypatch.setattr(_convolutions, "_reordered", lambda d, plain, w: (
        count(("reorders", id(w))), reordered(d, plain, w))[1])
    monkeypatch.setattr(_primitives, "_copied", lambda taps: (
        count(("trimmed", id(taps.base))), copied(taps))[1])
    return counts


def _close_trees(ours, reference, rtol=1e-4):
    for a, b in zip(traversal.trainables(ours), traversal.trainables(reference)):
        _close(a, np.asarray(b, np.float64), rtol)


@active
@pytest.mark.parametrize("size, copies", [(8, {"reorders": 3}), (1, {"trimmed": 3})], ids=["oneDNN", "trimmed"])
def test_a_weight_changed_in_place_is_copied_again(monkeypatch, size, copies):
    """A step's weight version is copied at most three times per layout, though the loss convolves three times
    and pulls back through one of them: oneDNN's layouts keep from their second read (its forward reorders
    twice for three convolutions, its backward data once); below the split, on 1×1 images, the forward and
    the input gradient read one matrix of the centre taps, kept from its third read: four reads, three
    copies.  Nothing is kept once the step is done.  A weight written in place between steps (same array, a
    new hold) is copied again: every value and gradient is the new weight's, as the numpy reference's."""
    rng = np.random.default_rng(4)
    conv = Conv2d.init(8, 16, 3, padding=1, bias=False)
    x, x2 = rng.standard_normal((2, 2, 8, size, size), np.float32)
    loss = lambda c, x: anp.sum(anp.tanh(c(x)) ** 2) + anp.sum(c(x2) * c(x2))  # noqa: E731
    step = autodiff.value_and_grad(loss, argnums=(0, 1))  # x's gradient runs the input gradient
    counts, values = _copies(monkeypatch), []
    for _ in range(3):
        counts.clear()
        (value, (g, gx)), (ref_value, (ref_g, ref_gx)) = _with_and_without(lambda: step(conv, x))
        assert counts == {(kind, id(conv.weight)): n for kind, n in copies.items()}
        assert _weight_copies.kept() == 0  # the tape is done: its copies went with its hold
        _close(value, ref_value), _close(gx, ref_gx), _close_trees(g, ref_g)
        values.append(value)
        conv.weight -= 0.05 * g.weight / np.abs(g.weight).max()  # in place, now that the step's tape is done
    assert len(set(values)) == 3  # the updates changed the loss: a stale copy would have been caught


@active
def test_weights_an_optimiser_replaces_are_the_new_ones(monkeypatch):
    """``optimisers.update`` returns new arrays (the old ones are freed, their addresses reused): each step
    runs the new weights, as the reference does, and no copy outlives its weight."""
    rng = np.random.default_rng(5)
    net = Chain([Conv2d.init(3, 8, 3, padding=1), F.relu, Conv2d.init(8, 8, 3, padding=1), global_avg_pool])
    x = rng.standard_normal((2, 3, 8, 8), np.float32)
    step = autodiff.value_and_grad(lambda m: anp.sum(m(x) ** 2))
    state, kept = optimisers.setup(optimisers.Momentum(0.5, 0.9), net), _weight_copies.kept()
    for _ in range(3):
        (value, g), (ref_value, ref_g) = _with_and_without(functools.partial(step, net))
        _close(value, ref_value), _close_trees(g, ref_g)
        state, net = optimisers.update(state, net, g)
    net = state = g = ref_g = None
    gc.collect()
    assert _weight_copies.kept() <= kept


@active
def test_an_hvp_operator_reorders_each_weight_once_for_all_its_products(monkeypatch):
    """The operator's tape holds the weight for its whole life: after a direction's first read, every product
    reads the same kept copy, and the products equal the numpy reference's."""
    rng = np.random.default_rng(6)
    conv = Conv2d.init(4, 8, 3, padding=1, bias=False)
    x = rng.standard_normal((2, 4, 8, 8), np.float32)
    f = lambda w, x: anp.sum(anp.tanh(Conv2d(w, None, 1, 1)(x)) ** 2)  # noqa: E731
    vs = [(rng.standard_normal(conv.weight.shape, np.float32), rng.standard_normal(x.shape, np.float32))
          for _ in range(3)]
    counts = _copies(monkeypatch)

    def products():
        op = autodiff.hvp_operator(f, conv.weight, x, argnums=(0, 1))
        return [op(v) for v in vs]

    ours, reference = _with_and_without(products)
    assert counts[("reorders", id(conv.weight))] <= 4  # forward and backward data, at most twice each (was 25)
    for a, b in zip(ours, reference):
        _close(a[0], b[0]), _close(a[1], b[1])


def test_the_step_profile_times_each_part_and_puts_everything_back():
    """bench/step_profile.py (issue 43's profile) finds every part of the step, and leaves the primitives and
    the oneDNN functions as they were."""
    from bench import step_profile

    fun, execute, sgemm = _primitives.onednn_conv2d.fun, _convolutions._execute, _convolutions.sgemm
    parts = step_profile.ours(2, 1)
    assert (_primitives.onednn_conv2d.fun, _convolutions._execute, _convolutions.sgemm) == (fun, execute, sgemm)
    expected = {"optimiser", "engine: recording", "engine: backward loop"}
    if _onednn.ready():
        expected |= {"conv: oneDNN forward", "conv: oneDNN backward data", "conv: oneDNN backward weights",
                     "conv: weight reorders", "conv: dnnl_sgemm", "BatchNorm", "max pool", "ReLU"}
    assert expected <= parts.keys() and all(seconds > 0 for seconds in parts.values()), parts
