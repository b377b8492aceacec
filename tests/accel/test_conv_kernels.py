"""The layers' numba kernels (im2col/col2im, max-pool windows, batch-norm sums) against their numpy twins, and the
layers built on them against finite differences (orders 1 and 2), their own pushforwards, and torch's double
backward through a small convnet."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autodiff
import autodiff.numpy as anp
from autodiff import _hooks
from autodiff._accel import numba_jit as _jit
from autodiff._accel import parallel as _parallel
from autodiff.nn import functional as F
from layers import AvgPool2d, BatchNorm, Chain, Conv2d, Dense, MaxPool2d, _pieces, global_avg_pool
from layers import _batch_norm as bn
from layers import _conv as conv
from layers import _im2col as ic
from layers import _max_pool as mp
from layers._layout import channels_last, nhwc
from layers.losses import softmax_cross_entropy
from traversal import destructure, total, trainables

KERNELS = [ic.IM2COL, ic.IM2COL_PLANES, ic.COL2IM, mp.MAX_WINDOW, bn.CHANNEL_SUMS, bn.CHANNEL_AFFINE]
DTYPES = [np.dtype(np.float32), np.dtype(np.float64)]
TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    """Compile every kernel for both dtypes up front (a few seconds once), so no example pays for it."""
    for kernel in KERNELS:
        for dtype in DTYPES:
            kernel.compiled(dtype)


def _numba_expected():
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return _jit.use_numba()


def test_every_kernel_compiles_once_per_dtype_unless_switched_off():
    for kernel in KERNELS:
        for dtype in DTYPES:
            k = kernel.compiled(dtype)
            assert (k is not None) == _numba_expected(), kernel.loop.__name__
            if k is not None:
                assert len(k.signatures) == 1  # read-only, any-layout inputs: one signature serves every call
    assert ic.IM2COL.compiled(np.dtype(np.float16)) is None


def test_the_switches_turn_the_kernels_off(monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_hooks, "OFF", frozenset({"kernels"}))  # AUTODIFF_ACCEL_OFF=kernels, read at import
        assert _jit.Kernel(ic.IM2COL.loop, ic.IM2COL.signature).compiled(DTYPES[0]) is None
    with monkeypatch.context() as m:
        m.setenv("NUMBA_DISABLE_JIT", "1")
        assert _jit.Kernel(ic.IM2COL.loop, ic.IM2COL.signature).compiled(DTYPES[0]) is None


# === shapes and layouts ============================================================================================

def _layout(x, kind):
    """``x`` (NCHW) with the same values in another memory layout."""
    if kind == "channels_last":
        return channels_last(x)
    if kind == "fortran":
        return np.asfortranarray(x)
    if kind == "strided":  # every other column of a wider array: no contiguous axis pair at all
        wide = np.zeros(x.shape[:3] + (2 * x.shape[3],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    return x


@st.composite
def window_cases(draw, pool=False):
    kernel = draw(st.sampled_from([1, 3, 7]))
    stride = draw(st.sampled_from([1, 2]))
    padding = draw(st.sampled_from([p for p in (0, 1, 3) if not pool or p <= kernel // 2]))
    low = max(1, kernel - 2 * padding)
    n, c = draw(st.integers(1, 3)), draw(st.sampled_from([1, 2, 3, 4, 16, 19]))  # both sides of _im2col.FEW
    h, w = draw(st.integers(low, low + 6)), draw(st.integers(low, low + 6))
    dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(["contiguous", "channels_last", "fortran", "strided"]))
    seed = draw(st.integers(0, 2 ** 16))
    x = np.random.default_rng(seed).standard_normal((n, c, h, w)).astype(dtype)
    return _layout(x, layout), kernel, stride, padding


def _close(a, b, dtype):
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype])


def _adjoint(y, g, x, back):
    """``<y, g> = <x, back>``: both sums in float64, to the dtype's tolerance of the sum of the terms' sizes (a
    float32 inner product of a few thousand terms rounds at about 1e-5 of that sum, not of its value)."""
    wide = [np.asarray(a, np.float64).ravel() for a in (y, g, x, back)]
    scale = np.abs(wide[0]) @ np.abs(wide[1]) + np.abs(wide[2]) @ np.abs(wide[3])
    assert abs(wide[0] @ wide[1] - wide[2] @ wide[3]) <= TOL[np.dtype(x.dtype)] * max(scale, 1.0)


@settings(max_examples=25, deadline=None)
@given(window_cases())
def test_im2col_and_col2im_match_their_twins_and_are_adjoint(case):
    x, k, s, p = case
    cols = ic.im2col(x, k, k, s, p)
    assert cols.dtype == x.dtype and np.array_equal(cols, ic.im2col_reference(x, k, k, s, p))  # a copy: exact
    g = np.random.default_rng(1).standard_normal(cols.shape).astype(x.dtype)
    back = ic.col2im(g, x.shape, k, k, s, p)
    assert back.dtype == x.dtype and back.shape == x.shape
    _close(back, ic.col2im_reference(g, x.shape, k, k, s, p), x.dtype)
    _adjoint(cols, g, x, back)  # <im2col x, g> = <x, col2im g>


@settings(max_examples=25, deadline=None)
@given(window_cases(pool=True))
def test_max_pool_gather_and_scatter_match_their_twins_and_are_adjoint(case):
    x, k, s, p = case
    rng = np.random.default_rng(2)
    x[..., 0, :] = 0.0  # ties: the first maximum wins, as in torch
    h = rng.standard_normal(x.shape).astype(x.dtype)
    pooled = mp.pool_gather(x, x, k, s, p)
    assert np.array_equal(pooled, mp.pool_gather_reference(x, x, k, s, p))
    gathered = mp.pool_gather(h, x, k, s, p)
    assert np.array_equal(gathered, mp.pool_gather_reference(h, x, k, s, p))
    g = rng.standard_normal(pooled.shape).astype(x.dtype)
    scattered = mp.pool_scatter(g, x, k, s, p)
    _close(scattered, mp.pool_scatter_reference(g, x, k, s, p), x.dtype)
    _adjoint(gathered, g, h, scattered)


@st.composite
def norm_cases(draw):
    spatial = draw(st.sampled_from([(), (1, 1), (3, 2), (5, 5)]))
    n, c = draw(st.integers(1 if math.prod(spatial) > 1 else 2, 4)), draw(st.integers(1, 5))  # training needs 2+ values
    dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(["contiguous", "channels_last", "fortran"] if spatial else ["contiguous"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    offset = draw(st.sampled_from([0.0, 1e3]))  # a large mean: the shifted sums must not cancel
    x = (rng.standard_normal((n, c) + spatial) + offset).astype(dtype)
    return _layout(x, layout) if spatial else x, rng


@settings(max_examples=25, deadline=None)
@given(norm_cases())
def test_batch_norm_kernels_match_their_twins(case):
    x, rng = case
    c, dtype = x.shape[1], x.dtype
    gamma, beta = rng.uniform(0.5, 1.5, c).astype(dtype), rng.standard_normal(c).astype(dtype)
    y, mean, var = bn.batch_norm(x, gamma, beta, 1e-5)
    ry, rmean, rvar = bn.batch_norm_reference(x, gamma, beta, 1e-5)
    assert y.dtype == mean.dtype == var.dtype == dtype
    scale = np.abs(x).max()
    np.testing.assert_allclose(mean, rmean, rtol=TOL[dtype], atol=TOL[dtype] * scale)
    np.testing.assert_allclose(var, rvar, rtol=10 * TOL[dtype], atol=TOL[dtype] * scale)
    np.testing.assert_allclose(y, ry, rtol=TOL[dtype], atol=10 * TOL[dtype] * scale / np.sqrt(rvar.min() + 1e-5))
    g = rng.standard_normal(x.shape).astype(dtype)
    sums = bn.bn_grad_sums(g, x, mean, var, 1e-5)
    _close(sums, bn.bn_grad_sums_reference(g, x, mean, var, 1e-5), dtype)
    dx = bn.bn_grad_input(g, x, gamma, mean, var, sums, 1e-5)
    terms = np.abs(gamma / np.sqrt(var + 1e-5)).max() * np.abs(g).max()  # the size of what cancels in dx
    np.testing.assert_allclose(dx, bn.bn_grad_input_reference(g, x, gamma, mean, var, sums, 1e-5),
                               rtol=TOL[dtype], atol=10 * TOL[dtype] * terms)


@settings(max_examples=15, deadline=None)
@given(window_cases())
def test_conv2d_matches_its_twin_and_so_do_its_first_and_second_derivatives(case):
    x, k, s, p = case
    x = x.astype(np.float64)  # the derivatives are compared in float64
    w = np.random.default_rng(8).standard_normal((2, x.shape[1], k, k))
    _close(conv.conv2d(x, w, s, p), conv.conv2d_reference(x, w, s, p), x.dtype)
    u = np.random.default_rng(9).standard_normal(np.shape(conv.conv2d(x, w, s, p)))

    def loss(f):
        return lambda x, w: anp.sum(f(x, w, s, p) * u)

    def penalty(f):  # the squared norm of the first derivative: differentiating it is a second derivative
        return lambda x, w: sum(anp.sum(d * d) for d in autodiff.grad(loss(f), argnums=(0, 1))(x, w))

    for objective in (loss, penalty):
        ours = autodiff.grad(objective(conv.conv2d), argnums=(0, 1))(x, w)
        theirs = autodiff.grad(objective(conv.conv2d_reference), argnums=(0, 1))(x, w)
        for a, b in zip(ours, theirs):
            _close(a, b, x.dtype)


LOOP_CASES = [((2, 3, 5, 6), 3, 2, 1), ((1, 2, 7, 7), 7, 1, 3), ((2, 2, 4, 5), 1, 2, 0)]


@pytest.mark.parametrize("shape, k, s, p", LOOP_CASES)
def test_the_plain_python_loops_match_the_twins(shape, k, s, p):
    """The loops themselves, uncompiled: what NUMBA_DISABLE_JIT would run, checked even when numba is off."""
    x = channels_last(np.random.default_rng(3).standard_normal(shape))
    ho, wo = [(d + 2 * p - k) // s + 1 for d in shape[2:]]
    cols = np.empty((shape[0] * ho * wo, shape[1] * k * k))
    ic._im2col_loop(nhwc(x), k, k, s, p, cols)
    assert np.array_equal(cols, ic.im2col_reference(x, k, k, s, p))
    planes = np.empty_like(cols)
    ic._im2col_planes_loop(np.ascontiguousarray(x), k, k, s, p, planes)
    assert np.array_equal(planes, cols)
    out = np.empty(nhwc(x).shape)
    ic._col2im_loop(cols, k, k, s, p, out)
    np.testing.assert_allclose(np.transpose(out, (0, 3, 1, 2)), ic.col2im_reference(cols, shape, k, k, s, p))
    pool_p = min(p, k // 2)
    pho, pwo = [(d + 2 * pool_p - k) // s + 1 for d in shape[2:]]
    pooled = np.zeros((shape[0], pho, pwo, shape[1]))
    mp._max_window_loop(nhwc(x), nhwc(x), k, s, pool_p, pooled, False)
    assert np.array_equal(np.transpose(pooled, (0, 3, 1, 2)), mp.pool_gather_reference(x, x, k, s, pool_p))
    spread = np.zeros(nhwc(x).shape)
    mp._max_window_loop(pooled, nhwc(x), k, s, pool_p, spread, True)
    np.testing.assert_allclose(np.transpose(spread, (0, 3, 1, 2)), mp.pool_scatter_reference(
        np.transpose(pooled, (0, 3, 1, 2)), x, k, s, pool_p))
    r = nhwc(x).reshape(-1, shape[1])
    sums = np.empty((2, shape[1]))
    bn._channel_sums_loop(r, r[0], r, r[0], sums)
    np.testing.assert_allclose(sums, bn.channel_sums_reference(r, r[0], r, r[0]), atol=1e-12)


def test_max_pool_propagates_nan_and_handles_infinities_like_its_twin():
    x = np.random.default_rng(10).standard_normal((1, 2, 5, 5))
    x[0, 0, 1, 1], x[0, 0, 3, 3], x[0, 1] = np.nan, np.inf, -np.inf  # a NaN wins; a window of only -inf gives -inf
    x[0, 1, 4, 4] = np.nan
    out = mp.max_pool(x, 3, 2, 1)
    np.testing.assert_array_equal(out, mp.pool_gather_reference(x, x, 3, 2, 1))
    assert np.isnan(out[0, 0, 0, 0]) and np.isneginf(out[0, 1, 0, 0]) and np.isnan(out[0, 1, 2, 2])
    g = np.arange(1.0, 1.0 + out.size).reshape(out.shape)
    np.testing.assert_array_equal(mp.pool_scatter(g, x, 3, 2, 1), mp.pool_scatter_reference(g, x, 3, 2, 1))


def test_read_only_inputs_and_two_threads_give_the_same_answer(monkeypatch):
    x = channels_last(np.random.default_rng(4).standard_normal((6, 5, 9, 9)).astype(np.float32))
    x.setflags(write=False)  # as a tape leaves the arrays it reads
    one = [ic.im2col(x, 3, 3, 1, 1), mp.max_pool(x, 3, 2, 1), bn.batch_norm(x, np.ones(5, np.float32),
                                                                              np.zeros(5, np.float32), 1e-5)[0]]
    monkeypatch.setattr(_pieces, "SPLIT_BYTES", 64)  # cut even this small work into pieces
    previous = _parallel.set_threads(2)
    try:
        assert len(_pieces.ranges(6, x.nbytes)) == 6
        two = [ic.im2col(x, 3, 3, 1, 1), mp.max_pool(x, 3, 2, 1), bn.batch_norm(x, np.ones(5, np.float32),
                                                                                  np.zeros(5, np.float32), 1e-5)[0]]
    finally:
        _parallel.set_threads(previous)
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_a_kernel_that_raises_falls_back_to_the_twin(monkeypatch):
    def broken(*args):
        raise RuntimeError("boom")

    x = np.random.default_rng(5).standard_normal((2, 3, 6, 6))
    monkeypatch.setattr(ic.IM2COL, "compiled", lambda dtype: broken)
    monkeypatch.setattr(mp.MAX_WINDOW, "compiled", lambda dtype: broken)
    monkeypatch.setattr(bn.CHANNEL_SUMS, "compiled", lambda dtype: broken)
    assert np.array_equal(ic.im2col(x, 3, 3, 2, 1), ic.im2col_reference(x, 3, 3, 2, 1))
    assert np.array_equal(mp.max_pool(x, 3, 2, 1), mp.pool_gather_reference(x, x, 3, 2, 1))
    np.testing.assert_allclose(bn.batch_norm(x, np.ones(3), np.zeros(3), 1e-5)[1], x.mean(axis=(0, 2, 3)))


def test_outputs_are_channels_last_behind_nchw_shapes():
    x = np.random.default_rng(6).standard_normal((2, 3, 8, 8)).astype(np.float32)
    y = Conv2d.init(3, 4, 3, padding=1)(x)
    for out in (y, MaxPool2d(2)(y), BatchNorm.init(4).forward(y, train=True)[0], F.relu(y)):
        assert out.shape[1] == 4 and nhwc(out).flags.c_contiguous


# === derivatives through the layers =================================================================================

rng = np.random.default_rng(7)
X = rng.standard_normal((2, 3, 5, 6))


def _bn(c):
    layer = BatchNorm.init(c, dtype=np.float64)
    layer.gamma, layer.beta = rng.uniform(0.5, 1.5, c), rng.standard_normal(c)
    return layer


LAYERS = {
    "conv stride 2 pad 1": (Conv2d.init(3, 4, 3, 2, 1, dtype=np.float64), False),
    "conv 1x1 stride 2": (Conv2d.init(3, 2, 1, 2, 0, bias=False, dtype=np.float64), False),
    "conv 5x5 pad 3": (Conv2d.init(3, 2, 5, 1, 3, dtype=np.float64), False),
    "max pool 3 2 1": (MaxPool2d(3, 2, 1), False),
    "avg pool 3 2 1": (AvgPool2d(3, 2, 1), False),
    "batch norm, training": (_bn(3), True),
}


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("order", [1, 2])
def test_gradcheck_through_the_layer(name, order):
    layer, train = LAYERS[name]
    assert autodiff.gradcheck(lambda m, x: m.forward(x, train)[0], layer, X, order=order)


@pytest.mark.parametrize("x", [rng.standard_normal((5, 3)), rng.standard_normal((4, 3, 7)), channels_last(X)],
                         ids=["(N, C)", "(N, C, L)", "channels-last"])
def test_gradcheck_batch_norm_of_other_shapes_and_layouts(x):
    assert autodiff.gradcheck(lambda m, x: m.forward(x, True)[0], _bn(3), x, order=2)


@pytest.mark.parametrize("name", LAYERS)
def test_pushforward_is_the_transpose_of_the_pullback(name):
    layer, train = LAYERS[name]
    f = lambda x: layer.forward(x, train)[0]  # noqa: E731
    t = rng.standard_normal(X.shape)
    y, ty = autodiff.jvp(f, X, t)
    u = rng.standard_normal(np.shape(y))
    g = autodiff.grad(lambda x: anp.sum(f(x) * u))(X)
    np.testing.assert_allclose(np.vdot(ty, u), np.vdot(g, t), rtol=1e-10)


def _convnet(seed=0):
    return Chain([Conv2d.init(3, 4, 3, 1, 1, seed=seed, dtype=np.float64), _bn(4), F.relu, MaxPool2d(2),
                  Conv2d.init(4, 5, 3, 2, 1, seed=seed + 1, dtype=np.float64), global_avg_pool,
                  Dense.init(5, 3, seed=seed + 2, dtype=np.float64)])


LABELS = np.array([0, 2])


def _loss(model, x):
    return softmax_cross_entropy(model.forward(x, train=True)[0], LABELS)


def test_hessian_vector_product_forward_over_reverse_equals_reverse_over_reverse():
    """The kernels' pushforwards (forward over reverse) against their pullbacks' pullbacks (reverse over reverse)."""
    flat, rebuild = destructure(_convnet())
    grad = autodiff.grad(lambda p: _loss(rebuild(p), X))
    v = rng.standard_normal(flat.shape)
    by_forward = autodiff.jvp(grad, flat, v)[1]
    by_reverse = autodiff.grad(lambda p: anp.sum(grad(p) * v))(flat)
    np.testing.assert_allclose(by_forward, by_reverse, rtol=1e-8, atol=1e-11)


def test_gradient_penalty_through_a_convnet_equals_torchs_double_backward():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    functional = torch.nn.functional
    model = _convnet(3)

    def penalised(m):
        value, g = autodiff.value_and_grad(_loss)(m, X)
        return value + total(lambda p, dp: autodiff.sumsq(dp), m, g)

    ours = trainables(autodiff.grad(penalised)(model))
    params = [torch.tensor(p, requires_grad=True) for p in trainables(model)]
    w1, b1, gamma, beta, w2, b2, wd, bd = params
    h = functional.conv2d(torch.tensor(X), w1, b1, stride=1, padding=1)
    h = functional.batch_norm(h, None, None, gamma, beta, training=True, eps=1e-5)
    h = functional.max_pool2d(functional.relu(h), 2)
    h = functional.conv2d(h, w2, b2, stride=2, padding=1).mean(dim=(2, 3)) @ wd.T + bd
    value = functional.cross_entropy(h, torch.tensor(LABELS))
    grads = torch.autograd.grad(value, params, create_graph=True)
    theirs = torch.autograd.grad(value + sum((g * g).sum() for g in grads), params)
    assert len(ours) == len(theirs) == 8
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-9, atol=1e-12)


def _first_maximum_counts(x, kernel, stride, padding):
    """How many windows send their gradient to each value: the first maximum of each window in row-major order
    (``np.argmax``: the first occurrence), padding never winning.  A loop over windows, no kernel."""
    n, c, h, w = x.shape
    padded = np.full((n, c, h + 2 * padding, w + 2 * padding), -np.inf)
    padded[:, :, padding:padding + h, padding:padding + w] = x
    counts = np.zeros_like(padded)
    ho, wo = (h + 2 * padding - kernel) // stride + 1, (w + 2 * padding - kernel) // stride + 1
    for b, ch, i, j in np.ndindex(n, c, ho, wo):
        window = padded[b, ch, i * stride:i * stride + kernel, j * stride:j * stride + kernel]
        r, q = np.unravel_index(np.argmax(window), window.shape)
        counts[b, ch, i * stride + r, j * stride + q] += 1
    return counts[:, :, padding:padding + h, padding:padding + w]


def test_max_pool_gives_a_tie_to_its_first_maximum():
    """The documented convention (layers/_pool.py) is the oracle: a loop over windows.  torch's CPU kernel agrees on
    the machines we have, but which of several tied maxima it picks is its kernel's choice, not documented, so it
    is not this test's oracle (issue 36: a test at a tie must pass on every CPU)."""
    x = np.zeros((1, 2, 4, 4))
    x[0, 1, 1:, 1:] = 1.0
    ours = autodiff.grad(lambda x: anp.sum(MaxPool2d(3, 1, 1)(x)))(x)
    np.testing.assert_array_equal(ours, _first_maximum_counts(x, 3, 1, 1))


def test_a_float32_weight_gets_a_float32_gradient_from_float64_input():
    conv = Conv2d.init(3, 2, 3, padding=1)  # float32
    g = autodiff.grad(lambda m, x: anp.sum(m(x) ** 2), argnums=(0, 1))(conv, X)
    assert g[0].weight.dtype == g[0].bias.dtype == np.float32 and g[1].dtype == np.float64


# === errors ==========================================================================================================

def test_bad_shapes_are_named_with_the_fix():
    with pytest.raises(ValueError, match=r"Conv2d: expected input of shape \(N, 3, H, W\).*got \(2, 4, 5, 5\)"):
        Conv2d.init(3, 2, 3)(np.ones((2, 4, 5, 5)))
    with pytest.raises(ValueError, match=r"Conv2d: input of spatial size \(2, 2\).*smaller than the kernel"):
        Conv2d.init(3, 2, 3)(np.ones((1, 3, 2, 2)))
    with pytest.raises(ValueError, match=r"MaxPool2d: padding 2 is more than half the kernel 3.*padding <= 1"):
        MaxPool2d(3, 1, 2)(np.ones((1, 1, 5, 5)))
    with pytest.raises(ValueError, match=r"AvgPool2d: expected NCHW input"):
        AvgPool2d(2)(np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"BatchNorm: expected input of shape \(N, 3, \.\.\.\).*got \(2, 4\)"):
        BatchNorm.init(3).forward(np.ones((2, 4)), train=True)


# ---- max pooling at kept places (one byte per output): kernels against twins ---------------------------------

POOL_CASES = [((2, 3, 5, 6), 3, 2, 1), ((1, 2, 7, 7), 2, 2, 0), ((2, 17, 4, 5), 3, 1, 1), ((0, 2, 4, 4), 2, 2, 0),
              ((2, 67, 9, 9), 3, 2, 1),  # ResNet's stem pooling, channels past a vector's width: the kernel's lanes
              ((1, 5, 16, 16), 16, 1, 0)]  # offsets up to 255: chosen in int32 lanes, stored as bytes


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, k, s, p", POOL_CASES)
def test_maxima_gather_and_scatter_match_their_twins_and_the_old_pooling(shape, k, s, p, dtype):
    rng = np.random.default_rng(12)
    x = channels_last(rng.standard_normal(shape).astype(dtype))
    x[..., 0, :] = 0.0  # ties: the first maximum wins, as in torch
    at = mp.maxima(x, k, s, p)
    assert at.dtype == np.uint8 and np.array_equal(at, mp.maxima_reference(x, k, s, p))
    h = rng.standard_normal(shape).astype(dtype)
    gathered = mp.gather_at(h, at, k, s, p)
    assert np.array_equal(gathered, mp.pool_gather_reference(h, x, k, s, p))
    assert np.array_equal(mp.max_pool(x, k, s, p), mp.pool_gather(x, x, k, s, p))
    g = rng.standard_normal(gathered.shape).astype(dtype)
    scattered = mp.scatter_at(g, at, x.shape, k, s, p)
    np.testing.assert_allclose(scattered, mp.pool_scatter_reference(g, x, k, s, p), rtol=TOL[np.dtype(dtype)])
    np.testing.assert_allclose(np.sum(gathered * g), np.sum(h * scattered), rtol=1e-4)  # adjoint


def test_the_plain_python_pooling_loops_match_the_twins():
    """The loops themselves, uncompiled: what NUMBA_DISABLE_JIT would run."""
    x = channels_last(np.random.default_rng(13).standard_normal((2, 3, 5, 6)))
    x[0, 0, 1, 1] = np.nan  # a NaN wins
    at = np.empty(nhwc(mp.maxima_reference(x, 3, 2, 1)).shape, np.uint8)
    mp._offsets_loop(nhwc(x), 3, 2, 1, at)
    assert np.array_equal(np.transpose(at, (0, 3, 1, 2)), mp.maxima_reference(x, 3, 2, 1))
    pooled = np.empty(at.shape)
    mp._move_loop(nhwc(x), at, 3, 2, 1, pooled, False)
    np.testing.assert_array_equal(np.transpose(pooled, (0, 3, 1, 2)), mp.pool_gather_reference(x, x, 3, 2, 1))
    spread = np.zeros(nhwc(x).shape)
    g = np.arange(1.0, 1.0 + pooled.size).reshape(pooled.shape)
    mp._move_loop(g, at, 3, 2, 1, spread, True)
    np.testing.assert_allclose(np.transpose(spread, (0, 3, 1, 2)),
                               mp.pool_scatter_reference(np.transpose(g, (0, 3, 1, 2)), x, 3, 2, 1))
