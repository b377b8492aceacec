"""``total`` on random tied models: value, gradient and Hessian-vector product against torch; jit and vmap too.

Each model is a random nest of dicts, lists, tuples and a layer whose ``trainable`` leaves out a field, holding
arrays drawn with replacement from a small pool (so one array sits at several positions, some of them not
trainable), integer arrays, ints, strings and ``None``; a sub-list may itself appear twice.  The oracle walks
the model on its own (depth first, fields in order, the layer's trainable fields only), keeps each array's
first trainable occurrence (design.md sections 3 and 7) and asks torch for ``f``'s value, gradient and
Hessian-vector product there.  Then ``total(f, model)`` must be their sum; ``grad`` of it must hold exactly those
gradients, in that order, and ``None`` everywhere else; its Hessian-vector product along a tangent built by
``fmap`` (which keeps the ties) torch's, laid out the same way.  ``jit(grad(...))`` and ``jit`` of the
Hessian-vector product, traced on the model and called on a model of new values with the same ties,
``grad(jit(total))`` and ``vmap(grad(...))`` over two such models must give eager's trees.
"""

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
import autodiff.numpy as anp
import traversal as tv
from tests.hypothesis_policy import DERANDOMIZE
from tests.trees import leaves

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")


@dataclasses.dataclass
class Norm:
    """A layer whose running statistics are not trainable (as BatchNorm's)."""

    gamma: object
    beta: object
    running_mean: object


@tv.trainable.register(Norm)
def _(layer):
    return ("gamma", "beta")


SHAPES = [(), (3,), (2, 3)]


def f(x):
    return anp.sum(anp.sin(x) * x)


def f_torch(x):
    return (torch.sin(x) * x).sum()


@st.composite
def models(draw):
    """``(model, rebuild)``: a random model over a pool of arrays, and a function that builds the same model
    (the same ties) over another pool."""
    shapes = draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=4))
    dtypes = draw(st.lists(st.sampled_from([np.float64, np.float32]), min_size=len(shapes), max_size=len(shapes)))
    leaf = st.one_of(st.tuples(st.just("array"), st.integers(0, len(shapes) - 1)),
                     st.tuples(st.sampled_from(["None", "int", "string", "int array"]), st.none()))
    node = st.recursive(leaf, lambda kids: st.one_of(
        st.tuples(st.just("dict"), st.dictionaries(st.sampled_from("abcd"), kids, min_size=1, max_size=3)),
        st.tuples(st.sampled_from(["list", "tuple"]), st.lists(kids, min_size=1, max_size=3)),
        st.tuples(st.just("norm"), st.lists(kids, min_size=3, max_size=3)),
        st.tuples(st.just("twice"), kids),
    ), max_leaves=10)
    plan = ("dict", {"model": draw(node)})  # grad takes a container (a bare None or string is refused)

    def build(pool):
        return _build(plan, pool)

    def pool(seed):
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes)]

    return build, pool


def _twice(kid):
    shared = [kid]
    return [shared, shared]  # one list object at two positions


BUILD = {  # tag -> (the node from its built payload); "array" takes the pool's array of that number
    "None": lambda _: None, "int": lambda _: 3, "string": lambda _: "relu", "int array": lambda _: np.arange(3),
    "dict": dict, "list": list, "tuple": tuple, "norm": lambda kids: Norm(*kids), "twice": _twice,
}


def _build(plan, pool):
    """The model ``plan`` (a ``(tag, payload)`` node) describes over ``pool``'s arrays (recursion: small trees)."""
    tag, payload = plan
    if tag == "array":
        return pool[payload]
    if type(payload) is dict:
        return BUILD[tag]({k: _build(v, pool) for k, v in payload.items()})
    if type(payload) is list:
        return BUILD[tag]([_build(v, pool) for v in payload])
    return BUILD[tag](None if payload is None else _build(payload, pool))


def _children(x, trainable):
    """``[(child, at a trainable position?)]`` of the model's node ``x``, in traversal order."""
    if isinstance(x, Norm):
        return [(x.gamma, trainable), (x.beta, trainable), (x.running_mean, False)]
    values = x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else ()
    return [(v, trainable) for v in values]


def _first_trainable(model):
    """The distinct float arrays at trainable positions, each at its first such occurrence, in traversal order."""
    found, seen, stack = [], set(), [(model, True)]
    while stack:
        x, trainable = stack.pop()
        if isinstance(x, np.ndarray) and trainable and x.dtype.kind == "f" and id(x) not in seen:
            seen.add(id(x))
            found.append(x)
        elif not isinstance(x, np.ndarray):
            stack.extend(reversed(_children(x, trainable)))  # depth first, children in order
    return found


def _oracle(model):
    """``(value, gradients)``: torch's ``f`` summed over the first trainable occurrences, and its gradients."""
    value, grads = 0.0, []
    for x in _first_trainable(model):
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        y = f_torch(t)
        y.backward()
        value += y.item()
        grads.append(t.grad.numpy())
    return value, grads


def _hvp_oracle(model):
    """torch's Hessian-vector product of ``f`` at each first trainable occurrence, along ``_direction``'s entry."""
    out = []
    for x in _first_trainable(model):
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(f_torch(t), t, create_graph=True)
        (hv,) = torch.autograd.grad((g * torch.tensor(_step(x), dtype=torch.float64)).sum(), t)
        out.append(hv.numpy())
    return out


def _step(x):
    return (x * 0.5 + 1.0).astype(x.dtype)


def _direction(model):
    """A tangent for ``model`` built by ``fmap``, which keeps its ties (design.md section 9)."""
    return tv.fmap(lambda x: _step(x) if tv.isnumeric(x) else x, model)


def _loss(model):
    return tv.total(f, model)


def _hvp(model, direction):
    return autodiff.hvp(_loss, (model,), (direction,))[0]


def _arrays(tree):
    return [leaf for _, leaf in leaves(tree) if isinstance(leaf, np.ndarray)]


def _close_in_order(got, want, model):
    """``got`` (a derivative's arrays in traversal order) is ``want``, one per distinct trainable array of ``model``,
    each of that array's shape and dtype."""
    assert len(got) == len(want), f"{len(got)} arrays in the derivative, {len(want)} distinct trainable arrays"
    for a, b, x in zip(got, want, _first_trainable(model)):
        assert a.dtype == x.dtype and a.shape == x.shape
        np.testing.assert_allclose(a, b, rtol=1e-5 if a.dtype == np.float32 else 1e-12, atol=1e-6)


def check(build, pool):
    model, other = build(pool(0)), build(pool(1))
    value, want = _oracle(model)
    assert np.isclose(float(_loss(model)), value, rtol=1e-6, atol=1e-6)
    g = autodiff.grad(_loss)(model)
    _close_in_order(_arrays(g), want, model)
    assert all(leaf is None or isinstance(leaf, np.ndarray) for _, leaf in leaves(g))
    _close_in_order(_arrays(_hvp(model, _direction(model))), _hvp_oracle(model), model)
    jitted, through = autodiff.jit(autodiff.grad(_loss)), autodiff.grad(autodiff.jit(_loss))
    jitted_hvp = autodiff.jit(_hvp)
    for m in (model, other, other):  # traced, then replayed twice
        eager = autodiff.grad(_loss)(m)
        tv.assert_tree_allclose(jitted(m), eager, rtol=1e-6)
        tv.assert_tree_allclose(through(m), eager, rtol=1e-6)
        tv.assert_tree_allclose(jitted_hvp(m, _direction(m)), _hvp(m, _direction(m)), rtol=1e-6)
    _check_vmap(build, pool, [g, autodiff.grad(_loss)(other)])


def _check_vmap(build, pool, each):
    """``vmap`` over a batch of both pools, the model built from each example's arrays (so its ties hold)."""
    batch = [np.stack(pair) for pair in zip(pool(0), pool(1))]
    batched = leaves(autodiff.vmap(lambda *arrays: autodiff.grad(_loss)(build(list(arrays))))(*batch))
    first, second = leaves(each[0]), leaves(each[1])
    assert [p for p, _ in batched] == [p for p, _ in first]
    for (path, b), (_, a0), (_, a1) in zip(batched, first, second):
        if a0 is None:
            assert b is None and a1 is None, path
        else:
            np.testing.assert_allclose(b, np.stack([a0, a1]), rtol=1e-6, err_msg=str(path))


def test_total_and_its_gradient_on_random_models_with_ties(request):
    """80 models in a fixed sequence; ``--fuzz-long`` tries 2,000 new ones."""
    long = request.config.getoption("--fuzz-long")

    @settings(max_examples=2000 if long else 80, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=bool(os.environ.get("CI")) if long else DERANDOMIZE)
    @given(made=models())
    def fuzz(made):
        with np.errstate(all="ignore"):
            check(*made)

    fuzz()
