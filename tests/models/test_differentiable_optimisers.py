"""Differentiating through ``optimisers.update`` (issue 20): MAML with ``setup(rule, m)`` and ``update`` in
the inner loop gives torch's meta-gradient (Descent, and Adam against a functional torch Adam written here);
every rule differentiates with respect to the gradients, the state and the model; a 0-d parameter keeps
training under a derivative; MAML with ClipNorm runs under vmap over tasks; the traced path gives the plain
path's values and mutates nothing a tape saved."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, vmap
from autodiff.extend import value_of
from layers import MLP
from layers.losses import mse
from optimisers import (
    Adam,
    AdamW,
    ClipGrad,
    ClipNorm,
    Descent,
    Leaf,
    Momentum,
    Nesterov,
    OptimiserChain,
    SignDecay,
    WeightDecay,
    setup,
    update,
)
from traversal import trainables

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

INNER_STEPS, INNER_LR = 5, 0.05
ADAM = dict(lr=0.02, beta1=0.8, beta2=0.95, eps=1e-6)


def _task(seed=0):
    r = np.random.default_rng(seed)
    xs, xq = r.uniform(-2, 2, (2, 6, 2))
    return (xs, np.sin(xs.sum(1, keepdims=True))), (xq, np.sin(xq.sum(1, keepdims=True)))


def _meta_loss(rule):
    """MAML: ``INNER_STEPS`` steps of ``rule`` on the support set through ``setup`` and ``update``, then the
    query loss of the adapted model."""

    def meta_loss(model, task):
        (xs, ys), (xq, yq) = task
        state = setup(rule, model)
        for _ in range(INNER_STEPS):
            state, model = update(state, model, grad(lambda m: mse(m(xs), ys))(model))
        return mse(model(xq), yq)

    return meta_loss


def _torch_net(ps, x):
    h = torch.tensor(x)
    for k in range(0, len(ps), 2):
        h = h @ ps[k].T + ps[k + 1]
        if k < len(ps) - 2:
            h = torch.tanh(h)
    return h


def _torch_descent(params, grads, state, t):
    return [p - INNER_LR * g for p, g in zip(params, grads)], state


def _torch_adam(params, grads, state, t):
    """torch.optim.Adam's step written functionally, so create_graph=True differentiates through it."""
    b1, b2 = ADAM["beta1"], ADAM["beta2"]
    ms = [b1 * m + (1 - b1) * g for m, g in zip(state[0], grads)]
    vs = [b2 * v + (1 - b2) * g * g for v, g in zip(state[1], grads)]
    new = [p - ADAM["lr"] * (m / (1 - b1 ** t)) / (torch.sqrt(v / (1 - b2 ** t)) + ADAM["eps"])
           for p, m, v in zip(params, ms, vs)]
    return new, (ms, vs)


def _torch_meta_gradient(model, task, step):
    (xs, ys), (xq, yq) = task
    params = [torch.tensor(p, requires_grad=True) for p in trainables(model)]
    adapted, state = params, ([torch.zeros_like(p) for p in params], [torch.zeros_like(p) for p in params])
    for t in range(1, INNER_STEPS + 1):
        inner = ((_torch_net(adapted, xs) - torch.tensor(ys)) ** 2).mean()
        grads = torch.autograd.grad(inner, adapted, create_graph=True)
        adapted, state = step(adapted, grads, state, t)
    outer = ((_torch_net(adapted, xq) - torch.tensor(yq)) ** 2).mean()
    return [g.numpy() for g in torch.autograd.grad(outer, params)]


@pytest.mark.parametrize("rule,step", [(Descent(INNER_LR), _torch_descent), (Adam(**ADAM), _torch_adam)],
                         ids=["Descent", "Adam"])
def test_maml_through_update_gives_torchs_meta_gradient(rule, step):
    model, task = MLP([2, 8, 1], dtype=np.float64, seed=1), _task()
    ours = trainables(grad(_meta_loss(rule))(model, task))
    theirs = _torch_meta_gradient(model, task, step)
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rule", [Descent(INNER_LR), Adam(**ADAM)], ids=["Descent", "Adam"])
def test_maml_meta_loss_passes_gradcheck(rule):
    model, task = MLP([2, 4, 1], dtype=np.float64, seed=2), _task(1)
    assert gradcheck(lambda m: _meta_loss(rule)(m, task), model)


OMEGA = 1.5


def _torch_clip_descent(params, grads, state, t):
    """ClipNorm(OMEGA) then Descent, written functionally (torch's clip_grad_norm_ works in place)."""
    norm = torch.sqrt(sum((g * g).sum() for g in grads))
    factor = torch.clamp(OMEGA / (norm + 1e-6), max=1.0)
    return [p - INNER_LR * factor * g for p, g in zip(params, grads)], state


def test_maml_with_clip_norm_under_vmap_over_tasks_gives_torchs_meta_gradient():
    """The meta-gradient of the summed meta-loss of three tasks, batched by vmap (ClipNorm's factor then
    differs per task, so it cannot branch in Python), against torch task by task."""
    model, tasks = MLP([2, 8, 1], dtype=np.float64, seed=1), [_task(seed) for seed in range(3)]
    stacked = tuple(tuple(np.stack([t[i][j] for t in tasks]) for j in range(2)) for i in range(2))
    meta_loss = _meta_loss(OptimiserChain(ClipNorm(OMEGA), Descent(INNER_LR)))
    ours = trainables(grad(lambda m: anp.sum(vmap(lambda task: meta_loss(m, task))(stacked)))(model))
    per_task = [_torch_meta_gradient(model, task, _torch_clip_descent) for task in tasks]
    for a, *bs in zip(ours, *per_task):
        np.testing.assert_allclose(a, sum(bs), rtol=1e-9, atol=1e-12)


def _scalar_meta_loss(rule):
    """MAML on ``{"a": 0-d array, "w": vector}``: the 0-d ``a`` must keep being stepped when traced."""

    def meta_loss(model, task):
        (xs, ys), (xq, yq) = task
        loss = lambda m, x, y: anp.mean((m["a"] * anp.tanh(x @ m["w"]) - y[:, 0]) ** 2)  # noqa: E731
        state = setup(rule, model)
        for _ in range(INNER_STEPS):
            state, model = update(state, model, grad(loss)(model, xs, ys))
        assert isinstance(value_of(model["a"]), np.ndarray)
        return loss(model, xq, yq)

    return meta_loss


def _torch_scalar_meta_gradient(model, task, step):
    (xs, ys), (xq, yq) = task
    loss = lambda ps, x, y: ((ps[0] * torch.tanh(torch.tensor(x) @ ps[1]) - torch.tensor(y[:, 0])) ** 2).mean()  # noqa: E731
    params = [torch.tensor(model[k], requires_grad=True) for k in ("a", "w")]
    adapted, state = params, ([torch.zeros_like(p) for p in params], [torch.zeros_like(p) for p in params])
    for t in range(1, INNER_STEPS + 1):
        adapted, state = step(adapted, torch.autograd.grad(loss(adapted, xs, ys), adapted, create_graph=True), state, t)
    return [g.numpy() for g in torch.autograd.grad(loss(adapted, xq, yq), params)]


@pytest.mark.parametrize("rule,step", [(Descent(INNER_LR), _torch_descent), (Adam(**ADAM), _torch_adam)],
                         ids=["Descent", "Adam"])
def test_zero_dim_parameter_trains_under_a_derivative_like_torch(rule, step):
    model, task = {"a": np.array(0.8), "w": np.array([0.5, -0.3])}, _task(2)
    ours = grad(_scalar_meta_loss(rule))(model, task)
    theirs = _torch_scalar_meta_gradient(model, task, step)
    for k, b in zip(("a", "w"), theirs):
        np.testing.assert_allclose(ours[k], b, rtol=1e-9, atol=1e-12)
    assert gradcheck(lambda m: _scalar_meta_loss(rule)(m, task), model)


def test_maml_meta_loss_value_equals_the_plain_inner_loop():
    model, task = MLP([2, 8, 1], dtype=np.float64, seed=1), _task()
    value, _ = autodiff.value_and_grad(_meta_loss(Adam(**ADAM)))(model, task)
    assert value == _meta_loss(Adam(**ADAM))(model, task)


# --- Every rule, traced in its gradients, its state and its model ---------------------------------------------

RULES = {
    "Descent": Descent(0.1), "Momentum": Momentum(0.1, 0.8), "Nesterov": Nesterov(0.1, 0.7),
    "Adam": Adam(0.05, 0.8, 0.9, 1e-3), "AdamW": AdamW(0.05, 0.8, 0.9, 1e-3, 0.1),
    "WeightDecay": OptimiserChain(WeightDecay(0.2), Descent(0.1)),
    "SignDecay": OptimiserChain(SignDecay(0.1), Descent(0.1)),
    "ClipGrad": OptimiserChain(ClipGrad(0.7), Descent(0.1)),
    "ClipNorm clipping": OptimiserChain(ClipNorm(1.0), Momentum(0.1, 0.8)),
    "ClipNorm not clipping": OptimiserChain(ClipNorm(100.0), Descent(0.1)),
    "chain": OptimiserChain(WeightDecay(0.01), ClipGrad(0.7), Adam(0.05, 0.8, 0.9, 1e-3)),
    "nested chain": OptimiserChain(OptimiserChain(WeightDecay(0.01)), OptimiserChain(ClipNorm(1.0), Momentum(0.1))),
}

r = np.random.default_rng(5)
MODEL = {"w": r.standard_normal((3, 2)), "b": r.standard_normal(2)}
GRADS = [{"w": r.standard_normal((3, 2)), "b": r.standard_normal(2)} for _ in range(2)]


def _state_arrays(state):
    """The arrays inside each Leaf's state, in order (a chain's and Adam's states are tuples)."""
    out, stack = [], [leaf.state for leaf in (state["w"], state["b"])][::-1]
    while stack:
        s = stack.pop()
        if isinstance(s, tuple):
            stack.extend(reversed(s))
        elif isinstance(value_of(s), np.ndarray):
            out.append(s)
    return out


def _with_state_arrays(state, arrays):
    it = iter(arrays)

    def fill(s):
        if isinstance(s, tuple):
            return tuple(fill(x) for x in s)
        return next(it) if isinstance(value_of(s), np.ndarray) else s

    return {k: Leaf(leaf.rule, fill(leaf.state)) for k, leaf in state.items()}


def _warm_state(rule):
    """The state after one plain step, so moments are nonzero."""
    state = setup(rule, MODEL)
    return update(state, MODEL, GRADS[0])[0]


def _step(rule):
    """(model, grads, state arrays) -> the new model's and state's arrays, for gradcheck."""
    base = _warm_state(rule)

    def f(model, grads, arrays):
        state, model = update(_with_state_arrays(base, arrays), model, grads)
        return [model["w"], model["b"]] + _state_arrays(state)

    return f, base


def _cases():
    """Every rule traced in everything, in its model alone, its gradients alone, and its state alone (when
    it keeps one: Descent, WeightDecay, SignDecay and ClipGrad keep none)."""
    for name, rule in RULES.items():
        yield from ((name, traced) for traced in ("all", "model", "grads"))
        if _state_arrays(_warm_state(rule)):
            yield name, "state"


@pytest.mark.parametrize("name,traced", list(_cases()))
def test_rule_differentiates_in_gradients_state_and_model(name, traced):
    f, base = _step(RULES[name])
    args = [MODEL, GRADS[1], [a.copy() for a in _state_arrays(base)]]
    if traced == "all":
        assert gradcheck(f, *args)
        return
    k = ["model", "grads", "state"].index(traced)
    assert gradcheck(lambda a: f(*args[:k], a, *args[k + 1:]), args[k])


@pytest.mark.parametrize("name", RULES)
def test_rule_traced_gives_the_plain_values(name):
    f, base = _step(RULES[name])
    arrays = [a.copy() for a in _state_arrays(base)]
    plain = f(MODEL, GRADS[1], arrays)
    traced, _ = autodiff.vjp(f, MODEL, GRADS[1], arrays)
    assert len(plain) == len(traced)
    for p, t in zip(plain, traced):
        assert type(p) is np.ndarray and p.dtype == t.dtype
        np.testing.assert_array_equal(p, t)


@pytest.mark.parametrize("name", ["Adam", "ClipNorm clipping", "chain"])
def test_float32_model_stays_float32_when_traced(name):
    model = {k: v.astype(np.float32) for k, v in MODEL.items()}
    grads = {k: v.astype(np.float64) for k, v in GRADS[1].items()}  # float64 gradients are cast, as when plain

    def stepped(model, grads):
        return update(setup(RULES[name], model), model, grads)[1]

    def f(model, grads):
        new = stepped(model, grads)
        return anp.sum(new["w"] ** 2) + anp.sum(new["b"] ** 2)

    traced, _ = autodiff.vjp(stepped, model, grads)
    assert traced["w"].dtype == traced["b"].dtype == np.float32
    g = grad(f, argnums=(0, 1))(model, grads)
    assert g[0]["w"].dtype == np.float32 and g[1]["w"].dtype == np.float64
    assert gradcheck(f, model, grads)


def test_traced_gradient_of_the_wrong_shape_is_refused_by_name():
    def f(w):
        return update(setup(Descent(), {"w": w}), {"w": w}, {"w": w[:2]})[1]["w"]

    with pytest.raises(ValueError, match=r"optimisers.update: the gradient at .*w.* has shape \(2,\)"):
        grad(lambda w: anp.sum(f(w)))(np.ones(3))


# --- Mutation: nothing a tape saved is written (design.md sections 3, 8, 10) ----------------------------------


def test_plain_update_writes_into_nothing_it_was_given():
    model = {k: v.copy() for k, v in MODEL.items()}
    state = _warm_state(RULES["chain"])
    before = [a.copy() for a in _state_arrays(state)] + [model["w"].copy(), model["b"].copy()]
    new_state, new_model = update(state, model, GRADS[1])
    after = _state_arrays(state) + [model["w"], model["b"]]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert all(new_model[k] is not model[k] for k in model)
    assert all(x is not y for x, y in zip(_state_arrays(new_state), _state_arrays(state)))


def test_plain_update_while_a_live_pullback_reads_the_model():
    """The pullback's tape holds the model's arrays read-only; a plain step beside it must neither write
    into them nor change the gradient the pullback gives afterwards."""
    model = {k: v.copy() for k, v in MODEL.items()}
    loss = lambda m: anp.sum(anp.sin(m["w"]) @ m["b"])  # noqa: E731
    expected = grad(loss)(model)
    state = _warm_state(RULES["Momentum"])
    _, pullback = autodiff.vjp(loss, model)
    state, stepped = update(state, model, GRADS[1])
    (g,) = pullback(1.0)
    for k in model:
        np.testing.assert_array_equal(g[k], expected[k])
    assert not np.array_equal(stepped["w"], model["w"])


def test_traced_update_leaves_the_outer_model_and_state_alone_and_writable():
    model = {k: v.copy() for k, v in MODEL.items()}
    state = _warm_state(RULES["Adam"])
    before = [a.copy() for a in _state_arrays(state)] + [model["w"].copy(), model["b"].copy()]

    def unrolled(model):
        s, m = state, model
        for g in GRADS:
            s, m = update(s, m, {k: v * m["b"][0] for k, v in g.items()})  # gradients that depend on the model
        return anp.sum(m["w"] ** 2) + anp.sum(s["w"].state[0] * s["w"].state[1])

    assert gradcheck(unrolled, model)
    arrays = _state_arrays(state) + [model["w"], model["b"]]
    for a, b in zip(before, arrays):
        np.testing.assert_array_equal(a, b)
        assert b.flags.writeable  # the tapes are done: writable again, as before
