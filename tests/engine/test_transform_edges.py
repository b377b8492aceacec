"""Edges of the transforms: complex and integer primals in forward mode, ggnvp's arguments, a tuple returned
without has_aux, and concatenate(axis=None).  Each was silently wrong or a misleading error before."""

import numpy as np
import pytest

import autodiff.numpy as anp
import layers
import traversal
from autodiff import ggnvp, grad, gradcheck, hessian, hvp, jacfwd, jacrev, jvp, linearize, value_and_grad, vmap
from tests.oracle import needs_torch, torch

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # torch.func

rng = np.random.default_rng(7)
Z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
V = rng.standard_normal(3) + 1j * rng.standard_normal(3)


# --- 1. complex primals: jacfwd and hessian refuse, jvp and hvp agree with jacrev and torch ---------------------

def _abs_squared(z, lib):
    return lib.abs(z) ** 2 * lib.real(z) if lib is anp else z.abs() ** 2 * z.real


@pytest.mark.parametrize("primal", [Z, {"w": np.ones(2), "z": Z}], ids=["bare", "in a dict"])
def test_jacfwd_refuses_complex_inputs_and_names_the_fix(primal):
    f = (lambda z: anp.abs(z)) if type(primal) is np.ndarray else (lambda p: anp.abs(p["z"]) * 2.0)
    with pytest.raises(TypeError, match=r"jacfwd: arg 0.*complex128.*autodiff\.jacrev.*autodiff\.jvp"):
        jacfwd(f)(primal)


@needs_torch
def test_jacfwd_refusal_matches_torch_func():
    with pytest.raises(RuntimeError, match="real"):
        torch.func.jacfwd(torch.abs)(torch.tensor(Z))


def test_hessian_refuses_complex_inputs_and_names_hvp():
    with pytest.raises(TypeError, match=r"hessian: arg 1.*complex128.*autodiff\.hvp"):
        hessian(lambda x, z: anp.sum(anp.abs(z) ** 2) * x, argnums=1)(2.0, Z)


@needs_torch
@needs_torch
def test_jacrev_refuses_complex_outputs_as_torch_does_and_the_split_form_matches_torch():
    """Rows from real unit cotangents keep only the real part's derivative: refused, as torch.func does."""
    t = np.array([0.3, -1.2])
    with pytest.raises(TypeError, match=r"jacobian: output 0 is complex.*anp\.real\(f\(x\)\)"):
        jacrev(lambda t: anp.exp(1j * t))(t)
    with pytest.raises(RuntimeError, match="real"):
        torch.func.jacrev(lambda t: torch.exp(1j * t))(torch.tensor(t))
    got = jacrev(lambda t: (anp.real(anp.exp(1j * t)), anp.imag(anp.exp(1j * t))))(t)
    want = torch.func.jacrev(lambda t: (torch.exp(1j * t).real, torch.exp(1j * t).imag))(torch.tensor(t))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-12)


def test_complex_jvp_matches_torch_and_the_rows_of_jacrev():
    out, tangent = jvp(lambda z: _abs_squared(z, anp), Z, V)
    _, want = torch.func.jvp(lambda z: _abs_squared(z, torch), (torch.tensor(Z),), (torch.tensor(V),))
    assert np.allclose(tangent, want.numpy())
    # docs/complex.md: the change of a real output along v is Re(row * v)
    assert np.allclose(tangent, np.real(jacrev(lambda z: _abs_squared(z, anp))(Z) @ V))


@needs_torch
@pytest.mark.parametrize("mode", ["reverse_over_forward", "forward_over_reverse"])
def test_complex_hvp_is_the_conjugate_of_torchs_derivative_of_its_gradient(mode):
    got = hvp(lambda z: anp.sum(_abs_squared(z, anp)), Z, V, mode=mode)
    torch_grad = torch.func.grad(lambda z: torch.sum(_abs_squared(z, torch)))
    _, want = torch.func.jvp(torch_grad, (torch.tensor(Z),), (torch.tensor(V),))
    assert np.allclose(got, np.conj(want.numpy()))  # ours is conj of torch's gradient (docs/complex.md)


# --- 2. integer primals: forward mode refuses a direction it would drop ----------------------------------------

INT_CASES = {
    "jvp tuple": (lambda: jvp(lambda x: x * 2.5, (np.arange(3),), (np.ones(3),)), r"jvp: tangents\[0\] .*int64"),
    "jvp bare": (lambda: jvp(lambda x: x * 2.5, np.arange(3), np.ones(3)), r"jvp: tangent .*int64"),
    "jvp python int": (lambda: jvp(lambda x: x ** 3, (2,), (1,)), r"jvp: tangents\[0\] .*int"),
    "jvp dict leaf": (lambda: jvp(lambda m: m["a"] * m["k"], {"a": np.ones(2), "k": np.arange(2)},
                                  {"a": np.ones(2), "k": np.ones(2)}), r"jvp: tangent\.k .*int64"),
    "jvp bool": (lambda: jvp(lambda x: x * 1.0, (np.array([True]),), (np.array([1.0]),)), r"jvp: .*dtype bool"),
    "linearize": (lambda: linearize(lambda x: x * 2.5, np.arange(3))[1](np.ones(3)), r"linearize: tangents\[0\]"),
    "hvp dict leaf": (lambda: hvp(lambda m: anp.sum(m["a"] ** 3) * m["k"], {"a": np.ones(2), "k": 3},
                                  {"a": np.ones(2), "k": 1}), r"hvp: tangent\.k .*int"),
    "jacfwd": (lambda: jacfwd(lambda x: x * 2.5)(np.arange(3)), r"jacfwd: argument 0 has dtype int64"),
}


@pytest.mark.parametrize("name", INT_CASES)
def test_forward_mode_refuses_a_direction_at_an_integer_leaf(name):
    call, where = INT_CASES[name]
    with pytest.raises(TypeError, match=where + r".*(cast the primal to float|Pass a float)"):
        call()


def test_jacfwd_refuses_an_integer_argument_as_jacrev_does():
    with pytest.raises(TypeError) as reverse:
        jacrev(lambda x: x * 2.5)(np.arange(3))
    with pytest.raises(TypeError) as forward:
        jacfwd(lambda x: x * 2.5)(np.arange(3))
    assert str(forward.value) == "jacfwd: " + str(reverse.value)


@needs_torch
@pytest.mark.parametrize("direction", [None, np.zeros(2)], ids=["None", "zeros"])
def test_no_direction_at_an_integer_leaf_is_allowed_and_matches_torch(direction):
    x, k, v = rng.standard_normal(3), np.array([0, 2]), rng.standard_normal(3)
    _, got = jvp(lambda x, k: anp.sum(x[k] ** 2), (x, k), (v, direction))
    _, want = torch.func.jvp(lambda x: torch.sum(x[torch.tensor(k)] ** 2), (torch.tensor(x),), (torch.tensor(v),))
    assert np.allclose(got, want.numpy())


def test_an_fmap_made_tangent_keeps_non_numeric_leaves_in_place():
    model = layers.MLP([2, 3, 1], dtype=np.float64)
    kept = traversal.fmap(np.ones_like, model, exclude=traversal.isnumeric)  # the activation is left as it is
    cleared = traversal.fmap(np.ones_like, model)
    x = rng.standard_normal((4, 2))
    assert np.allclose(jvp(lambda m: m(x), model, kept)[1], jvp(lambda m: m(x), model, cleared)[1])


# --- 3. ggnvp reads primals and tangents as jvp and hvp do ------------------------------------------------------

def _torch_ggnvp(f, g, w, v):
    """J_fᵀ H_g J_f v by torch.func (jvp, hvp of g, vjp)."""
    w, v = torch.tensor(w), torch.tensor(v)
    out, jv = torch.func.jvp(f, (w,), (v,))
    _, hjv = torch.func.jvp(torch.func.grad(g), (out,), (jv,))
    return torch.func.vjp(f, w)[1](hjv)[0].numpy()


@needs_torch
def test_ggnvp_of_a_bare_primal_is_bare_and_matches_torch():
    w, v = rng.standard_normal((1, 3)), rng.standard_normal((1, 3))
    got = ggnvp(lambda a: anp.tanh(a), lambda o: anp.sum(o ** 4), w, v)
    assert got.shape == (1, 3)
    assert np.allclose(got, _torch_ggnvp(torch.tanh, lambda o: torch.sum(o ** 4), w, v))
    assert np.allclose(got, ggnvp(lambda a: anp.tanh(a), lambda o: anp.sum(o ** 4), (w,), (v,))[0])


def test_ggnvp_of_a_bare_model_mirrors_the_model_as_hvp_does():
    model = layers.MLP([2, 3, 1], dtype=np.float64)
    v = traversal.fmap(np.ones_like, model, exclude=traversal.isnumeric)
    x = rng.standard_normal((4, 2))
    got = ggnvp(lambda m: m(x), lambda o: anp.sum(o ** 2), model, v)
    want = ggnvp(lambda m: m(x), lambda o: anp.sum(o ** 2), (model,), (v,))[0]
    got_leaves, want_leaves = traversal.fleaves(got), traversal.fleaves(want)
    assert len(got_leaves) == len(want_leaves) == 5  # two weights, two biases, None for the activation
    assert all(a is b is None or np.allclose(a, b) for a, b in zip(got_leaves, want_leaves))
    hvp_leaves = traversal.fleaves(hvp(lambda m: anp.sum(m(x) ** 2), model, v))
    assert [np.shape(a) for a in got_leaves] == [np.shape(h) for h in hvp_leaves]


def test_ggnvp_argnums_holds_the_other_arguments_as_a_closure_does():
    w, v, c = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    g = lambda o: anp.sum(anp.sin(o) ** 2)  # noqa: E731
    got = ggnvp(lambda w, c: anp.tanh(w * c), g, (w, c), v, argnums=0)
    assert np.allclose(got, ggnvp(lambda w: anp.tanh(w * c), g, w, v))
    (pair,) = ggnvp(lambda w, c: anp.tanh(w * c), g, (w, c), (v,), argnums=(0,))
    assert np.allclose(pair, got)


def test_ggnvp_of_a_linear_f_at_a_bare_float_is_hvp():
    assert np.isclose(ggnvp(lambda a: a * 2.0, lambda o: anp.sin(o) * o, 0.7, 1.3),
                      hvp(lambda a: anp.sin(a * 2.0) * (a * 2.0), 0.7, 1.3))


def test_ggnvp_names_itself_for_a_tangent_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"ggnvp: tangent is of shape \(2,\)"):
        ggnvp(lambda a: a, lambda o: anp.sum(o ** 2), np.ones(3), np.ones(2))


# --- 6. a tuple returned without has_aux -----------------------------------------------------------------------

def _pair(a):
    return anp.sum(a ** 3), 1


TUPLE_CASES = {
    "grad": lambda: grad(_pair)(np.ones(2)),
    "value_and_grad": lambda: value_and_grad(_pair)(np.ones(2)),
    "hessian": lambda: hessian(_pair)(np.ones(2)),
    "hvp": lambda: hvp(_pair, np.ones(2), np.ones(2)),
    "hvp forward_over_reverse": lambda: hvp(_pair, np.ones(2), np.ones(2), mode="forward_over_reverse"),
}


@pytest.mark.parametrize("name", TUPLE_CASES)
def test_a_tuple_returned_without_has_aux_says_so(name):
    transform = name.split()[0].replace("value_and_grad", "grad")
    with pytest.raises(TypeError, match=rf"^{transform}: f returned a tuple of 2; the function must return a "
                                        r"scalar \(did you mean has_aux=True, returning \(loss, aux\)\?\)"):
        TUPLE_CASES[name]()


def test_the_same_function_with_has_aux_works():
    x = rng.standard_normal(2)
    assert np.allclose(hvp(_pair, x, np.ones(2), has_aux=True)[0], hvp(lambda a: _pair(a)[0], x, np.ones(2)))


# --- 7. concatenate(axis=None) ---------------------------------------------------------------------------------

def _flat_join(x):
    return anp.concatenate([anp.sin(x), x * x, np.ones(3)], axis=None)


def test_concatenate_axis_none_passes_gradcheck_to_second_order():
    assert gradcheck(_flat_join, rng.standard_normal((2, 2)), order=2)


@needs_torch
def test_concatenate_axis_none_grad_and_vmap_match_torch():
    x = rng.standard_normal((3, 2, 2))
    loss = lambda x: anp.sum(anp.exp(_flat_join(x)) * np.arange(11.0))  # noqa: E731
    tloss = lambda t: torch.sum(torch.exp(torch.cat([torch.sin(t).ravel(), (t * t).ravel(),  # noqa: E731
                                                     torch.ones(3, dtype=t.dtype)])) * torch.arange(11.0))
    want = torch.func.vmap(torch.func.grad(tloss))(torch.tensor(x)).numpy()
    assert np.allclose(grad(loss)(x[0]), want[0])
    assert np.allclose(vmap(grad(loss))(x), want)
    assert np.allclose(vmap(_flat_join)(x), np.stack([_flat_join(xi) for xi in x]))
