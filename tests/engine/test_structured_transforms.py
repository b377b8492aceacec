"""Structured jacobian, hessian, jvp and hvp (design.md section 9) against their dense versions.

The oracle for every structured result is the same transform of the flat
function ``v -> f(rebuild(v))`` from ``traversal.destructure``, read back in
destructure's order; gradcheck (finite differences) checks the rest.
"""

import dataclasses

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
from autodiff import Tangent, grad, gradcheck, hessian, hvp, jacobian, jvp
from traversal import children, destructure, fmap, hessian_from_dense, hessian_to_dense, isnumeric, trainables


@dataclasses.dataclass
class MLP2:
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    act: object = anp.tanh
    depth: int = 2

    def __call__(self, x):
        return self.act(x @ self.W1 + self.b1) @ self.W2


def tied_forward(m, x):
    """A dict model whose embedding is used again, transposed, as the output layer."""
    h = anp.tanh(x @ m["emb"] @ m["hidden"]["W"] + m["hidden"]["b"])
    return h @ m["out"].T


def _models():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    emb = rng.standard_normal((3, 4)) * 0.5
    tied = {"emb": emb, "hidden": {"W": rng.standard_normal((4, 4)) * 0.5, "b": rng.standard_normal(4)},
            "out": emb, "n": 3}
    return {
        "dataclass": (MLP2(rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((4, 2))),
                      lambda m: m(x)),
        "tied_dict": (tied, lambda m: tied_forward(m, x)),
        "layers_mlp": (layers.MLP([3, 4, 2], dtype=np.float64), lambda m: m(x)),
    }


MODELS = _models()


def _loss(forward):
    return lambda m: anp.sum(forward(m) ** 2) * 0.5


def _at(tree, path):
    """The entry of ``tree`` at ``path``; ``None`` inside a collapsed (``None``) subtree."""
    for key in path:
        if tree is None:
            return None
        tree = children(tree)[key]
    return tree


def _joined(tree, model, lead=()):
    """``tree``'s entries at the model's parameters (destructure's order), each ``lead + (size,)``, joined."""
    parts = []
    for path, a in trainables(model, path=True):
        entry = _at(tree, path)
        parts.append(np.zeros(lead + (a.size,)) if entry is None else np.reshape(entry, lead + (a.size,)))
    return np.concatenate(parts, axis=-1)


def _flat(model, forward):
    flat, rebuild = destructure(model)
    return flat, lambda v: forward(rebuild(v))


def _direction(model, seed=1):
    rng = np.random.default_rng(seed)
    return fmap(lambda a: rng.standard_normal(a.shape).astype(a.dtype), model, exclude=isnumeric)


@pytest.mark.parametrize("name", list(MODELS))
def test_structured_jacobian_equals_the_dense_one(name):
    model, forward = MODELS[name]
    f = lambda m: anp.ravel(forward(m))  # noqa: E731
    j = jacobian(f)(model)
    flat, f_flat = _flat(model, lambda m: anp.ravel(forward(m)))
    dense = jacobian(f_flat)(flat)
    out_size = dense.shape[0]
    for path, a in trainables(model, path=True):
        assert _at(j, path).shape == (out_size,) + a.shape
    np.testing.assert_allclose(_joined(j, model, (out_size,)), dense, rtol=1e-12, atol=1e-12)


def test_jacobian_of_a_dataclass_is_a_tangent_and_a_structured_output_stays_outside():
    model, forward = MODELS["dataclass"]
    j = jacobian(lambda m: {"y": forward(m), "s": anp.sum(m.W1)})(model)
    assert type(j) is dict and type(j["y"]) is Tangent and j["y"].primal_type is MLP2
    assert j["y"].W1.shape == (5, 2, 3, 4) and j["s"].W1.shape == (3, 4)
    np.testing.assert_array_equal(j["s"].W1, np.ones((3, 4)))
    assert j["s"].W2 is None and j["y"].act is None and j["y"].depth is None  # not reached / not floats
    assert gradcheck(lambda m: jacobian(lambda m: forward(m)[0])(m), model)


def test_jacobian_with_several_argnums_gives_one_structure_per_argument():
    model, forward = MODELS["dataclass"]
    scale = np.array([2.0, 3.0])
    j = jacobian(lambda m, s: forward(m)[0] * s, argnums=(0, 1))(model, scale)
    assert type(j) is tuple and j[0].W2.shape == (2, 4, 2) and j[1].shape == (2, 2)
    np.testing.assert_allclose(j[1], np.diag(forward(model)[0]))


@pytest.mark.parametrize("name", list(MODELS))
def test_structured_hessian_equals_the_dense_one(name):
    model, forward = MODELS[name]
    h = hessian(_loss(forward))(model)
    flat, f_flat = _flat(model, _loss(forward))
    dense = hessian(f_flat)(flat)
    rows = [_joined(_at(h, path), model, a.shape).reshape(a.size, -1) for path, a in trainables(model, path=True)]
    np.testing.assert_allclose(np.concatenate(rows), dense, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian_to_dense(h, model), dense, rtol=1e-10, atol=1e-12)


def test_hessian_blocks_have_both_shapes_and_the_gradient_passes_gradcheck():
    model, forward = MODELS["dataclass"]
    h = hessian(_loss(forward))(model)
    assert type(h) is Tangent and type(h.W1) is Tangent
    assert h.W1.W2.shape == model.W1.shape + model.W2.shape
    np.testing.assert_allclose(h.W1.W2, np.moveaxis(h.W2.W1, (0, 1), (2, 3)), rtol=1e-12)  # symmetric
    assert h.act is None and h.W1.depth is None
    assert gradcheck(grad(_loss(forward)), model)  # the derivative the blocks hold, by finite differences


def test_hessian_of_a_tied_model_has_one_block_per_tie():
    model, forward = MODELS["tied_dict"]
    h = hessian(_loss(forward))(model)
    assert h["out"] is None and h["n"] is None  # the tie's later position, and an int
    assert h["emb"]["out"] is None and h["emb"]["emb"].shape == (3, 4, 3, 4)


def test_hessian_of_layers_mlp_keeps_float32():
    model = layers.MLP([3, 4, 2])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    h = hessian(lambda m: anp.sum(m(x) ** 2))(model)
    block = h.layers[0].weight.layers[2].bias
    assert block.dtype == np.float32 and block.shape == (4, 3, 2)
    assert h.layers[1] is None  # np.tanh between the layers


@pytest.mark.parametrize("name", list(MODELS))
def test_dense_hessian_round_trips_through_the_structure(name):
    model, forward = MODELS[name]
    h = hessian(_loss(forward))(model)
    back = hessian_from_dense(hessian_to_dense(h, model), model)
    paths = [path for path, _ in trainables(model, path=True)]
    for path in paths:
        for col_path in paths:
            np.testing.assert_allclose(_at(_at(back, path), col_path), _at(_at(h, path), col_path), rtol=1e-12)
    eigenvalues = np.linalg.eigvalsh(hessian_to_dense(h, model))
    assert eigenvalues.shape == (destructure(model)[0].size,)


def test_dense_hessian_leaves_out_a_float_field_the_loss_reads():
    """A float field (a LayerNorm's eps) has a whole row in the structured Hessian; destructure leaves it out,
    and so does hessian_to_dense (it once walked into that row and refused the model as another structure)."""
    model = {"w": np.array([1.0, -2.0]), "s": 0.5, "b": np.array([0.3]), "n": 3}
    loss = lambda m: anp.sum(anp.tanh(m["w"]) ** 3) * m["s"] + anp.sum(m["w"] * m["b"]) * m["s"] ** 2  # noqa: E731
    flat, f_flat = _flat(model, loss)
    np.testing.assert_allclose(hessian_to_dense(hessian(loss)(model), model), hessian(f_flat)(flat), rtol=1e-12)


def test_hessian_from_dense_checks_the_shape():
    model, _ = MODELS["dataclass"]
    n = destructure(model)[0].size
    with pytest.raises(ValueError, match=rf"hessian_from_dense.*\(3, 3\).*\({n}, {n}\)"):
        hessian_from_dense(np.zeros((3, 3)), model)


@pytest.mark.parametrize("name", list(MODELS))
def test_structured_hvp_and_jvp_equal_the_dense_ones(name):
    model, forward = MODELS[name]
    v = _direction(model)
    flat, f_flat = _flat(model, forward)
    v_flat = destructure(v)[0]
    loss, loss_flat = _loss(forward), _flat(model, _loss(forward))[1]
    hv = hvp(loss, model, v)
    (dense_hv,) = hvp(loss_flat, (flat,), (v_flat,))
    np.testing.assert_allclose(_joined(hv, model), dense_hv, rtol=1e-10, atol=1e-12)
    out, jv = jvp(forward, model, v)
    _, dense_jv = jvp(f_flat, (flat,), (v_flat,))
    np.testing.assert_allclose(jv, dense_jv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out, forward(model))


def test_bare_primal_is_the_one_tuple_form():
    model, forward = MODELS["dataclass"]
    v = _direction(model)
    loss = _loss(forward)
    bare, wrapped = hvp(loss, model, v), hvp(loss, (model,), (v,))
    assert type(wrapped) is tuple and type(bare) is Tangent
    assert bare == wrapped[0]
    np.testing.assert_array_equal(jvp(forward, model, v)[1], jvp(forward, (model,), (v,))[1])


def test_a_tangent_in_gradient_form_is_accepted():
    model, forward = MODELS["dataclass"]
    loss = _loss(forward)
    g = grad(loss)(model)  # a Tangent, with None at the function and the int
    hv = hvp(loss, model, g)
    np.testing.assert_allclose(_joined(hv, model), _joined(hvp(loss, model, _as_model(g, model)), model))
    assert gradcheck(lambda m: hvp(loss, m, g).W1, model)


def _as_model(g, model):
    return dataclasses.replace(model, W1=g.W1, b1=g.b1, W2=g.W2)


def test_a_tied_array_has_one_direction_taken_once():
    """A tie's entries are one direction: None at all but one position means the same (as in grad's output)."""
    model, forward = MODELS["tied_dict"]
    v = _direction(model)  # fmap keeps the tie: the same direction array at "emb" and "out"
    assert v["out"] is v["emb"]
    flat, f_flat = _flat(model, forward)
    v_flat = destructure(v)[0]
    dense_jv = jvp(f_flat, (flat,), (v_flat,))[1]
    (dense_hv,) = hvp(_flat(model, _loss(forward))[1], (flat,), (v_flat,))
    for tangent in (v, dict(v, out=None), dict(v, emb=None)):
        np.testing.assert_allclose(jvp(forward, (model,), (tangent,))[1], dense_jv, rtol=1e-12)
        np.testing.assert_allclose(_joined(hvp(_loss(forward), (model,), (tangent,))[0], model), dense_hv, rtol=1e-12)


def test_a_tie_given_two_different_directions_raises_naming_both_paths():
    model, forward = MODELS["tied_dict"]
    v = dict(_direction(model), out=np.ones((3, 4)))
    for name, call in (("jvp", lambda: jvp(forward, model, v)), ("hvp", lambda: hvp(_loss(forward), model, v))):
        with pytest.raises(ValueError, match=rf"{name}: tangent\.emb and tangent\.out hold different directions"):
            call()


@pytest.mark.parametrize("transform", [jvp, hvp])
def test_a_wrong_shape_tangent_raises_naming_the_transform_the_leaf_and_both_shapes(transform):
    model, forward = MODELS["dataclass"]
    v = dataclasses.replace(_direction(model), W1=np.ones((3, 1)))
    f = _loss(forward)
    with pytest.raises(ValueError, match=rf"{transform.__name__}: tangent\.W1 is of shape \(3, 1\).*shape \(3, 4\)"):
        transform(f, model, v)


@pytest.mark.parametrize("transform", [jvp, hvp])
def test_a_length_one_tangent_is_not_broadcast(transform):
    """Issue 14: hvp returned H @ [1, 1, 1] silently for a tangent of shape (1,)."""
    with pytest.raises(ValueError, match=rf"{transform.__name__}: tangents\[0\] is of shape \(1,\).*\(3,\)"):
        transform(lambda x: anp.sum(x ** 3), (np.ones(3),), (np.ones(1),))


def test_wrong_dtype_and_wrong_structure_raise():
    model, forward = MODELS["layers_mlp"]
    f = _loss(forward)
    v32 = fmap(lambda a: a.astype(np.float32), _direction(model), exclude=isnumeric)
    with pytest.raises(ValueError, match=r"hvp: tangent\.layers\[0\]\.weight .*float32.*float64"):
        hvp(f, model, v32)
    with pytest.raises(ValueError, match=r"hvp: the tangent has no entry at tangent\.layers\[2\]\.bias"):
        hvp(f, model, {"layers": [{"weight": np.ones((4, 3)), "bias": np.ones(4)}, None, {"weight": np.ones((2, 4))}]})
    with pytest.raises(ValueError, match=r"jvp: primals is a tuple of 1 argument\(s\), so tangents must be a tuple"):
        jvp(forward, (model,), _direction(model))


def test_none_in_a_tangent_is_a_zero_direction():
    model, forward = MODELS["dataclass"]
    v = _direction(model)
    only_w2 = Tangent(MLP2, {"W1": None, "b1": None, "W2": v.W2, "act": None, "depth": None})
    zeroed = dataclasses.replace(v, W1=np.zeros_like(v.W1), b1=np.zeros_like(v.b1))
    np.testing.assert_allclose(jvp(forward, model, only_w2)[1], jvp(forward, model, zeroed)[1], rtol=1e-12)
    assert autodiff.jvp(forward, model, None)[1].shape == (5, 2)


@pytest.mark.parametrize("name", list(MODELS))
def test_structured_hvp_is_differentiable_in_the_model(name):
    model, forward = MODELS[name]
    v = _direction(model)
    assert gradcheck(lambda m: hvp(_loss(forward), m, v), model)


def test_both_dense_conversions_are_differentiable():
    model, forward = MODELS["tied_dict"]
    assert gradcheck(lambda m: hessian_to_dense(hessian(_loss(forward))(m), m), model)
    n = destructure(model)[0].size
    matrix = np.random.default_rng(2).standard_normal((n, n))
    assert gradcheck(lambda a: hessian_from_dense(a, model), matrix)
