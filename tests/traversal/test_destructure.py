"""destructure / rebuild: round trip, ties, dtypes, errors and derivatives to second order."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from tests.gallery import BatchNormLike, gallery
from traversal import destructure, trainables


def test_round_trip_keeps_ties_dtypes_and_non_trainable_fields():
    model = gallery()
    flat, rebuild = destructure(model)
    assert flat.ndim == 1 and flat.dtype == np.complex128  # promoted across float32/64/complex
    assert flat.size == sum(a.size for a in trainables(model))
    new = rebuild(flat)
    assert new["tied"]["x"] is new["tied"]["y"]
    assert new["tied_layer"][0] is new["tied_layer"][1]
    assert new["float32"]["w"].dtype == np.float32
    norm = model["partly_trainable"]["norm"]
    assert new["partly_trainable"]["norm"].running_mean is norm.running_mean
    assert new["functions_and_ints"]["idx"] is model["functions_and_ints"]["idx"]
    for a, b in zip(trainables(model), trainables(new)):
        np.testing.assert_array_equal(a, b)
        assert a is not b


def test_rebuild_does_not_alias_the_vector():
    flat, rebuild = destructure({"w": np.ones(2)})
    v = np.array([3.0, 4.0])
    new = rebuild(v)
    v[0] = 100.0
    assert new["w"][0] == 3.0


def test_length_mismatch_names_both_lengths():
    _, rebuild = destructure({"w": np.ones(3), "b": np.ones(2)})
    with pytest.raises(ValueError, match=r"shape \(4,\).*5 trainable values"):
        rebuild(np.ones(4))


def test_empty_model():
    flat, rebuild = destructure({"n": 3, "f": np.sin})
    assert flat.shape == (0,)
    assert rebuild(flat) == {"n": 3, "f": np.sin}


def tied_loss(model):
    return anp.sum(anp.sin(model["x"]) * model["y"]) + anp.sum(model["z"] ** 2)


def test_gradient_of_rebuild_adds_every_tied_position():
    model = gallery()["tied"]
    flat, rebuild = destructure(model)
    g = autodiff.grad(lambda v: tied_loss(rebuild(v)))(flat)
    # oracle: the same loss on an untied copy, whose two positions' gradients must add up
    untied = {"x": model["x"].copy(), "y": model["x"].copy(), "z": model["z"]}
    gu = autodiff.grad(tied_loss)(untied)
    np.testing.assert_allclose(g[:3], gu["x"] + gu["y"])
    np.testing.assert_allclose(g[3:], gu["z"])
    assert autodiff.gradcheck(lambda v: tied_loss(rebuild(v)), flat, order=2)


def test_second_order_through_destructure_both_directions():
    model = {"w": np.array([[0.3, -0.2], [0.1, 0.5]]), "b": np.array([0.1, -0.4]),
             "norm": BatchNormLike(np.zeros(2), np.ones(2), np.zeros(2), np.ones(2))}
    assert autodiff.gradcheck(lambda m: anp.sum(anp.sin(destructure(m)[0]) ** 2), model, order=2)
    flat, rebuild = destructure(model)

    def loss(v):
        m = rebuild(v)
        return anp.sum(anp.tanh(m["w"] @ m["b"]) * m["norm"].gamma) + anp.sum(m["norm"].beta ** 3)

    assert autodiff.gradcheck(loss, flat, order=2)


def test_float32_round_trip_under_grad_keeps_dtype():
    model = {"w": np.ones(3, np.float32)}
    flat, rebuild = destructure(model)
    assert flat.dtype == np.float32
    g = autodiff.grad(lambda v: anp.sum(rebuild(v)["w"] ** 2))(flat)
    assert g.dtype == np.float32
