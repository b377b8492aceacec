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
    t = trace(lambda m: total(autodiff.sumsq, m), model)
    entries = [line for line in str(t).splitlines() if " = " in line and "in  " not in line]
    assert entries == ["  %2 = total(<sumsq>, 0.0, %0:float64[2], %1:float64[1]) -> float64[]  keeps %0, %1"]
    assert "%0 m.x = m.y dense float64[2], %1 m.z dense float64[1]" in t.backward()  # a known reduction: eager
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
