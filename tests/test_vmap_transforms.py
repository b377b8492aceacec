"""vmap with the losses of ``layers.losses`` and with the Jacobian transforms (issue 21).

The losses take batched targets under ``vmap`` (per-example gradients of a ``layers.MLP`` through each of
them equal a loop of ``grad`` and torch.func's ``vmap(grad)``) and keep their plain values and gradients
(torch's losses).  ``jacrev``/``jacfwd``/``hessian`` under ``vmap`` build their basis from one example's
shape, and ``jacrev(vmap(f))`` is the block-diagonal Jacobian: each against a loop and torch.func.
"""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hessian, jacfwd, jacrev, vmap
from autodiff._traced import value_of
from autodiff.extend import BatchingWarning
from layers import MLP
from layers.losses import binary_cross_entropy_with_logits, mse, softmax_cross_entropy

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
functional_call, tgrad, thessian = torch.func.functional_call, torch.func.grad, torch.func.hessian
tjacfwd, tjacrev, tvmap = torch.func.jacfwd, torch.func.jacrev, torch.func.vmap

N, SIZES = 6, [5, 7, 3]
TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6)}
TORCH_DTYPE = {np.float64: torch.float64, np.float32: torch.float32}


def _data(dtype, seed=0):
    """Inputs, and targets for each loss: integer labels, float targets, and 0/1 targets."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, SIZES[0])).astype(dtype)
    return x, {
        "softmax_cross_entropy": rng.integers(0, SIZES[-1], N),
        "mse": rng.standard_normal((N, SIZES[-1])).astype(dtype),
        "binary_cross_entropy_with_logits": (rng.random((N, SIZES[-1])) > 0.5).astype(dtype),
    }


OURS = {"softmax_cross_entropy": softmax_cross_entropy, "mse": mse,
        "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits}
THEIRS = {"softmax_cross_entropy": lambda z, y: torch.nn.functional.cross_entropy(z, y),
          "mse": lambda z, y: torch.nn.functional.mse_loss(z, y),
          "binary_cross_entropy_with_logits": lambda z, y: torch.nn.functional.binary_cross_entropy_with_logits(z, y)}


def _torch_mlp(model, dtype):
    """torch's Sequential with ``model``'s weights, and its parameters as a dict for functional_call."""
    first, last = model.layers[0], model.layers[2]
    net = torch.nn.Sequential(torch.nn.Linear(*first.weight.shape[::-1]), torch.nn.Tanh(),
                              torch.nn.Linear(*last.weight.shape[::-1])).to(TORCH_DTYPE[dtype])
    params = {"0.weight": first.weight, "0.bias": first.bias, "2.weight": last.weight, "2.bias": last.bias}
    return net, {k: torch.tensor(v) for k, v in params.items()}


def _gradient_leaves(g):
    return [g.layers[0].weight, g.layers[0].bias, g.layers[2].weight, g.layers[2].bias]


# --- losses under vmap -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(OURS))
def test_per_example_gradients_through_each_loss_with_batched_targets(name, dtype):
    """The issue's call, ``vmap(grad(lambda m, x, y: loss(m(x[None]), y[None])), in_axes=(None, 0, 0))``: a loop
    of grads, and torch.func.vmap(grad) of torch's loss on the same weights; no primitive falls back to a loop."""
    model = MLP(SIZES, seed=3, dtype=dtype)
    x, targets = _data(dtype)
    y, loss = targets[name], OURS[name]

    def per_example(m, x, y):
        return loss(m(x[None]), y[None])

    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)
        got = vmap(grad(per_example), in_axes=(None, 0, 0))(model, x, y)
    loop = [grad(per_example)(model, x[i], y[i]) for i in range(N)]
    net, params = _torch_mlp(model, dtype)
    theirs = THEIRS[name]
    want = tvmap(tgrad(lambda p, x, y: theirs(functional_call(net, p, (x[None],)), y[None])),
                 in_dims=(None, 0, 0))(params, torch.tensor(x), torch.tensor(y))
    for k, (g, key) in enumerate(zip(_gradient_leaves(got), params)):
        assert g.dtype == dtype and g.shape == (N,) + params[key].shape
        np.testing.assert_allclose(g, np.stack([_gradient_leaves(p)[k] for p in loop]), **TOL[dtype])
        np.testing.assert_allclose(g, want[key].numpy(), **TOL[dtype])


@pytest.mark.parametrize("name", list(OURS))
def test_each_loss_of_one_example_without_a_batch_of_one(name):
    """Under vmap a loss may take one example's logits (``(classes,)``) and target (a label, or ``(classes,)``)."""
    model = MLP(SIZES, seed=4, dtype=np.float64)
    x, targets = _data(np.float64, seed=1)
    y, loss = targets[name], OURS[name]
    got = vmap(grad(lambda m, x, y: loss(m(x), y)), in_axes=(None, 0, 0))(model, x, y)
    loop = [grad(lambda m, x, y: loss(m(x[None]), y[None]))(model, x[i], y[i]) for i in range(N)]
    for k, g in enumerate(_gradient_leaves(got)):
        np.testing.assert_allclose(g, np.stack([_gradient_leaves(p)[k] for p in loop]), **TOL[np.float64])


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None)])
@pytest.mark.parametrize("name", list(OURS))
def test_loss_values_and_their_gradients_under_vmap_for_every_batching_mix(name, in_axes):
    """Logits and targets batched together, only the targets, only the logits: the per-example values equal a
    loop of torch's losses, and the gradient of their sum with respect to the logits equals torch's."""
    rng = np.random.default_rng(2)
    z = rng.standard_normal((N, 4, SIZES[-1])) * 3
    y = _data(np.float64, seed=2)[1][name]
    y = np.stack([y[:4]] * N) if name != "softmax_cross_entropy" else rng.integers(0, SIZES[-1], (N, 4))
    args = [z if in_axes[0] == 0 else z[0], y if in_axes[1] == 0 else y[0]]
    pick = [(lambda a, i: a[i]) if ax == 0 else (lambda a, i: a) for ax in in_axes]
    loss, theirs = OURS[name], THEIRS[name]
    got = vmap(loss, in_axes=in_axes)(*args)
    tz = torch.tensor(args[0], requires_grad=True)
    want = torch.stack([theirs(pick[0](tz, i), torch.tensor(pick[1](args[1], i))) for i in range(N)])
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-12)
    gz = grad(lambda z: anp.sum(vmap(loss, in_axes=in_axes)(z, args[1]) ** 2))(args[0])
    (want ** 2).sum().backward()
    np.testing.assert_allclose(gz, tz.grad.numpy(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", list(OURS))
def test_per_example_hessians_of_each_loss_match_torch_func(name):
    """Second order under vmap: vmap(hessian) of each loss in the logits, against torch.func.vmap(hessian)."""
    rng = np.random.default_rng(5)
    z = rng.standard_normal((N, 2, SIZES[-1]))
    y = _data(np.float64, seed=5)[1][name]
    y = rng.integers(0, SIZES[-1], (N, 2)) if name == "softmax_cross_entropy" else np.stack([y[:2]] * N)
    loss, theirs = OURS[name], THEIRS[name]
    got = vmap(hessian(loss))(z, y)
    want = tvmap(thessian(theirs))(torch.tensor(z), torch.tensor(y))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(got, np.stack([hessian(loss)(z[i], y[i]) for i in range(N)]), rtol=1e-12)


# --- the losses in plain use -------------------------------------------------------------------------------


@pytest.mark.parametrize("labels", [np.array([2, 0, 1, 1]), [2, 0, 1, 1], np.array(1)])
def test_softmax_cross_entropy_in_plain_use_matches_torch(labels):
    """A batch of labels (an array or a list) or one example's label: torch's value and gradient, and second
    order by finite differences."""
    z = np.random.default_rng(6).standard_normal((4, 3) if np.ndim(labels) else (3,)) * 20
    tz = torch.tensor(z, requires_grad=True)
    value = torch.nn.functional.cross_entropy(tz, torch.tensor(labels))
    value.backward()
    np.testing.assert_allclose(softmax_cross_entropy(z, labels), value.item(), rtol=1e-12)
    np.testing.assert_allclose(grad(softmax_cross_entropy)(z, labels), tz.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert autodiff.gradcheck(lambda z: softmax_cross_entropy(z, labels), z / 20, order=2)


@pytest.mark.parametrize("labels, message", [
    (np.array([0.0, 1.0, 1.0]), "integer labels of shape"),
    (np.eye(3, 2, dtype=int), "integer labels of shape"),
    (np.array([0, 1]), "logits.shape[:-1] = (3,)"),
    (np.array([0, 2, 1]), "must lie in [0, 2)"),
    (np.array([0, -1, 1]), "must lie in [0, 2)"),
])
def test_softmax_cross_entropy_refuses_bad_labels_naming_itself(labels, message):
    with pytest.raises(ValueError, match="softmax_cross_entropy") as err:
        softmax_cross_entropy(np.zeros((3, 2)), labels)
    assert message in str(err.value)


@pytest.mark.parametrize("labels", [np.array([[0, 2, 1]] * 2), np.array([[0, -1, 1], [0, 1, 1]])])
def test_softmax_cross_entropy_refuses_out_of_range_labels_under_vmap_too(labels):
    """Batched labels are checked too: an out-of-range one picks no class, which read as a loss of 0."""
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: labels must lie in \[0, 2\)"):
        vmap(softmax_cross_entropy)(np.zeros((2, 3, 2)), labels)
    with pytest.raises(ValueError, match=r"must lie in \[0, 2\)"):
        vmap(softmax_cross_entropy, in_axes=(None, 0))(np.zeros((3, 2)), labels)


# --- jacobians under vmap, and of vmap ---------------------------------------------------------------------


def _jacobian_case(dtype):
    model = MLP(SIZES, seed=7, dtype=dtype)
    net, params = _torch_mlp(model, dtype)
    x = np.random.default_rng(8).standard_normal((N, SIZES[0])).astype(dtype)
    return model, (lambda x: functional_call(net, params, (x,))), x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ours, theirs", [(jacrev, tjacrev), (jacfwd, tjacfwd)], ids=["jacrev", "jacfwd"])
def test_per_example_jacobians_of_an_mlp(ours, theirs, dtype):
    """vmap(jacrev(f)) and vmap(jacfwd(f)) of the logits in the input: (N, 3, 5), a loop and torch.func."""
    model, tf, x = _jacobian_case(dtype)
    got = vmap(ours(model))(x)
    assert got.shape == (N, SIZES[-1], SIZES[0]) and got.dtype == dtype
    np.testing.assert_allclose(got, np.stack([ours(model)(xi) for xi in x]), **TOL[dtype])
    np.testing.assert_allclose(got, tvmap(theirs(tf))(torch.tensor(x)).numpy(), **TOL[dtype])


def test_a_jacobian_under_vmap_is_one_batched_backward_pass(monkeypatch):
    """The basis has one example's shape and the rows are pulled back together: one backward pass for the
    whole batch of Jacobians, not one per row and not a fallback to a loop."""
    from autodiff._hooks import hooks

    passes = []
    real = hooks.backward
    monkeypatch.setattr(hooks, "backward", lambda tape, seeds, **kw: passes.append(1) or real(tape, seeds, **kw))
    model, _, x = _jacobian_case(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchingWarning)
        vmap(jacrev(model))(x)
    assert len(passes) == 1


def test_per_example_hessians_match_a_loop_and_torch_func():
    model, tf, x = _jacobian_case(np.float64)
    got = vmap(hessian(lambda x: anp.sum(anp.sin(model(x)))))(x)
    assert got.shape == (N, SIZES[0], SIZES[0])
    np.testing.assert_allclose(got, np.stack([hessian(lambda x: anp.sum(anp.sin(model(x))))(xi) for xi in x]),
                               rtol=1e-10, atol=1e-13)
    want = tvmap(thessian(lambda x: torch.sum(torch.sin(tf(x)))))(torch.tensor(x))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("ours, theirs", [(jacrev, tjacrev), (jacfwd, tjacfwd)], ids=["jacrev", "jacfwd"])
def test_the_jacobian_of_a_vmapped_function_is_block_diagonal(ours, theirs):
    """jacrev(vmap(f)) (and jacfwd): (N, 3, N, 5), f's Jacobian at example i in block (i, i), zero elsewhere;
    torch.func's jacrev(vmap(f)) agrees."""
    model, tf, x = _jacobian_case(np.float64)
    got = ours(vmap(model))(x)
    blocks = [jacrev(model)(xi) for xi in x]
    want = np.zeros((N, SIZES[-1], N, SIZES[0]))
    for i, b in enumerate(blocks):
        want[i, :, i] = b
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(got, theirs(tvmap(tf))(torch.tensor(x)).numpy(), rtol=1e-10, atol=1e-13)


def test_jacobians_under_vmap_with_chunks_axes_models_and_nesting():
    """chunk_size, a batch axis at 1, the model as the argument (in_axes None for it), vmap of vmap, and a
    gradient through vmap(jacrev) (a Jacobian penalty): each against loops or torch."""
    model, tf, x = _jacobian_case(np.float64)
    loop = np.stack([jacrev(model)(xi) for xi in x])
    tol = dict(rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(vmap(jacrev(model, chunk_size=2))(x), loop, **tol)
    np.testing.assert_allclose(vmap(jacrev(model), in_axes=1)(x.T), loop, **tol)
    np.testing.assert_allclose(vmap(vmap(jacrev(model)))(np.stack([x, 2 * x])),
                               np.stack([loop, [jacrev(model)(2 * xi) for xi in x]]), **tol)
    by_model = vmap(jacrev(lambda m, x: m(x)), in_axes=(None, 0))(model, x)
    for name in ("weight", "bias"):
        want = np.stack([getattr(jacrev(lambda m, x: m(x))(model, xi).layers[2], name) for xi in x])
        np.testing.assert_allclose(getattr(by_model.layers[2], name), want, **tol)
    penalty = grad(lambda x: anp.sum(vmap(jacrev(model))(x) ** 2))(x)
    tx = torch.tensor(x, requires_grad=True)
    (tvmap(tjacrev(tf))(tx) ** 2).sum().backward()
    np.testing.assert_allclose(penalty, tx.grad.numpy(), **tol)


# --- jacobian's one batched pass, counted on the trace (docs/vmap.md) --------------------------------------


@pytest.mark.parametrize("chunk_size, passes", [(None, 1), (300, 4)])
def test_a_jacobian_of_1000_outputs_runs_each_pullback_once_per_chunk(chunk_size, passes):
    """The trace of ``sum(jacobian(f)(x))``: f's tape has two entries, and the Jacobian's backward pass over it
    runs each entry's pullback once per chunk (a loop over the outputs would run each 1,000 times), each time
    with a batch of cotangents (the chunk's rows of the identity)."""
    w = np.random.default_rng(0).standard_normal((1000, 3))

    def f(x):
        return anp.tanh(w @ x)

    t = autodiff.trace(lambda x: anp.sum(jacrev(f, chunk_size=chunk_size)(x)), np.ones(3))
    inner = t.tapes[1]
    events = [e for e in t.events if e[0] is inner]
    assert len(inner.entries) == 3  # the input, matmul, tanh
    assert len(events) == 2 * passes
    rows = sorted({value_of(g).shape[0] for _, _, _, g, _ in events})  # the batch axis leads the value
    assert rows == sorted({1000 if chunk_size is None else n for n in (300, 100)})
    np.testing.assert_allclose(jacrev(f, chunk_size=chunk_size)(np.ones(3)),
                               jacfwd(f)(np.ones(3)), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("x_axes", [None, 0])
def test_an_integer_index_batched_by_two_vmaps(x_axes):
    """The inner vmap's gather once stripped the outer vmap's batch from the index: a silent extra axis."""
    rng = np.random.default_rng(8)
    xs, index = rng.standard_normal((2, 4, 3)), np.array([[0, 3], [2, 1]])
    x_of = (lambda a: xs[0]) if x_axes is None else (lambda a: xs[a])  # noqa: E731
    take = lambda x, i: anp.sum(anp.getitem(x, i) ** 2)  # noqa: E731
    outer_x = xs[0] if x_axes is None else xs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchingWarning)
        values = vmap(vmap(lambda x, i: anp.getitem(x, i), in_axes=(None, 0)), in_axes=(x_axes, 0))(outer_x, index)
        grads = vmap(vmap(grad(take), in_axes=(None, 0)), in_axes=(x_axes, 0))(outer_x, index)
    for a in range(2):
        for b in range(2):
            np.testing.assert_array_equal(values[a, b], x_of(a)[index[a, b]])
            np.testing.assert_allclose(grads[a, b], grad(take)(x_of(a), index[a, b]), rtol=1e-12)
