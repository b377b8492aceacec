"""``total``'s fast paths against its generic one: a scaled known reduction and the grads form take the fused path
and agree with the generic entry, and ``total(f, model, grads)`` reads a gradient tree the same way in both modes
(issue 36 item 13).

The model's leaf at ``k`` was ``None`` and grads held an array there: the fast collector skipped it (2.0) and the
reference one (``AUTODIFF_REFERENCE=1``) raised ``AttributeError`` inside its error-message builder.  The rule, by
design.md sections 7 and 8: ``total`` sums ``f(x, dx)`` over the model's parameters, so an entry of grads where
the model has a leaf that is no parameter (``None``, an int, a string, an int array) pairs with nothing and is
skipped, as ``fmap(f, model, grads)`` and ``optimisers.update`` skip it; a grads node whose children differ from
the model's raises, naming the key path, in both modes (the fast collector used to accept extra keys).

Both collectors are called here in one process (the reference walk and its fast twin), so each check holds in
either mode of the suite.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import optimisers
from autodiff import grad
from autodiff._accel.reductions import lookup
from autodiff._for_traversal import is_known
from autodiff._hooks import REFERENCE, hooks
from tests.tree_asserts import assert_same_tree
from traversal import _collect, fmap, total
from traversal._accel import collect as fast

COLLECTORS = {"reference": _collect.reference_parameter_pairs, "fast": fast.parameter_pairs}
X, DX = np.array([1.0, 2.0]), np.array([0.5, -1.0])


@pytest.fixture(params=list(COLLECTORS))
def collector(request, monkeypatch):
    monkeypatch.setattr(hooks, "parameter_pairs", COLLECTORS[request.param])
    return request.param


def _dot(x, dx):
    return np.sum(x * dx)


@pytest.mark.parametrize("leaf", [None, 3, "name", np.arange(2)], ids=["None", "int", "str", "int array"])
def test_an_entry_of_grads_where_the_model_has_no_parameter_is_skipped(collector, leaf):
    model, grads = {"a": X, "k": leaf}, {"a": DX, "k": DX}
    assert total(_dot, model, grads) == pytest.approx(float(_dot(X, DX)))
    assert fmap(lambda x, dx: x, model, grads)["k"] is leaf  # fmap leaves it alone too
    state = optimisers.setup(optimisers.Descent(0.1), model)
    assert optimisers.update(state, model, grads)[1]["k"] is leaf  # and so does update


def test_a_subtree_of_grads_under_a_non_parameter_leaf_is_skipped_too(collector):
    model, grads = {"a": X, "k": None}, {"a": DX, "k": {"z": DX}}
    assert total(_dot, model, grads) == pytest.approx(float(_dot(X, DX)))


def test_both_modes_give_the_same_value_on_the_issues_case():
    model, grads = {"a": X, "k": None}, {"a": DX, "k": DX}
    got = {}
    for name, pairs in COLLECTORS.items():
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(hooks, "parameter_pairs", pairs)
            got[name] = total(_dot, model, grads)
    assert got["reference"] == got["fast"] == pytest.approx(float(_dot(X, DX)))


@pytest.mark.parametrize("model, grads, message", [
    ({"a": X}, {"a": DX, "extra": DX},
     r"total: grads does not match the model at \(root\): the model has a dict there with children \['a'\], grads a "
     r"dict with children \['a', 'extra'\]; pass the structural gradient of this model"),
    ({"a": X, "b": X}, {"a": DX},
     r"at \(root\): the model has a dict there with children \['a', 'b'\], grads a dict with children \['a'\]"),
    ({"a": X, "k": [X]}, {"a": DX, "k": DX},
     r"at k: the model has a list there with children \[0\], grads a ndarray; pass the structural gradient"),
])
def test_a_grads_node_that_does_not_mirror_the_model_raises_the_same_error_in_both_modes(collector, model, grads,
                                                                                        message):
    with pytest.raises(ValueError, match=message):
        total(_dot, model, grads)


def test_scaled_and_grads_forms_take_the_fast_path_and_agree_with_the_generic_one():
    rng = np.random.default_rng(5)
    shared = rng.standard_normal(3)
    model = {"a": shared, "b": [shared, rng.standard_normal((2, 2))]}
    half = autodiff.scaled(0.5, autodiff.sumsq)
    assert is_known(half)
    assert (lookup(half) is None) == REFERENCE  # the fused path (an acceleration) takes it unless switched off
    generic = lambda p: 0.5 * anp.sum(p * p)  # noqa: E731
    np.testing.assert_allclose(total(half, model), total(generic, model), rtol=1e-12)
    assert_same_tree(grad(lambda m: total(half, m))(model), grad(lambda m: total(generic, m))(model), rtol=1e-12)
    assert autodiff.gradcheck(lambda m: total(half, m), model, order=2)
    g = grad(lambda m: anp.sum(anp.sin(m["a"]) * m["b"][0]) + anp.sum(m["b"][1] ** 3))(model)
    by_known = total(autodiff.sumsq, model, g)
    by_pairs = total(lambda x, dx: anp.sum(dx * dx), model, g)
    np.testing.assert_allclose(by_known, by_pairs, rtol=1e-12)
    lam_traced = grad(lambda lam: total(autodiff.scaled(lam, autodiff.sumsq), model))(2.0)  # a traced scale
    np.testing.assert_allclose(lam_traced, total(autodiff.sumsq, model), rtol=1e-12)
    penalty = lambda m: total(autodiff.sumsq, m, grad(lambda q: anp.sum(anp.tanh(q["b"][1])))(m))  # noqa: E731
    assert autodiff.gradcheck(penalty, model, order=1)
