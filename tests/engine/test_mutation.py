"""Mutation safety: an array a pullback will read cannot be changed in place before the backward pass."""

import sys

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp


def test_mutating_a_saved_constant_inside_the_function_raises():
    c = np.array([1.0, 2.0])

    def f(x):
        y = anp.sum(x * c)  # the pullback of x * c reads c
        c[0] = 100.0
        return y

    with pytest.raises(ValueError, match="read-only"):
        autodiff.grad(f)(np.array([3.0, 4.0]))
    assert c.flags.writeable and c[0] == 1.0  # given back, unchanged


def test_mutating_an_input_between_forward_and_backward_raises():
    x = np.array([0.5, 1.0])
    out, pullback = autodiff.vjp(lambda x: anp.sin(x) * x, x)
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 3.0
    with pytest.raises(ValueError, match="read-only"):
        out[0] = 3.0  # the output is read by some pullbacks too
    expected = autodiff.vjp(lambda x: anp.sin(x) * x, x.copy())[1](np.ones(2))[0]
    np.testing.assert_allclose(pullback(np.ones(2))[0], expected)
    del pullback
    x[0] = 3.0  # writable again once the pullback is gone


def test_views_protect_their_base():
    base = np.arange(6.0)
    view = base[1:4]
    out, pullback = autodiff.vjp(lambda v: anp.sum(v * v), view)
    with pytest.raises(ValueError, match="read-only"):
        base[2] = 7.0
    del pullback
    base[2] = 7.0
    view[0] = 1.0


def test_user_arrays_are_writable_after_grad():
    w, b, data = np.ones((3, 2)), np.zeros(2), np.arange(6.0).reshape(2, 3)
    model = {"w": w, "b": b}
    autodiff.grad(lambda m: anp.sum(anp.tanh(data @ m["w"] + m["b"]) ** 2))(model)
    autodiff.hessian(lambda v: anp.sum(v ** 3 * data[0]))(np.ones(3))
    for a in (w, b, data):
        assert a.flags.writeable


def test_nested_grads_give_every_array_back():
    x, c = np.array([0.3, 0.7]), np.array([2.0, 3.0])
    view = c[:]
    autodiff.grad(lambda x: anp.sum(autodiff.grad(lambda y: anp.sum(y * view * x))(x) * c))(x)
    assert x.flags.writeable and c.flags.writeable and view.flags.writeable


def test_failed_forward_gives_arrays_back():
    c = np.ones(2)
    with pytest.raises(ZeroDivisionError):
        autodiff.grad(lambda x: anp.sum(x * c) + 1 / 0)(np.ones(2))
    assert c.flags.writeable


# Protection by count (design.md section 10): every tape that reads an array holds it, and the array is
# writable again only once the last of them is done.


def _pullback_of(x):
    return autodiff.vjp(lambda x: anp.sum(anp.sin(x) * x), x)[1]


def _expected(x):
    return np.cos(x) * x + np.sin(x)


def test_two_live_pullbacks_over_one_array_keep_it_read_only():
    x = np.array([0.5, 1.0])
    p1, p2 = _pullback_of(x), _pullback_of(x)
    del p1
    with pytest.raises(ValueError, match="read-only"):
        x[:] = 5.0
    np.testing.assert_allclose(p2(1.0)[0], _expected(np.array([0.5, 1.0])))
    del p2
    x[:] = 5.0  # the last reader is gone


def test_a_second_tape_over_an_already_read_only_array_counts_too():
    c, x = np.array([2.0, 3.0]), np.array([0.5, 1.0])
    p1 = autodiff.vjp(lambda x: anp.sum(x * c), x)[1]  # c read-only now
    p2 = autodiff.vjp(lambda x: anp.sum(x * c), x)[1]  # sees c already read-only
    del p1
    assert not c.flags.writeable
    del p2
    assert c.flags.writeable


def test_another_threads_grad_finishing_leaves_our_arrays_protected():
    import threading

    x = np.array([0.5, 1.0])
    b_holds, a_holds, b_done = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def thread_b():
        def f(y):
            out = anp.sum(anp.sin(y) * x)  # x is held by B's tape first
            b_holds.set()
            a_holds.wait(10)
            return out
        autodiff.grad(f)(np.ones(2))
        b_done.set()

    def f_a(y):
        b_holds.wait(10)
        out = anp.sum(anp.sin(y) * x)  # A's tape reads x too, while B still holds it
        a_holds.set()
        b_done.wait(10)  # B has finished and given back what it held
        seen["writeable"] = x.flags.writeable
        return out

    t = threading.Thread(target=thread_b)
    t.start()
    autodiff.grad(f_a)(np.ones(2))
    t.join()
    assert seen["writeable"] is False  # A's tape still reads x
    assert x.flags.writeable


def test_parameters_as_views_of_one_buffer_are_writable_after_grad():
    flat = np.arange(8.0)
    model = {"W": flat[:6].reshape(2, 3), "b": flat[6:]}
    g = autodiff.grad(lambda m: anp.sum(anp.tanh(m["W"] @ np.ones(3) + m["b"])))(model)
    for a in (flat, model["W"], model["b"]):
        assert a.flags.writeable
    model["b"] -= 0.1 * g["b"]  # an in-place SGD step
    model["W"] -= 0.1 * g["W"]


def test_a_writable_view_of_a_read_only_base_is_writable_again():
    base = np.arange(4.0)
    view = base[1:]
    base.setflags(write=False)  # the user's choice; the view stays writable, as numpy allows
    autodiff.grad(lambda v: anp.sum(v * v))(view)
    assert view.flags.writeable and not base.flags.writeable
    view[0] = 7.0
    from tests.internals import held_count

    assert held_count(view) == 0  # nothing kept waiting


def test_the_base_of_a_read_only_view_is_protected():
    base = np.array([0.5, 1.0, 1.5])
    view = base[:2]
    view.setflags(write=False)
    out, pullback = autodiff.vjp(lambda v: anp.sum(anp.sin(v) * v), view)
    with pytest.raises(ValueError, match="read-only"):
        base[0] = 9.0
    np.testing.assert_allclose(pullback(1.0)[0], _expected(np.array([0.5, 1.0])))
    del pullback
    base[0] = 9.0
    assert not view.flags.writeable  # as it was


@pytest.mark.parametrize("read, index", [
    (lambda x, i: x[:, i], np.array([0, 2])),
    (lambda x, i: anp.take(x, i, axis=1), np.array([2, 0, 2])),
    (lambda x, i: x[1, i], np.array([True, False, True])),
])
def test_index_arrays_inside_tuples_are_protected(read, index):
    x = np.arange(6.0).reshape(2, 3) / 4
    expected = autodiff.vjp(lambda x: anp.sum(read(x, index.copy()) ** 2), x)[1](1.0)[0]
    _, pullback = autodiff.vjp(lambda x: anp.sum(read(x, index) ** 2), x)
    with pytest.raises(ValueError, match="read-only"):
        index[0] = index[1]
    np.testing.assert_allclose(pullback(1.0)[0], expected)


def test_keyword_arrays_are_protected():
    from autodiff.extend import defvjp, primitive

    scale = primitive(lambda x, *, by: x * by, "scale_by")
    defvjp(scale, lambda g, ans, x, *, by: g * by)
    by = np.array([2.0, 3.0])
    _, pullback = autodiff.vjp(lambda x: anp.sum(scale(x, by=by)), np.ones(2))
    with pytest.raises(ValueError, match="read-only"):
        by[0] = 100.0
    np.testing.assert_allclose(pullback(1.0)[0], [2.0, 3.0])


def test_arrays_read_through_stop_gradient_are_protected():
    def f(x):
        y = anp.exp(x)  # exp's pullback reads its output
        c = autodiff.stop_gradient(y)
        try:
            c[0] = 0.0
        except ValueError as e:
            assert "read-only" in str(e)
        return anp.sum(y)

    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(autodiff.grad(f)(x), np.exp(x))


def test_aux_outputs_of_a_live_pullback_are_protected():
    x = np.array([0.5, 1.0])
    out, pullback, aux = autodiff.vjp(lambda x: (anp.sum(anp.exp(x)), anp.exp(x)), x, has_aux=True)
    assert not aux.flags.writeable
    del pullback
    assert aux.flags.writeable



def test_an_array_numpy_cannot_make_writable_again_stays_read_only_after_release():
    # scipy.linalg.sqrtm returns an array over a PyCapsule: once read-only, numpy refuses to set it writable
    # again.  The tape's release (here in a pullback's __del__) must not raise, and the array stays read-only,
    # so a later write fails loudly.
    scipy_linalg = pytest.importorskip("scipy.linalg", reason="scipy is in the [test] extra: pip install -e '.[test]'")
    x = scipy_linalg.sqrtm(np.diag([4.0, 9.0]))
    assert not isinstance(x.base, np.ndarray) and x.flags.writeable
    raised = []
    hook, sys.unraisablehook = sys.unraisablehook, raised.append
    try:
        out, pullback = autodiff.vjp(lambda x: anp.sum(x * x), x)
        np.testing.assert_allclose(pullback(1.0)[0], 2 * x)
        del pullback
    finally:
        sys.unraisablehook = hook
    assert raised == []
    assert not x.flags.writeable
