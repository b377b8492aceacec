"""vmap (issue 21): every op of the table batched against a Python loop over the batch (values, gradients
through and inside vmap, second order; the batch axis at 0 and at -1, every batched/shared mix), nesting with
grad/jvp/hvp/vmap against loops and torch.func, the errors, and the check that every built-in primitive has a
batching rule of its own."""

import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hvp, jvp, vmap
from autodiff.extend import BatchingWarning, Primitive, defbatch, defvjp, primitive
from tests.hypothesis_policy import DERANDOMIZE
from tests.internals import batch_rules
from tests.op_table import OPS
from tests.probes import pullback_counter
from tests.trees import leaves

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=DERANDOMIZE)
B = 3
TOL = {np.float64: 1e-9, np.float32: 2e-4}


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


def _check_row(op, dtype, axis, check):
    @settings(SETTINGS, max_examples=op.examples)
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
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_values_match_a_loop(op, dtype, axis):
    def check(f, examples, mix, axis):
        args, in_axes = _batched_args(examples, mix, axis)
        got = vmap(f, in_axes=in_axes)(*args)
        want = np.stack([f(*_example_args(examples, mix, k)) for k in range(B)])
        _close(got, want, dtype)
        assert np.result_type(got) == np.result_type(want)

    _check_row(op, dtype, axis, check)


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_gradient_of_a_sum_through_vmap(op, dtype, axis):
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

    _check_row(op, dtype, axis, check)


def _example_from(xs, in_axes, k):
    return [x if a is None else anp.moveaxis(x, a, 0)[k] for x, a in zip(xs, in_axes)]


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_per_example_gradients(op, dtype, axis):
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

    _check_row(op, dtype, axis, check)


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_second_order_per_example(op, dtype, axis):
    """vmap(hvp): each example's Hessian-vector product against a loop of hvps."""

    def check(f, examples, mix, axis):
        args, in_axes = _batched_args(examples, mix, axis)
        w = _weights(f(*examples[0]))
        rng = np.random.default_rng(3)
        v = [rng.standard_normal(np.shape(a)).astype(dtype) for a in examples[0]]

        def loss(*xs):
            return anp.sum(f(*xs) * w)

        got = vmap(lambda *xs: hvp(loss, tuple(xs), tuple(v)), in_axes=in_axes)(*args)
        per = [hvp(loss, tuple(_example_args(examples, mix, k)), tuple(v)) for k in range(B)]
        for i, g in enumerate(got):
            _close(g, np.stack([p[i] for p in per]), dtype)

    _check_row(op, dtype, axis, check)


# --- built-in primitives without a batching rule: none (each would run a loop per example) -----------------------

WITHOUT_A_RULE = []  # every built-in primitive batches by a rule of its own


def test_the_built_in_primitives_without_a_batching_rule_are_these():
    """Every primitive the packages define has a batching rule (a new one without a rule fails here)."""
    import autodiff.scipy.integrate  # noqa: F401  (every module that defines primitives)
    import autodiff.scipy.linalg  # noqa: F401
    import autodiff.scipy.signal  # noqa: F401
    import autodiff.scipy.special  # noqa: F401
    import autodiff.scipy.stats  # noqa: F401
    import layers  # noqa: F401
    import traversal  # noqa: F401

    builtin = {}  # every primitive the packages hold: module globals, and the tables (dicts, lists) of them
    for name, module in list(sys.modules.items()):
        if name.startswith(("autodiff", "layers", "traversal")):
            for value in vars(module).values():
                items = value.values() if type(value) is dict else value if type(value) in (list, tuple) else (value,)
                builtin.update({id(p): p for p in items if isinstance(p, Primitive)})
    missing = sorted(f"{p.__module__}.{p.__name__}" for p in builtin.values() if p not in batch_rules)
    assert missing == WITHOUT_A_RULE


def test_a_primitive_without_a_rule_runs_the_loop_and_warns_once_naming_it():
    cube = primitive(lambda x: x ** 3, "cube_for_vmap")
    defvjp(cube, lambda g, ans, x: g * 3.0 * x ** 2)
    x = np.arange(6.0).reshape(3, 2)
    with pytest.warns(BatchingWarning, match=r"cube_for_vmap has no batching rule.*defbatch\(cube_for_vmap"):
        got = vmap(lambda v: cube(v) + 1.0)(x)
    np.testing.assert_allclose(got, x ** 3 + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)  # once per primitive: the second call is silent
        np.testing.assert_allclose(vmap(grad(lambda v: anp.sum(cube(v))))(x), 3.0 * x ** 2)
    defbatch(cube, lambda level, args, bdims, kwargs: (cube(args[0]), 0))  # elementwise: nothing to move
    np.testing.assert_allclose(vmap(cube)(x), x ** 3)


# --- nesting, against loops -------------------------------------------------------------------------------------


def _net(w, x):
    return anp.sum(anp.tanh(anp.dot(x, w)) ** 2) + anp.sum(w * w) * anp.sum(x)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 2)), rng.standard_normal((4, 3)), rng.standard_normal((3, 2))


def test_vmap_of_grad_is_a_loop_of_grads(data):
    w, xs, _ = data
    got = vmap(grad(_net), in_axes=(None, 0))(w, xs)
    np.testing.assert_allclose(got, np.stack([grad(_net)(w, x) for x in xs]), rtol=1e-12)
    got_x = vmap(grad(_net, 1), in_axes=(None, 0))(w, xs)
    np.testing.assert_allclose(got_x, np.stack([grad(_net, 1)(w, x) for x in xs]), rtol=1e-12)


def test_grad_of_vmap_is_the_gradient_of_the_summed_losses(data):
    w, xs, _ = data
    got = grad(lambda w: anp.sum(vmap(_net, in_axes=(None, 0))(w, xs)))(w)
    np.testing.assert_allclose(got, sum(grad(_net)(w, x) for x in xs), rtol=1e-12)


def test_vmap_of_vmap_is_a_double_loop(data):
    w, xs, _ = data
    grid = np.stack([xs, 2 * xs])  # (2, 4, 3)
    got = vmap(vmap(_net, in_axes=(None, 0)), in_axes=(None, 0))(w, grid)
    np.testing.assert_allclose(got, [[_net(w, x) for x in row] for row in grid], rtol=1e-12)
    crossed = vmap(vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))(np.arange(3.0), np.arange(4.0))
    np.testing.assert_array_equal(crossed, np.outer(np.arange(4.0), np.arange(3.0)))


def test_an_inner_vmap_returning_the_outer_example_repeats_it(data):
    """An inner output that depends on the outer vmap's example only is the same for every inner example, so
    the inner vmap repeats it along its own axis (it once came back without that axis)."""
    w, xs, _ = data
    ys = np.ones((5, 2))
    got = vmap(lambda x: vmap(lambda y: x * 2.0)(ys))(xs)
    np.testing.assert_array_equal(got, [[x * 2.0 for _ in ys] for x in xs])
    moved = vmap(lambda x: vmap(lambda y: x, out_axes=-1)(ys))(xs)
    np.testing.assert_array_equal(moved, [np.stack([x for _ in ys], axis=-1) for x in xs])
    summed = grad(lambda w: anp.sum(vmap(lambda x: vmap(lambda y: _net(w, x))(ys))(xs)))(w)
    np.testing.assert_allclose(summed, len(ys) * sum(grad(_net)(w, x) for x in xs), rtol=1e-12)


BY_KEYWORD = {  # a required parameter given by keyword, where numpy takes it so (the jit fuzzer found roll's)
    "roll": lambda v: anp.roll(v, shift=1),
    "roll, axis first": lambda v: anp.roll(v, axis=0, shift=-1),
    "broadcast_to": lambda v: anp.broadcast_to(v, shape=(2, 2, 3)),
    "tile": lambda v: anp.tile(v, reps=(2, 1)),
    "repeat": lambda v: anp.repeat(v, repeats=2, axis=1),
    "reshape": lambda v: anp.reshape(v, (3, 2)),
    "transpose": lambda v: anp.transpose(v, axes=(1, 0)),
    "moveaxis": lambda v: anp.moveaxis(v, source=0, destination=1),
    "take": lambda v: anp.take(v, indices=[2, 0], axis=1),
    "split": lambda v: anp.split(v, indices_or_sections=3, axis=1)[1],
    "pad": lambda v: anp.pad(v, pad_width=1),
    "clip": lambda v: anp.clip(v, a_min=1.2, a_max=3.7),  # off the grid of halves: no kink at a value
}


@pytest.mark.parametrize("name", BY_KEYWORD)
def test_required_arguments_given_by_keyword_batch_as_given_by_position(name):
    """A batching rule reads a primitive's required parameters by position: one given by keyword is moved there
    (it raised a bare IndexError or ValueError from inside the rule); values and gradients are a loop's."""
    f, xs = BY_KEYWORD[name], np.arange(12.0).reshape(2, 2, 3) * 0.5
    np.testing.assert_array_equal(vmap(f)(xs), np.stack([f(x) for x in xs]))
    loss = lambda v: anp.sum(f(v) ** 2)  # noqa: E731
    np.testing.assert_allclose(vmap(grad(loss))(xs), np.stack([grad(loss)(x) for x in xs]), rtol=1e-12)
    assert autodiff.gradcheck(lambda v: anp.sum(vmap(f)(v) ** 2), xs, order=2)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_with_indices_batched_by_vmap_is_a_loop(axis):
    """Batched integer indices gather each example's (they were converted with np.asarray, which refused them)."""
    w = np.random.default_rng(3).standard_normal((3, 4, 3))
    ids = np.array([[1, 1, 0], [2, 0, 1]])
    got = vmap(lambda i: anp.take(w, i, axis=axis))(ids)
    np.testing.assert_array_equal(got, np.stack([np.take(w, i, axis=axis) for i in ids]))
    g = grad(lambda w: anp.sum(anp.sin(vmap(lambda i: anp.take(w, i, axis=axis))(ids))))(w)
    loop = sum(grad(lambda w, i=i: anp.sum(anp.sin(anp.take(w, i, axis=axis))))(w) for i in ids)
    np.testing.assert_allclose(g, loop, rtol=1e-12)


def test_vmap_of_hvp_is_a_loop_of_hvps(data):
    w, xs, v = data
    def product(x, mode="reverse_over_forward"):
        return hvp(lambda w: _net(w, x), w, v, mode=mode)

    for mode in ("reverse_over_forward", "forward_over_reverse"):
        got = vmap(lambda x, mode=mode: product(x, mode))(xs)
        np.testing.assert_allclose(got, np.stack([product(x) for x in xs]), rtol=1e-10)


def test_jvp_of_vmap_is_a_loop_of_jvps(data):
    w, xs, v = data
    out, tangent = jvp(lambda w: vmap(_net, in_axes=(None, 0))(w, xs), (w,), (v,))
    np.testing.assert_allclose(out, [_net(w, x) for x in xs], rtol=1e-12)

    def pushed(x):
        return jvp(lambda w: _net(w, x), (w,), (v,))[1]

    np.testing.assert_allclose(tangent, [pushed(x) for x in xs], rtol=1e-12)
    per = vmap(pushed)(xs)  # and vmap(jvp)
    np.testing.assert_allclose(per, tangent, rtol=1e-12)


def test_grad_of_grad_through_vmap(data):
    """Second order through vmap: d/dw of the summed per-example gradients' squared norm, against the loop."""
    w, xs, _ = data

    def batched(w):
        return anp.sum(vmap(grad(_net), in_axes=(None, 0))(w, xs) ** 2)

    def looped(w):
        return sum(anp.sum(grad(_net)(w, x) ** 2) for x in xs)

    np.testing.assert_allclose(grad(batched)(w), grad(looped)(w), rtol=1e-10)


# --- against torch.func ------------------------------------------------------------------------------------


def _torch_net(w, x, torch):
    return torch.sum(torch.tanh(x @ w) ** 2) + torch.sum(w * w) * torch.sum(x)


def test_nesting_matches_torch_func(data):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    from torch.func import grad as tgrad
    from torch.func import hessian as thessian
    from torch.func import jvp as tjvp
    from torch.func import vmap as tvmap

    w, xs, v = data
    tw, txs, tv = (torch.tensor(a) for a in (w, xs, v))
    net = lambda w, x: _torch_net(w, x, torch)  # noqa: E731
    np.testing.assert_allclose(vmap(grad(_net), in_axes=(None, 0))(w, xs),
                               tvmap(tgrad(net), in_dims=(None, 0))(tw, txs).numpy(), rtol=1e-10)
    np.testing.assert_allclose(grad(lambda w: anp.sum(vmap(_net, in_axes=(None, 0))(w, xs)))(w),
                               tgrad(lambda w: tvmap(net, in_dims=(None, 0))(w, txs).sum())(tw).numpy(), rtol=1e-10)
    grid = np.stack([xs, 2 * xs])
    np.testing.assert_allclose(vmap(vmap(_net, in_axes=(None, 0)), in_axes=(None, 0))(w, grid),
                               tvmap(tvmap(net, in_dims=(None, 0)), in_dims=(None, 0))(tw, torch.tensor(grid)).numpy(),
                               rtol=1e-10)
    h = tvmap(lambda x: (thessian(lambda w: net(w, x))(tw).reshape(6, 6) @ tv.reshape(6)).reshape(3, 2))(txs)
    np.testing.assert_allclose(vmap(lambda x: hvp(lambda w: _net(w, x), w, v))(xs), h.numpy(), rtol=1e-10)
    t = tjvp(lambda w: tvmap(net, in_dims=(None, 0))(w, txs), (tw,), (tv,))[1]
    np.testing.assert_allclose(jvp(lambda w: vmap(_net, in_axes=(None, 0))(w, xs), (w,), (v,))[1], t.numpy(),
                               rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_example_gradients_of_an_mlp_match_torch_func(dtype):
    """vmap(grad(loss), in_axes=(None, 0, 0)) over a layers.MLP: the model's structure with a batch axis on
    every gradient leaf, equal to torch.func.vmap(grad) on the same weights (labels as a batched int index)."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    from torch.func import functional_call
    from torch.func import grad as tgrad
    from torch.func import vmap as tvmap

    from autodiff.nn import functional as F
    from layers import MLP

    model = MLP([5, 7, 3], activation=anp.tanh, seed=1, dtype=dtype)
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((6, 5)).astype(dtype), rng.integers(0, 3, 6)

    def loss(m, x, y):
        return -F.log_softmax(m(x))[y]

    got = vmap(grad(loss), in_axes=(None, 0, 0))(model, X, Y)
    first, last = model.layers[0], model.layers[2]
    tmodel = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).to(
        torch.float32 if dtype == np.float32 else torch.float64)
    params = {"0.weight": first.weight, "0.bias": first.bias, "2.weight": last.weight, "2.bias": last.bias}
    params = {k: torch.tensor(v) for k, v in params.items()}

    def tloss(p, x, y):
        return -torch.gather(torch.log_softmax(functional_call(tmodel, p, (x,)), -1), 0, y[None])[0]

    want = tvmap(tgrad(tloss), in_dims=(None, 0, 0))(params, torch.tensor(X), torch.tensor(Y))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for (layer, name), key in zip([(0, "weight"), (0, "bias"), (2, "weight"), (2, "bias")], params):
        g = getattr(got.layers[layer], name)
        assert g.shape == (6,) + getattr(model.layers[layer], name).shape and g.dtype == dtype
        np.testing.assert_allclose(g, want[key].numpy(), rtol=tol, atol=tol)
    assert got.layers[1] is None  # the activation: nothing to differentiate


def test_per_example_gradients_of_a_small_convnet_match_torch_func():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    from torch.func import grad as tgrad
    from torch.func import vmap as tvmap

    from layers import Conv2d

    rng = np.random.default_rng(4)
    w, b = rng.standard_normal((4, 2, 3, 3)) * 0.3, rng.standard_normal(4) * 0.1
    head = rng.standard_normal((3, 4 * 3 * 3)) * 0.2
    X = rng.standard_normal((5, 2, 6, 6))

    def loss(params, x):  # one image (C, H, W): a batch of one inside
        y = anp.tanh(Conv2d(params["w"], params["b"], 2, 1)(x[None]))
        return anp.sum(anp.sin(anp.reshape(y, (-1,)) @ head.T))

    def tloss(params, x):
        y = torch.tanh(torch.nn.functional.conv2d(x[None], params["w"], params["b"], stride=2, padding=1))
        return torch.sum(torch.sin(y.reshape(-1) @ torch.tensor(head).T))

    got = vmap(grad(loss), in_axes=(None, 0))({"w": w, "b": b}, X)
    want = tvmap(tgrad(tloss), in_dims=(None, 0))({"w": torch.tensor(w), "b": torch.tensor(b)}, torch.tensor(X))
    for k in ("w", "b"):
        np.testing.assert_allclose(got[k], want[k].numpy(), rtol=1e-10, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)  # conv2d, im2col and col2im batch: no loop
        vmap(grad(loss), in_axes=(None, 0))({"w": w, "b": b}, X)


# --- in_axes, out_axes, sizes, and the errors -------------------------------------------------------------


def test_structured_in_axes_and_out_axes():
    params = {"w": np.arange(6.0).reshape(2, 3), "b": np.ones(3)}
    xs = np.arange(8.0).reshape(4, 2)

    def f(p, x):
        return {"y": anp.dot(x, p["w"]) + p["b"], "n": anp.sum(x)}

    got = vmap(f, in_axes=({"w": None, "b": None}, 0), out_axes={"y": 1, "n": 0})(params, xs)
    want = [f(params, x) for x in xs]
    np.testing.assert_allclose(got["y"], np.stack([w["y"] for w in want], axis=1))
    np.testing.assert_allclose(got["n"], [w["n"] for w in want])
    batched_b = vmap(f, in_axes=({"w": None, "b": 0}, 0))(dict(params, b=np.ones((4, 3))), xs)
    np.testing.assert_allclose(batched_b["y"], np.stack([w["y"] for w in want]))
    np.testing.assert_allclose(vmap(lambda x: x * 2.0, in_axes=-1)(xs.T.copy()), xs * 2.0)


def test_an_unbatched_output_is_broadcast_and_axis_size_sets_the_size():
    np.testing.assert_array_equal(vmap(lambda x: 1.0, in_axes=None, axis_size=3)(np.ones(2)), np.ones(3))
    out = vmap(lambda x, c: (x * 2.0, c), in_axes=(0, None), out_axes=(0, None))(np.arange(3.0), np.ones(2))
    np.testing.assert_array_equal(out[0], [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(out[1], np.ones(2))


def test_the_shape_seen_inside_is_one_examples():
    seen = []
    vmap(lambda x: seen.append((x.shape, np.shape(x), len(x), x.ndim)) or x, in_axes=1)(np.ones((3, 5, 2)))
    assert seen == [((3, 2), (3, 2), 3, 2)]


def test_a_branch_on_a_batched_value_says_what_to_do():
    with pytest.raises(TypeError, match=r"bool\(\) of a value batched by vmap.*anp.where"):
        vmap(lambda x: x if x > 0 else -x)(np.arange(3.0))
    np.testing.assert_array_equal(vmap(lambda x: anp.where(x > 1, x, -x))(np.arange(3.0)), [0.0, -1.0, 2.0])


@pytest.mark.parametrize("call, message", [
    (lambda: vmap(lambda x, y: x + y)(np.ones(3), np.ones(4)),
     r"vmap: batch sizes differ: the leaf at arg 0 has 3 .* arg 1 has 4"),
    (lambda: vmap(lambda x, y: x + y, in_axes=(0,))(np.ones(3), np.ones(3)),
     r"vmap: in_axes must be .* one entry per positional argument; got a tuple of length 1 for 2"),
    (lambda: vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": np.ones(3)}),
     r"vmap: in_axes does not mirror the arguments: nothing in it covers the leaf at arg 0: \['a'\]"),
    (lambda: vmap(lambda x: x, in_axes=2)(np.ones((3, 2))),
     r"vmap: in_axes gives the array at arg 0 \(shape \(3, 2\)\) the batch axis 2"),
    (lambda: vmap(lambda x: x, in_axes=0)(2.0), r"vmap: in_axes gives the scalar at arg 0 the batch axis 0"),
    (lambda: vmap(lambda x: x, in_axes=None)(np.ones(2)), r"vmap: no argument is batched .* axis_size"),
    (lambda: vmap(lambda x: x, out_axes=None)(np.ones(2)), r"vmap: out_axes is None at output, but"),
    (lambda: vmap(lambda x: x, in_axes="0")(np.ones(2)), r"vmap: in_axes must be an int, None"),
    (lambda: vmap(lambda x: x, axis_size=3)(np.ones(2)), r"vmap: axis_size=3 but the batched arguments have 2"),
    (lambda: vmap(lambda x, s=1.0: x * s)(np.ones(2), s=2.0),
     r"vmap: keyword arguments are mapped along axis 0 .* the scalar at keyword argument s the batch axis 0"),
])
def test_errors_name_vmap_the_place_and_the_fix(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_a_batched_value_that_escapes_is_refused():
    kept = []
    vmap(lambda x: kept.append(x) or x)(np.ones(3))
    with pytest.raises(RuntimeError, match=r"vmap: sin got a batched value from a vmap .* already returned"):
        anp.sin(kept[0])


# --- jacobian: one batched pullback over the identity's rows ------------------------------------------------


def test_a_jacobian_of_1000_outputs_takes_one_batched_backward_pass():
    probe, passes = pullback_counter("probe_jacobian_1000")  # each backward pass reaching the input runs it once
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((1000, 5)), rng.standard_normal(5)
    f = lambda x: anp.tanh(w @ probe(x)) * anp.sum(x)  # noqa: E731
    jac = autodiff.jacobian(f)(x)
    assert len(passes) == 1  # not 1000
    np.testing.assert_allclose(jac, autodiff.jacfwd(f)(x), rtol=1e-10, atol=1e-12)
    passes.clear()
    np.testing.assert_allclose(autodiff.jacobian(f, chunk_size=300)(x), jac, rtol=1e-12)
    assert len(passes) == 4  # ceil(1000 / 300) chunks, each one batched pass


def _float_leaves(m):
    return [leaf for _, leaf in leaves(m)
            if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "fc"]


@pytest.mark.parametrize("name", ["tied", "tied_layer", "partly_trainable", "functions_and_ints", "float32",
                                  "complex", "nested", "tied_into_non_trainable", "views_of_one_buffer"])
def test_per_example_gradients_over_the_gallery_models(name):
    """vmap(grad) with the model shared (in_axes None) and the data batched: the loop's structure and values
    (ties at first occurrences), and no primitive falls back to the loop (warnings as errors)."""
    from tests.gallery import gallery

    model = gallery()[name]
    xs = np.linspace(-1.0, 1.0, 4)

    def loss(m, x):
        return sum(anp.sum(anp.real(anp.sin(leaf) * x) ** 2) for leaf in _float_leaves(m))

    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)
        got = vmap(grad(loss), in_axes=(None, 0))(model, xs)
    per = [grad(loss)(model, x) for x in xs]
    got_leaves, per_leaves = _leaf_list(got), [_leaf_list(p) for p in per]
    assert [p for p, _ in got_leaves] == [p for p, _ in per_leaves[0]]
    for k, (_, g) in enumerate(got_leaves):
        want = [pl[k][1] for pl in per_leaves]
        if want[0] is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, np.stack(want), rtol=1e-5)


def _leaf_list(tree):
    return leaves(tree)


def test_jacfwd_runs_the_function_once_with_a_batched_pushforward():
    calls = []
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 40))

    def f(x):
        calls.append(1)
        return anp.sin(w @ x) * anp.sum(x)

    x = rng.standard_normal(40)
    jac = autodiff.jacfwd(f)(x)
    assert len(calls) == 2  # the primal once, then one pushforward batched over the 40 basis directions
    np.testing.assert_allclose(jac, autodiff.jacobian(f)(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(autodiff.hessian(lambda x: anp.sum(f(x)))(x),
                               autodiff.jacobian(autodiff.grad(lambda x: anp.sum(f(x))))(x), rtol=1e-9, atol=1e-10)
