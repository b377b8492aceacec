"""argnums and has_aux on jvp, hvp, hvp_operator, jacobian (jacrev) and jacfwd (issue 20 item 4).

Two oracles for each: the same transform of a closure over the held arguments (ours, exactly), and
torch.func on the same inputs (jvp, hvp as jvp of grad, jacrev, jacfwd).  The errors share grad's check.
"""

import numpy as np
import pytest

import autodiff.numpy as anp
import layers
from autodiff import grad, hessian, hvp, hvp_operator, jacfwd, jacobian, jacrev, jvp
from tests.trees import leaves
from traversal import fmap, isnumeric

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

RNG = np.random.default_rng(0)
W, X, B = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3)), RNG.standard_normal(2)
ARGS = (W, X, B)
DIRECTIONS = tuple(RNG.standard_normal(a.shape) for a in ARGS)


def net(w, x, b, lib=anp):
    """A two-output function of three arrays; each argument enters nonlinearly."""
    y = lib.tanh(x @ w + b)
    return y * lib.sum(w ** 2), lib.sin(b) * lib.sum(x)


def loss(w, x, b, lib=anp):
    out, other = net(w, x, b, lib)
    return lib.sum(out ** 2) + lib.sum(other * b)


def with_aux(fn):
    """``fn`` returning ``(out, aux)``, the aux depending on the arguments (so it is traced inside)."""
    return lambda w, x, b, lib=anp: (fn(w, x, b, lib), {"h": lib.tanh(x @ w)})


def _t(xs):
    return tuple(torch.tensor(a) for a in xs)


def _torch_fn(fn, nums):
    """``fn`` on torch tensors as a function of ``args[nums]``, the others held (torch.func has no held args)."""
    held = list(_t(ARGS))

    def g(*chosen):
        new = list(held)
        for n, c in zip(nums, chosen):
            new[n] = c
        return fn(*new, lib=torch)

    return g


def _closure(fn, nums):
    def g(*chosen):
        new = list(ARGS)
        for n, c in zip(nums, chosen):
            new[n] = c
        return fn(*new)

    return g


def _close(ours, theirs, rtol=1e-10):
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)


def _same(a, b, rtol=0.0):
    """Same structure and ``None``s; equal values (to ``rtol`` where two algorithms round differently)."""
    la, lb = leaves(a), leaves(b)
    assert [p for p, _ in la] == [p for p, _ in lb]
    for (path, x), (_, y) in zip(la, lb):
        assert (x is None) == (y is None), path
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-13 if rtol else 0.0, err_msg=str(path))


ARGNUMS = [0, 1, 2, (0,), (2, 0), (0, 1, 2)]


def _chosen(argnums):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    tangents = tuple(DIRECTIONS[n] for n in nums)
    return nums, tuple(ARGS[n] for n in nums), (tangents if isinstance(argnums, tuple) else tangents[0])


@pytest.mark.parametrize("argnums", ARGNUMS)
def test_jvp_argnums_equals_the_closure_and_torch(argnums):
    nums, chosen, tangents = _chosen(argnums)
    out, jv = jvp(net, ARGS, tangents, argnums=argnums)
    closure_tangents = tangents if isinstance(argnums, tuple) else (tangents,)
    want_out, want_jv = jvp(_closure(net, nums), chosen, closure_tangents)
    _same((out, jv), (want_out, want_jv))
    t_out, t_jv = torch.func.jvp(_torch_fn(net, nums), _t(chosen), _t(closure_tangents))
    _close(out, t_out)
    _close(jv, t_jv)


@pytest.mark.parametrize("argnums", ARGNUMS)
def test_hvp_argnums_equals_the_closure_and_torch_jvp_of_grad(argnums):
    nums, chosen, tangents = _chosen(argnums)
    hv = hvp(loss, ARGS, tangents, argnums=argnums)
    closure = _closure(loss, nums)
    want = hvp(closure, chosen, tangents if isinstance(argnums, tuple) else (tangents,))
    _same(hv, want if isinstance(argnums, tuple) else want[0])
    torch_argnums = tuple(range(len(nums))) if isinstance(argnums, tuple) else 0
    t_grad = torch.func.grad(_torch_fn(loss, nums), argnums=torch_argnums)
    t_tangents = _t(tangents) if isinstance(argnums, tuple) else _t((tangents,))
    _, t_hv = torch.func.jvp(t_grad, _t(chosen), t_tangents)
    _close(hv, t_hv)


@pytest.mark.parametrize("argnums", ARGNUMS)
def test_hvp_operator_argnums_equals_hvp_and_torch(argnums):
    nums, chosen, tangents = _chosen(argnums)
    op = hvp_operator(loss, *ARGS, argnums=argnums)
    _same(op(tangents), hvp(loss, ARGS, tangents, argnums=argnums), rtol=1e-12)
    torch_argnums = tuple(range(len(nums))) if isinstance(argnums, tuple) else 0
    t_grad = torch.func.grad(_torch_fn(loss, nums), argnums=torch_argnums)
    t_tangents = _t(tangents) if isinstance(argnums, tuple) else _t((tangents,))
    _close(op(tangents), torch.func.jvp(t_grad, _t(chosen), t_tangents)[1])
    _close(op.gradient, t_grad(*_t(chosen)))


@pytest.mark.parametrize("transform, theirs", [(jacobian, "jacrev"), (jacrev, "jacrev"), (jacfwd, "jacfwd")])
@pytest.mark.parametrize("argnums", ARGNUMS)
def test_jacobian_argnums_and_has_aux_equal_the_closure_and_torch(transform, theirs, argnums):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    f = with_aux(lambda w, x, b, lib: net(w, x, b, lib)[0])
    jac, aux = transform(f, argnums=argnums, has_aux=True)(*ARGS)
    closure_nums = tuple(range(len(nums))) if isinstance(argnums, tuple) else 0
    want = transform(lambda *c: _closure(f, nums)(*c)[0], argnums=closure_nums)(*(ARGS[n] for n in nums))
    _same(jac, want)
    assert type(aux["h"]) is np.ndarray
    np.testing.assert_array_equal(aux["h"], np.tanh(X @ W))
    t_jac, t_aux = getattr(torch.func, theirs)(lambda *a: f(*a, lib=torch), argnums=argnums, has_aux=True)(*_t(ARGS))
    _close(jac, t_jac)
    _close(aux["h"], t_aux["h"])


def test_jvp_has_aux_returns_the_aux_as_torch_does():
    f = with_aux(lambda w, x, b, lib: net(w, x, b, lib)[0])
    out, jv, aux = jvp(f, ARGS, DIRECTIONS[0], argnums=0, has_aux=True)
    assert type(aux["h"]) is np.ndarray  # no tangent rides on the aux
    t_out, t_jv, t_aux = torch.func.jvp(_torch_fn(f, (0,)), _t((W,)), _t(DIRECTIONS[:1]), has_aux=True)
    _close((out, jv, aux["h"]), (t_out, t_jv, t_aux["h"]))
    _same((out, jv), jvp(lambda w: f(w, X, B)[0], W, DIRECTIONS[0]))


def test_hvp_and_hvp_operator_has_aux_return_the_aux_as_torch_does():
    f = with_aux(loss)
    hv, aux = hvp(f, ARGS, DIRECTIONS[1:], argnums=(1, 2), has_aux=True)
    op, op_aux = hvp_operator(f, *ARGS, argnums=(1, 2), has_aux=True)
    t_grad = torch.func.grad(_torch_fn(f, (1, 2)), argnums=(0, 1), has_aux=True)
    _, t_hv, t_aux = torch.func.jvp(t_grad, _t(ARGS[1:]), _t(DIRECTIONS[1:]), has_aux=True)
    _close(hv, t_hv)
    _close(op(DIRECTIONS[1:]), t_hv)
    for a in (aux, op_aux):
        assert type(a["h"]) is np.ndarray
        _close(a["h"], t_aux["h"])
    assert op.value == loss(*ARGS)


def test_argnums_on_a_model_with_data_equals_the_closure():
    """The usual research call: differentiate the model, hold the batch, no closure needed."""
    model = layers.MLP([3, 4, 2], dtype=np.float64)
    v = fmap(lambda a: RNG.standard_normal(a.shape), model, exclude=isnumeric)
    forward = lambda m, x: m(x)  # noqa: E731
    f = lambda m, x: anp.sum(m(x) ** 2)  # noqa: E731
    _same(jvp(forward, (model, X), v, argnums=0), jvp(lambda m: forward(m, X), model, v))
    _same(hvp(f, (model, X), v, argnums=0), hvp(lambda m: f(m, X), model, v))
    _same(hvp_operator(f, model, X)(v), hvp(lambda m: f(m, X), model, v), rtol=1e-12)
    _same(jacobian(forward)(model, X), jacobian(lambda m: forward(m, X))(model))
    _same(jacfwd(forward, argnums=1)(model, X), jacfwd(lambda x: forward(model, x))(X))


def test_a_tied_array_in_two_arguments_is_two_variables_under_argnums():
    """design.md section 3: across arguments each argument is its own variable, as in grad."""
    shared = RNG.standard_normal(3)
    f = lambda a, b: anp.sum(anp.sin(a) * b ** 2)  # noqa: E731
    va, vb = RNG.standard_normal(3), RNG.standard_normal(3)
    got = hvp(f, (shared, shared), (va, vb), argnums=(0, 1))
    want = hvp(f, (shared, shared.copy()), (va, vb))
    _same(got, want)
    _same(hvp_operator(f, shared, shared, argnums=(0, 1))((va, vb)), want, rtol=1e-12)


TRANSFORMS = {
    "jvp": lambda argnums: jvp(net, ARGS, DIRECTIONS[0], argnums=argnums),
    "hvp": lambda argnums: hvp(loss, ARGS, DIRECTIONS[0], argnums=argnums),
    "hvp_operator": lambda argnums: hvp_operator(loss, *ARGS, argnums=argnums),
    "jacobian": lambda argnums: jacobian(net, argnums=argnums)(*ARGS),
    "jacfwd": lambda argnums: jacfwd(net, argnums=argnums)(*ARGS),
    "hessian": lambda argnums: hessian(loss, argnums=argnums)(*ARGS),
    "grad": lambda argnums: grad(loss, argnums=argnums)(*ARGS),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
@pytest.mark.parametrize("argnums, message", [
    (3, r"argnums=3 is out of range for a call with 3 positional argument\(s\); use integers from 0 to 2"),
    (-4, r"argnums=-4 is out of range for a call with 3 positional argument\(s\); use integers from 0 to 2 \(or "
         r"from -3, counting from the end\)"),
    ((0, 5), r"argnums=\(0, 5\) is out of range"),
    ((1, 0, 1), r"argnums=\(1, 0, 1\) names argument 1 twice; list each argument once, e\.g\. argnums=\(1, 0\)"),
])
def test_bad_argnums_raise_naming_the_transform(name, argnums, message):
    with pytest.raises(ValueError, match=rf"^{name}: {message}"):
        TRANSFORMS[name](argnums)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_an_argnums_that_is_no_int_is_a_type_error_naming_the_transform(name):
    with pytest.raises(TypeError, match=rf"^{name}: argnums=1\.0 holds 1\.0, a float, not an argument number"):
        TRANSFORMS[name](1.0)


@pytest.mark.parametrize("name", ["jvp", "hvp"])
def test_a_tuple_argnums_takes_one_tangent_per_argument_named(name):
    transform = {"jvp": jvp, "hvp": hvp}[name]
    fn = {"jvp": net, "hvp": loss}[name]
    with pytest.raises(ValueError, match=rf"{name}: argnums=\(0, 2\) names 2 argument\(s\), so tangents must be a "
                                         r"tuple of 2, one per argument named, but got a ndarray"):
        transform(fn, ARGS, DIRECTIONS[0], argnums=(0, 2))
    with pytest.raises(ValueError, match=rf"{name}: tangents\[1\] is of shape \(3, 2\).*primal there is of shape \(2,"):
        transform(fn, ARGS, (DIRECTIONS[0], DIRECTIONS[0]), argnums=(0, 2))


@pytest.mark.parametrize("name, call", [
    ("jvp", lambda: jvp(lambda *a: net(*a)[0], ARGS, DIRECTIONS[0], argnums=0, has_aux=True)),
    ("hvp", lambda: hvp(lambda *a: (loss(*a),), ARGS, DIRECTIONS[0], argnums=0, has_aux=True)),
    ("hvp_operator", lambda: hvp_operator(loss, *ARGS, has_aux=True)),
    ("jacobian", lambda: jacobian(lambda *a: net(*a)[0], has_aux=True)(*ARGS)),
    ("jacfwd", lambda: jacfwd(lambda *a: net(*a)[0], has_aux=True)(*ARGS)),
])
def test_has_aux_without_a_pair_raises_naming_the_transform(name, call):
    with pytest.raises(TypeError, match=rf"^{name}\(\.\.\., has_aux=True\): the function must return a pair"):
        call()


def test_argnums_reads_numpy_ints_and_says_what_is_wrong_otherwise():
    f = lambda a, b: a * b  # noqa: E731
    assert grad(f, argnums=np.int64(1))(2.0, 3.0) == 2.0
    with pytest.raises(TypeError, match=r"argnums=1.0 holds 1.0, a float, not an argument number"):
        grad(f, argnums=1.0)(2.0, 3.0)
    with pytest.raises(ValueError, match=r"the call passed none \(keyword arguments are held"):
        grad(lambda a, b=1.0: a * b)(a=1.0, b=2.0)


@pytest.mark.parametrize("transform", [jacobian, jacfwd, hessian])
def test_jacobians_and_hessian_hold_keyword_arguments_as_grad_does(transform):
    f = lambda x, y=1.0: anp.sum(anp.sin(x) * x) * y  # noqa: E731
    x = np.array([0.3, 1.1])
    got = transform(f)(x, y=3.0)
    expected = transform(lambda x: f(x, 3.0))(x)
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    assert not np.allclose(got, transform(f)(x))
