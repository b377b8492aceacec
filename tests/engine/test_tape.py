"""The tape: long chains, release after grad, thread isolation, leaked values."""

import gc
import threading
import weakref

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad
from tests.internals import Tape


def chain(x, n=10_000):
    for _ in range(n):
        x = anp.sin(x) * 0.5 + x * 0.5
    return anp.sum(x)


def test_ten_thousand_ops_no_recursion_error():
    x = np.array([0.3, -0.2])
    g = grad(chain)(x)
    # oracle: the same chain differentiated step by step with the chain rule in numpy
    v, d = x.copy(), np.ones_like(x)
    for _ in range(10_000):
        d = d * (0.5 * np.cos(v) + 0.5)
        v = np.sin(v) * 0.5 + v * 0.5
    np.testing.assert_allclose(g, d, rtol=1e-10)


def test_no_tape_left_after_grad():
    refs = []
    original = Tape.__init__

    def spy(self, level):
        original(self, level)
        refs.append(weakref.ref(self))

    Tape.__init__ = spy
    try:
        grad(chain)(np.ones(3))
        grad(lambda x: grad(lambda y: anp.sum(x * y ** 2))(x).sum())(np.ones(3))
    finally:
        Tape.__init__ = original
    gc.collect()
    assert len(refs) == 3 and all(r() is None for r in refs)  # one tape, then two nested


def test_vjp_pullback_is_reusable_and_keeps_its_tape():
    out, pullback = autodiff.vjp(lambda x: anp.sin(x) * x, np.array([0.5, 1.5]))
    first = pullback(np.ones(2))[0]
    second = pullback(2 * np.ones(2))[0]
    np.testing.assert_allclose(second, 2 * first)


def nested(x, k):
    return anp.sum(anp.sin(x * k) * grad(lambda y: anp.sum(y * x))(x))


def test_threads_get_independent_tapes():
    results, errors = {}, []
    barrier = threading.Barrier(4)

    def work(k):
        try:
            barrier.wait()
            x = np.full(3, 0.1 * (k + 1))
            for _ in range(50):
                results[k] = grad(nested)(x, k)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        x = np.full(3, 0.1 * (k + 1))
        np.testing.assert_array_equal(results[k], grad(nested)(x, k))  # same as alone
        assert autodiff.gradcheck(nested, x, k)


def test_leaked_traced_value_raises():
    leaked = []
    grad(lambda x: leaked.append(x) or anp.sum(x))(np.ones(2))
    with pytest.raises(RuntimeError, match="escaped"):
        grad(lambda y: anp.sum(y * 2.0) + leaked[0])(np.ones(2))


def test_grad_frees_saved_values_once_their_pullback_has_run():
    # exp(a) is saved by exp's entry (its output) and by sum's (its argument).  By the time the first entry's
    # pullback runs, both have been pulled back, so grad's single-use tape no longer keeps it alive.
    from autodiff.extend import defvjp, primitive

    alive = []
    double = primitive(lambda x: 2 * x, name="double")

    def double_vjp(g, ans, x):
        gc.collect()
        alive.append(refs[0]() is not None)
        return 2 * g

    defvjp(double, double_vjp)
    refs = []

    def f(x):
        c = anp.exp(double(x))
        refs.append(weakref.ref(c.value))
        return anp.sum(c)

    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(grad(f)(x), 2 * np.exp(2 * x))
    assert alive == [False]
    refs.clear()
    alive.clear()
    _, pullback = autodiff.vjp(f, x)  # a pullback may run many times: it keeps every saved value
    pullback(1.0)
    assert alive == [True]
