"""autodiff.trace: the listing format, cotangent kinds that match what happened, DOT export, tangents."""

import re
import shutil

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff import Thunk, ZeroTangent, show, ties, trace
from autodiff.extend import defvjp, defvjp_joint, primitive
from traversal import total


def test_listing_pins_entries_levels_and_key_paths():
    model = {"w": np.ones((2, 3)), "layers": [{"b": np.zeros(3)}], "n": 4}
    def loss(model, x):
        return anp.sum(anp.tanh(x @ model["w"] + model["layers"][0]["b"]))

    t = trace(loss, model, np.ones((1, 2)))
    assert str(t).splitlines() == [
        "tape 1 (level 1)",
        "  in  %0 model.w float64[2,3]",
        "  in  %1 model.layers[0].b float64[3]",
        "  in  %2 x float64[1,2]",
        "  %3 = matmul(%2:float64[1,2], %0:float64[2,3]) -> float64[1,3]  keeps %2, %0",
        "  %4 = add(%3:float64[1,3], %1:float64[3]) -> float64[1,3]  keeps %3, %1",
        "  %5 = tanh(%4:float64[1,3]) -> float64[1,3]  keeps %4",
        "  %6 = sum(%5:float64[1,3]) -> float64[]  keeps %5",
        "  out %6",
    ]


def test_second_order_shows_two_levels():
    t = trace(lambda x: x * autodiff.grad(lambda y: x * anp.sin(y))(x), 0.5)
    listing = str(t)
    assert "tape 1 (level 1)" in listing and "tape 2 (level 2)" in listing
    assert "in  %0 (tape 1 %0) float64[] @level 1" in listing  # the inner tape traces an outer value
    backward = t.backward()
    assert "backward of tape 1 (level 1)" in backward and "backward of tape 2 (level 2)" in backward


def test_tied_weight_is_one_input_with_several_uses_and_an_accumulation_point():
    w = np.array([1.0, 2.0])
    t = trace(lambda m: anp.sum(m["enc"] * 3.0) + anp.sum(anp.sin(m["dec"])), {"enc": w, "dec": w})
    assert "in  %0 m.enc = m.dec float64[2]  used by %1, %3" in str(t)
    assert "accumulated: %0 received 2 cotangents and added them" in t.backward()


def test_thunk_kinds_match_what_happened():
    ran = []
    scale = primitive(lambda x, c: x * c, "scale_logged")

    def pullback(g, ans, x, c):
        return (Thunk(lambda: ran.append("x") or g * c), Thunk(lambda: ran.append("c") or anp.sum(g * x)))

    defvjp_joint(scale, pullback)
    t = trace(lambda x: anp.sum(scale(x, 2.0)), np.ones(3))
    assert ran == ["x"]
    assert t.thunks() == [(1, 1, True, True), (1, 1, False, False)]  # kept and evaluated; dropped, never run
    assert "1 thunk(s) for constants dropped" in t.backward()


def test_symbolic_zero_is_reported_and_upstream_pullback_skipped():
    ran = []
    logged = primitive(np.exp, "exp_logged")
    defvjp(logged, lambda g, ans, x: ran.append(1) or g * ans)
    t = trace(lambda x: anp.sum(anp.sign(logged(x))) + anp.sum(x), np.ones(2))
    lines = t.backward().splitlines()
    assert any("sign: got dense float64[2] -> %1 zero" in line for line in lines)
    assert any("exp_logged: got zero -> skipped, zero passed to %0" in line for line in lines)
    assert ran == []


def test_total_is_one_entry_whose_pullback_maps_thunks_onto_key_paths():
    m1 = np.array([1.0, 2.0])
    model = {"x": m1, "y": m1, "z": np.array([3.0])}
    from autodiff._hooks import REFERENCE

    t = trace(lambda m: total(autodiff.sumsq, m), model)
    entries = [line for line in str(t).splitlines() if " = " in line and "in  " not in line]
    if REFERENCE:  # the generic entry: f differentiated per parameter on tapes of its own, thunks pulled back
        assert entries[0] == "  %2 = total(<f=sumsq>, 0.0, %0:float64[2], %1:float64[1]) -> float64[]  keeps %0, %1"
        assert entries[1:] == ["  %1 = sumsq(%0:float64[2]) -> float64[]  keeps %0",
                               "  %1 = sumsq(%0:float64[1]) -> float64[]  keeps %0"]
    else:  # the fused entry (autodiff._accel.reductions): its gradients at g = 1 given eagerly
        assert entries == ["  %2 = total(<sumsq>, 0.0, %0:float64[2], %1:float64[1]) -> float64[]  keeps %0, %1"]
        assert "%0 m.x = m.y dense float64[2], %1 m.z dense float64[1]" in t.backward()
    t = trace(lambda m: total(lambda p: anp.sum(anp.cos(p)), m), model)
    assert "%0 m.x = m.y thunk (evaluated) float64[2], %1 m.z thunk (evaluated) float64[1]" in t.backward()


def _parse_dot(text):
    """A small DOT reader: the nodes declared, the edges, and balanced braces."""
    assert text.startswith("digraph") and text.count("{") == text.count("}")
    nodes = set(re.findall(r"^\s+(t\d+_\d+) \[", text, re.M))
    edges = re.findall(r"^\s+(t\d+_\d+) -> (t\d+_\d+)( \[style=dashed\])?;", text, re.M)
    assert edges and all(a in nodes and b in nodes for a, b, _ in edges)
    return nodes, edges


def test_dot_export_parses_and_renders_when_graphviz_is_installed(tmp_path):
    t = trace(lambda x: x * autodiff.grad(lambda y: x * anp.sin(y))(x), 0.5)
    dot = t.to_dot()
    nodes, edges = _parse_dot(dot)
    assert "fillcolor=lightblue" in dot and "fillcolor=lightsalmon" in dot  # coloured by level
    assert any(dashed for _, _, dashed in edges)  # the outer value feeding the inner tape
    if shutil.which("dot"):
        png = t.render(tmp_path / "two_levels.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        try:
            t.render(tmp_path / "two_levels.png")
        except RuntimeError as e:
            assert "apt-get install graphviz" in str(e)


def test_show_distinguishes_none_zero_and_thunks():
    g = {"w": np.array([3.0, 4.0]), "frozen": None, "z": ZeroTangent(), "lazy": Thunk(lambda: 1.0)}
    text = show(g).splitlines()
    assert text == [
        "grad: dict",
        "  grad.w  float64[2]  norm 5",
        "  grad.frozen  None (no gradient)",
        "  grad.z  ZeroTangent (symbolic zero)",
        "  grad.lazy  Thunk (not evaluated)",
    ]


def test_ties_shows_where_each_tied_gradient_went():
    w = np.ones(2)
    model = {"embed": w, "head": {"weight": w}, "b": np.zeros(1)}
    g = autodiff.grad(lambda m: anp.sum(m["embed"] * 2.0) + anp.sum(m["head"]["weight"]))(model)
    text = ties(model, g)
    assert text.startswith("model.embed = model.head.weight  float64[2]: gradient at model.embed (norm ")
    assert text.endswith("None at model.head.weight")
    assert autodiff.gradcheck(lambda m: anp.sum(m["embed"] * 2.0) + anp.sum(m["head"]["weight"]), model)


# The listing's notes on issue 19's second-order program: the HVP of Σ sin(x)·x + Σ sign(x), with a dead exp.

def _f_with_dead_exp(x):
    anp.exp(x)
    return anp.sum(anp.sin(x) * x) + anp.sum(anp.sign(x))


_X, _V = np.array([0.5, -1.0]), np.array([1.0, 0.5])


def _tapes(listing):
    """{tape title: [its lines]} for a listing."""
    tapes, current = {}, None
    for line in listing.splitlines():
        if not line.startswith(" "):
            current = tapes.setdefault(line, [])
        else:
            current.append(line.strip())
    return tapes


def _entry(lines, name):
    return [line for line in lines if f"= {name}(" in line]


def test_cotangent_is_pulled_back_and_reverse_over_reverse_gives_the_hvp():
    t = trace(lambda x: autodiff.grad(_f_with_dead_exp)(x), _X, cotangent=_V)
    assert np.allclose(t.gradients[0], autodiff.hvp(_f_with_dead_exp, _X, _V))
    u = np.array([2.0, -3.0])
    _, pullback = autodiff.vjp(lambda x: anp.sin(x) * x, _X)
    assert np.allclose(trace(lambda x: anp.sin(x) * x, _X, cotangent=u).gradients[0], pullback(u)[0])


def test_cotangent_and_tangents_together_are_refused():
    import pytest

    with pytest.raises(TypeError, match="not both"):
        trace(anp.sin, 0.5, tangents=(1.0,), cotangent=1.0)


def test_dead_entries_are_those_with_no_path_to_out():
    tapes = _tapes(str(trace(lambda x: autodiff.grad(_f_with_dead_exp)(x), _X, cotangent=_V)))
    inner = tapes["tape 2 (level 2)"]
    assert [line.split(" =")[0] for line in inner if "# dead" in line] == ["%1"]  # only the exp
    assert "# dead" in _entry(inner, "exp")[0] and "# dead" not in _entry(inner, "sign")[0]
    outer = tapes["tape 1 (level 1)"]
    assert "# dead" in _entry(outer, "exp")[0] and "# dead" not in _entry(outer, "sin")[0]
    assert not any("# dead" in line for line in _entry(outer, "sin_backward"))


def test_every_tape_has_an_out_line_and_an_inner_one_is_the_inner_output():
    tapes = _tapes(str(trace(lambda x: autodiff.grad(_f_with_dead_exp)(x), _X, cotangent=_V)))
    assert tapes["tape 1 (level 1)"][-1] == "out %11" and "= add(%9" in tapes["tape 1 (level 1)"][-2]
    inner = tapes["tape 2 (level 2)"]
    assert inner[-1] == "out %7" and inner[-2].startswith("%7 = add(")
    never = _tapes(str(trace(lambda x: autodiff.vjp(anp.sin, x)[0] * x, 0.5)))["tape 2 (level 2)"]
    assert never[-1].startswith("out ? (no pullback ran on this tape")


def test_provenance_names_the_inner_entry_whose_pullback_recorded_an_outer_entry():
    marker = primitive(lambda g: g, "marker")  # an op only `tagged`'s pullback records
    defvjp(marker, lambda g, ans, x: marker(g))
    tagged = primitive(np.sin, "tagged")
    defvjp(tagged, lambda g, ans, x: marker(g) * anp.cos(x))
    t = trace(lambda x: autodiff.grad(lambda y: anp.sum(anp.exp(y) * tagged(y)))(x), _X)
    tapes = _tapes(str(t))
    inner = tapes["tape 2 (level 2)"]
    tagged_index = _entry(inner, "tagged")[0].split(" =")[0]
    outer = tapes["tape 1 (level 1)"]
    assert _entry(outer, "marker")[0].endswith(f"# pullback of tape 2 {tagged_index}")
    assert _entry(outer, "cos")[0].endswith(f"# pullback of tape 2 {tagged_index}")
    assert _entry(outer, "tagged")[0].endswith(f"# forward of tape 2 {tagged_index}")


def test_sums_of_cotangents_are_told_from_the_functions_own_adds():
    t = trace(lambda x: autodiff.grad(lambda y: anp.sum(anp.sin(y) * y))(x) + x, _X)
    adds = _entry(_tapes(str(t))["tape 1 (level 1)"], "add")
    assert adds[0].endswith("# sum of cotangents for tape 2 %0")  # y's two cotangents
    assert "#" not in adds[1]  # `+ x`, written by the traced function


def test_third_order_sums_are_found_whether_the_pass_adds_before_or_after_reporting():
    t = trace(lambda x: autodiff.grad(lambda y: autodiff.grad(lambda z: anp.sin(z) * z)(y))(x), 0.5)
    outer = _tapes(str(t))["tape 1 (level 1)"]
    assert [line.split("  # ")[-1] for line in _entry(outer, "add")][-2:] == ["sum of cotangents for tape 2 %0"] * 2
    assert autodiff.grad(autodiff.grad(autodiff.grad(lambda z: anp.sin(z) * z)))(0.5) == t.gradients[0]


def test_small_constants_print_by_value_and_large_ones_by_type():
    listing = str(trace(lambda x: anp.sum(x * np.arange(6.0)) + anp.sum(x[0] * np.ones(7)), np.ones(6)))
    assert "multiply(%0:float64[6], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])" in listing
    assert "const float64[7]" in listing
    listing = str(trace(lambda x: anp.sum(x * np.array([0.5, 2.0], np.float32)), np.ones(2, np.float32)))
    assert "[0.5, 2.0]:float32" in listing


def test_forward_listing_shows_primal_and_tangent_per_op_and_no_tape():
    cube = primitive(lambda x: x ** 3, "cube_no_jvp")
    defvjp(cube, lambda g, ans, x: g * 3.0 * x * x)
    t = trace(lambda x: anp.sin(cube(x)), np.ones(2), tangents=(np.ones(2),))
    assert t.tapes == [] and str(t).splitlines() == [  # pushed through its pullback: no tape of its own shown
        "pushforward 1 (level 1)",
        "  in  %0 x float64[2]  tangent float64[2]",
        "  %1 = cube_no_jvp(%0) -> float64[2]  tangent float64[2]  (via its pullback)",
        "  %2 = sin(%1) -> float64[2]  tangent float64[2]  (jvp rule)",
        "  out %2",
    ]


def test_forward_over_reverse_listing_has_the_same_notes():
    t = trace(lambda x: autodiff.grad(_f_with_dead_exp)(x), _X, tangents=(_V,))
    assert np.allclose(t.tangent, autodiff.hvp(_f_with_dead_exp, _X, _V))
    push = _tapes(str(t))["pushforward 1 (level 1)"]
    assert "# dead; forward of tape 1 %1" in _entry(push, "exp")[0]
    assert _entry(push, "sin_backward")[0].endswith("# pullback of tape 1 %2")


def test_a_function_taking_star_args_gets_positional_names():
    t = trace(autodiff.grad(lambda y: anp.sum(anp.sin(y))), _X, tangents=(_V,))
    assert "in  %0 arg0 float64[2]" in str(t)
