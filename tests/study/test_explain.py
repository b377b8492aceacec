"""autodiff.explain: one rule's ops at first and second order, checked against PyTorch's double backward."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import defvjp, primitive

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

cube = primitive(lambda x: x ** 3, name="cube_explained")
defvjp(cube, lambda g, ans, x: g * 3.0 * x ** 2)

rng = np.random.default_rng(0)
CASES = [
    ("sin", anp.sin, torch.sin, (np.array([0.5, -1.2]),)),
    ("matmul", anp.matmul, torch.matmul, (rng.standard_normal((2, 3)), rng.standard_normal((3, 2)))),
    ("user primitive", cube, lambda x: x ** 3, (np.array([2.0, -0.5]),)),
]


def _torch_second_order(f, xs):
    """``(cotangents of xs and g)`` of the pullback of ``f``'s pullback, ones for ``g`` and ``h``."""
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    out = f(*ts)
    g = torch.ones_like(out, requires_grad=True)
    first = torch.autograd.grad(out, ts, g, create_graph=True)
    second = torch.autograd.grad(first, ts + [g], [torch.ones_like(c) for c in first], allow_unused=True)
    return [np.zeros(t.shape) if s is None else s.detach().numpy() for s, t in zip(second, ts + [g])]


@pytest.mark.parametrize("name, prim, torch_f, xs", CASES, ids=[c[0] for c in CASES])
def test_the_traced_second_order_pullback_equals_torchs_double_backward(name, prim, torch_f, xs):
    e = autodiff.explain(prim, *xs)
    ours = e.trace.output  # the cotangents of x (each) and of g that the order-2 listing ends with
    for a, b in zip(ours, _torch_second_order(torch_f, xs)):
        assert np.allclose(a, b)


def _sections(text):
    """{title: [listing lines]} of an explanation."""
    out, title = {}, None
    for line in text.splitlines()[1:]:
        if not line.startswith((" ", "tape ")):
            title = line.split(":")[0]
            out[title] = []
        elif line.startswith(" "):
            out[title].append(line.strip())
    return out


@pytest.mark.parametrize("name, prim, torch_f, xs", CASES, ids=[c[0] for c in CASES])
def test_each_order_lists_the_ops_its_rule_called_with_their_levels(name, prim, torch_f, xs):
    text = str(autodiff.explain(prim, *xs))
    sections = _sections(text)
    assert list(sections) == ["forward", "order 1", "order 2"]
    forward = [line for line in sections["forward"] if "=" in line]
    assert len(forward) == 1 and forward[0].split(" = ")[1].startswith(prim.__name__ + "(")  # one entry
    assert text.splitlines()[2] == "tape 3 (level 3)"  # the forward is the innermost level, listed first
    order1 = [line for line in sections["order 1"] if "# pullback of tape 3 %" in line]
    assert order1 and all("@level 1" in line for line in order1)  # recorded at level 2 over level-1 values
    live = {line.split(" =")[0] for line in sections["order 1"] if "=" in line and "# dead" not in line}
    order2 = [line for line in sections["order 2"] if "# pullback of tape 2 %" in line]
    assert order2 and {line.rsplit(" ", 1)[1] for line in order2} <= live  # each the pullback of a live order-1 op
    assert sections["order 2"][-1].startswith("out ") and sections["order 1"][-1].startswith("out ")


def test_order_one_stops_at_the_pullback():
    text = str(autodiff.explain(anp.sin, 0.5, order=1))
    assert list(_sections(text)) == ["forward", "order 1"]
    assert "sin_backward(%1:float64[], %0:float64[])" in text


def test_a_function_that_is_not_a_primitive_is_explained_op_by_op():
    text = str(autodiff.explain(anp.take, np.ones(3), np.array([0, 2]), order=1))
    assert "take is not a primitive" in text and "scatter_add" in text


def test_bad_calls_say_what_to_pass():
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        autodiff.explain(anp.sin, 0.5, order=3)
    with pytest.raises(TypeError, match=r"explain\(sin, \.\.\.\): no float argument"):
        autodiff.explain(anp.sin, 1)
