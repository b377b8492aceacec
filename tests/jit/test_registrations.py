"""A jitted function traces again after a registration exactly when the registration changes how a tree it met
flattens or which of its children are trainable, and not for a registration anywhere else (an ABC's, another
type's container or trainable rule: libraries make those when they import).  Values are checked against the
same function run eagerly."""

import abc
import dataclasses

import numpy as np

import autodiff
import autodiff.numpy as anp
import traversal
from layers import MLP, BatchNorm
from tests.trees import leaves


def _x(seed, shape=(3,)):
    return np.random.default_rng(seed).standard_normal(shape)


def _model():
    """An MLP beside a BatchNorm (its running statistics are not trainable: a trainable rule is in use)."""
    bn = BatchNorm.init(3, dtype=np.float64)
    return {"mlp": MLP([3, 4, 3], dtype=np.float64, seed=0), "bn": dataclasses.replace(bn, gamma=_x(1))}


def _loss(m):
    h = m["mlp"](np.ones((2, 3)))
    return anp.sum(h * m["bn"].gamma) + traversal.total(autodiff.sumsq, m)


def _assert_grads_equal(got, want):
    got, want = leaves(got), leaves(want)
    assert [p for p, _ in got] == [p for p, _ in want]
    for (_, a), (_, b) in zip(got, want):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def _unrelated_registrations():
    """What importing a library may do: register a class with an ABC, a container, a leaf, a trainable rule."""

    class Elsewhere(abc.ABC):  # noqa: B024 (registration is all it is for)
        pass

    @dataclasses.dataclass
    class Other:
        a: np.ndarray

    Elsewhere.register(type("Virtual", (), {}))
    autodiff.extend.register_container(type("Box", (), {}), lambda b: {}, lambda b, kids: b)
    autodiff.extend.register_leaf(type("Opaque", (), {}))
    traversal.trainable.register(Other)(lambda o: ())


def test_registrations_elsewhere_between_two_identical_calls_do_not_trace_again():
    jg, m = autodiff.jit(autodiff.grad(_loss)), _model()
    first = jg(m)
    _unrelated_registrations()
    _assert_grads_equal(jg(m), first)
    _assert_grads_equal(first, autodiff.grad(_loss)(m))
    assert jg.cache_info().traces == 1 and jg.cache_info().hits == 1


def test_a_function_of_a_gallery_model_traces_once_across_an_abc_registration():
    jf, m = autodiff.jit(lambda m: traversal.total(autodiff.sumsq, m)), _model()
    value = jf(m)
    abc.ABC.register(type("Unrelated", (), {}))
    assert jf(m) == value == traversal.total(autodiff.sumsq, m)
    assert jf.cache_info().traces == 1


@dataclasses.dataclass
class _Layer:
    w: np.ndarray
    frozen: np.ndarray


def _layer_loss(layer):
    return anp.sum(layer.w * layer.frozen)


def test_a_trainable_rule_registered_after_the_trace_traces_again():
    @dataclasses.dataclass
    class Layer(_Layer):  # a fresh type per test: registrations last
        pass

    jg, layer = autodiff.jit(autodiff.grad(_layer_loss)), Layer(_x(0), _x(1))
    assert jg(layer).frozen is not None
    traversal.trainable.register(Layer)(lambda layer: ("w",))
    got, want = jg(layer), autodiff.grad(_layer_loss)(layer)
    assert got.frozen is None and want.frozen is None and jg.cache_info().traces == 2
    np.testing.assert_array_equal(got.w, want.w)


def test_a_trainable_rule_on_an_abc_applies_when_a_type_met_is_registered_with_it():
    class Frozen(abc.ABC):  # noqa: B024 (registration is all it is for)
        pass

    traversal.trainable.register(Frozen)(lambda layer: ("w",))

    @dataclasses.dataclass
    class Layer(_Layer):
        pass

    jg, layer = autodiff.jit(autodiff.grad(_layer_loss)), Layer(_x(0), _x(1))
    assert jg(layer).frozen is not None
    abc.ABC.register(type("Unrelated", (), {}))  # an ABC registration that changes no type met: no new trace
    assert jg(layer).frozen is not None and jg.cache_info().traces == 1
    Frozen.register(Layer)
    got, want = jg(layer), autodiff.grad(_layer_loss)(layer)
    assert got.frozen is None and want.frozen is None and jg.cache_info().traces == 2
    np.testing.assert_array_equal(got.w, want.w)


def test_a_trainable_rule_for_a_type_built_inside_the_function_traces_again():
    @dataclasses.dataclass
    class Pair:
        a: np.ndarray
        b: np.ndarray

    def f(x):
        return traversal.total(autodiff.sumsq, Pair(x, 2.0 * x))

    jf, x = autodiff.jit(f), _x(0)
    np.testing.assert_allclose(jf(x), f(x), rtol=1e-12)
    traversal.trainable.register(Pair)(lambda p: ("a",))
    np.testing.assert_allclose(jf(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(jf(x), np.sum(x * x), rtol=1e-12)
    assert jf.cache_info().traces == 2 and jf.cache_info().hits == 1


def test_a_container_registered_for_a_type_in_the_argument_traces_again():
    class Params(dict):
        pass

    jf = autodiff.jit(lambda p: traversal.total(autodiff.sumsq, p))
    p = Params(w=_x(0), b=_x(1))
    np.testing.assert_allclose(jf(p), np.sum(p["w"] ** 2) + np.sum(p["b"] ** 2), rtol=1e-12)
    autodiff.extend.register_container(Params, lambda p: {"w": p["w"]}, lambda p, kids: Params(p, **kids))
    np.testing.assert_allclose(jf(p), np.sum(p["w"] ** 2), rtol=1e-12)
    assert jf.cache_info().traces == 2


def test_a_container_registered_for_a_base_of_a_type_met_traces_again():
    class Base:
        def __init__(self, w):
            self.w = w

    class Sub(Base):  # a leaf (static, by identity) until its base is registered
        pass

    @dataclasses.dataclass
    class Holder:
        inner: object

    def f(h):
        return traversal.total(autodiff.sumsq, h) + anp.sum(h.inner.w)

    jf, h = autodiff.jit(f), Holder(Sub(_x(0)))
    np.testing.assert_allclose(jf(h), np.sum(h.inner.w), rtol=1e-12)
    autodiff.extend.register_container(Base, lambda b: {"w": b.w}, lambda b, kids: Sub(kids["w"]))
    np.testing.assert_allclose(jf(h), f(h), rtol=1e-12)
    np.testing.assert_allclose(jf(h), np.sum(h.inner.w ** 2) + np.sum(h.inner.w), rtol=1e-12)
    assert jf.cache_info().traces == 2 and jf.cache_info().hits == 1
