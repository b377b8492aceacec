"""Checkpoints (issue 22): round trips keep arrays, values and ties; every mismatch names its key path and
both sides; optimiser training resumes bit for bit; torch state dicts go both ways; nothing is ever unpickled."""

import dataclasses
import json
import os
import pickle
import warnings
import zipfile

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
import optimisers
from tests.gallery import gallery
from traversal import CheckpointError, CheckpointWarning, children, fleaves, fmap, fmap_with_path, load, save


def _positions(tree):
    """Every (key path string, leaf) in traversal order, each occurrence of a tie included."""
    out = []
    fmap_with_path(lambda p, x: out.append((str(p), x)), tree, cache=False)
    return out


def _perturbed(tree):
    """A model of the same architecture whose every array and plain value differs (fmap keeps ties)."""
    change = {bool: lambda x: not x, int: lambda x: x + 1, float: lambda x: x + 0.5}

    def f(x):
        if isinstance(x, np.ndarray):
            return np.zeros_like(x) + 7
        return change.get(type(x), lambda x: x)(x)

    return fmap(f, tree)


def _assert_same(saved, loaded):
    """Equal leaves of equal types and dtypes, the same ties (by `is`) at the same positions."""
    a, b = _positions(saved), _positions(loaded)
    assert [p for p, _ in a] == [p for p, _ in b]
    for (path, x), (_, y) in zip(a, b):
        assert type(x) is type(y), path
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), path
        elif type(x) in (int, float, bool, str, complex):
            assert x == y, path
    tied = lambda leaves: [[u is v for _, v in leaves] for _, u in leaves if isinstance(u, np.ndarray)]  # noqa: E731
    assert tied(a) == tied(b)


@pytest.mark.parametrize("name", list(gallery()))
def test_gallery_round_trips_with_ties_and_values(tmp_path, name):
    saved = gallery()[name]
    like = _perturbed(saved)
    save(tmp_path / "g.npz", saved)
    loaded = load(tmp_path / "g.npz", like)
    _assert_same(saved, loaded)


def test_the_whole_gallery_and_numpy_scalars_round_trip(tmp_path):
    saved = {**gallery(), "s": np.float32(2.5), "big": 2**70, "nan": float("nan"), "text": "x", "nothing": None}
    like = {**_perturbed(gallery()), "s": np.float32(0), "big": 0, "nan": 0.0, "text": "", "nothing": 1}
    save(tmp_path / "g.npz", saved)
    loaded = load(tmp_path / "g.npz", like)
    _assert_same(gallery(), {k: loaded[k] for k in gallery()})
    assert loaded["tied"]["x"] is loaded["tied"]["y"]
    assert loaded["tied_layer"][0].weight is loaded["tied_layer"][1].weight
    assert type(loaded["s"]) is np.float32 and loaded["s"] == 2.5 and loaded["big"] == 2**70
    assert np.isnan(loaded["nan"]) and loaded["text"] == "x" and loaded["nothing"] is None


def test_resnet18_round_trips_and_opens_with_plain_numpy(tmp_path):
    saved = layers.resnet18(10, seed=0)
    save(tmp_path / "r.npz", saved)
    _assert_same(saved, load(tmp_path / "r.npz", layers.resnet18(10, seed=1)))
    with np.load(tmp_path / "r.npz", allow_pickle=False) as npz:  # each array under its key path
        assert np.array_equal(npz["layer2[0].downsample.layers[0].weight"], saved.layer2[0].downsample.layers[0].weight)


def test_views_fortran_order_and_a_compressed_copy_round_trip(tmp_path):
    base = np.arange(24.0).reshape(4, 6)
    saved = {"view": base[::2, 1::2], "fortran": np.asfortranarray(base), "ints": np.arange(3, dtype=np.int16)}
    save(tmp_path / "a.npz", saved)
    like = _perturbed(saved)
    _assert_same(saved, load(tmp_path / "a.npz", like))
    with np.load(tmp_path / "a.npz") as npz:  # the same members, deflated: read through zipfile instead
        np.savez_compressed(tmp_path / "z.npz", **{name: npz[name] for name in npz.files})
    _assert_same(saved, load(tmp_path / "z.npz", like))


# ---- every mismatch names the key path and both sides, and loads nothing ----

def _error(tmp_path, saved, like, strict=True):
    save(tmp_path / "m.npz", saved)
    with pytest.raises(CheckpointError) as info:
        load(tmp_path / "m.npz", like, strict=strict)
    return str(info.value)


def test_missing_key(tmp_path):
    msg = _error(tmp_path, {"w": np.ones(2)}, {"w": np.ones(2), "head": {"b": np.ones(3, np.float32)}})
    assert "head.b: missing from the file; like has a float32 array of shape (3,)" in msg


def test_extra_key(tmp_path):
    msg = _error(tmp_path, {"w": np.ones(2), "old": [np.ones((4, 5))]}, {"w": np.ones(2)})
    assert "old[0]: in the file (a float64 array of shape (4, 5)) but not in like" in msg


def test_shape_mismatch(tmp_path):
    msg = _error(tmp_path, {"layer": {"w": np.ones((3, 2))}}, {"layer": {"w": np.ones((2, 3))}})
    assert "layer.w: the file has a float64 array of shape (3, 2) but like has a float64 array of shape (2, 3)" in msg


def test_dtype_mismatch(tmp_path):
    msg = _error(tmp_path, [np.ones(2, np.float32)], [np.ones(2)])
    assert "[0]: the file has a float32 array of shape (2,) but like has a float64 array of shape (2,)" in msg


def test_tie_in_the_file_but_not_in_like(tmp_path):
    w = np.ones(2)
    msg = _error(tmp_path, {"a": w, "b": w}, {"a": np.ones(2), "b": np.ones(2)})
    assert ("b: the file has the same float64 array of shape (2,) as a (a tie) but like has a float64 array "
            "of shape (2,)") in msg


def test_tie_in_like_but_not_in_the_file(tmp_path):
    w = np.ones(2)
    msg = _error(tmp_path, {"a": np.ones(2), "b": np.ones(2)}, {"a": w, "b": w})
    assert ("b: the file has a float64 array of shape (2,) but like has the same float64 array of shape (2,) "
            "as a (a tie)") in msg


def test_a_different_kind_of_leaf(tmp_path):
    msg = _error(tmp_path, {"bias": np.ones(3), "act": np.tanh}, {"bias": None, "act": np.sin})
    assert "bias: the file has a float64 array of shape (3,) but like has the none None" in msg
    assert "act: the file has an opaque numpy.tanh but like has an opaque numpy.sin" in msg


def test_all_problems_at_once_and_nothing_loaded(tmp_path):
    like = {"w": np.zeros((2, 2)), "v": np.zeros(2, np.float32), "n": 0}
    msg = _error(tmp_path, {"w": np.ones(2), "v": np.ones(2), "n": 3, "x": 1.0}, like)
    assert "at 3 key path(s); nothing was loaded" in msg and "strict=False" in msg
    assert like["n"] == 0 and not like["w"].any()  # like is never written into


def test_strict_false_skips_and_lists_missing_and_extra_keys(tmp_path):
    save(tmp_path / "m.npz", {"body": np.ones(2), "head": np.ones(3)})
    head = np.zeros(5)
    with pytest.warns(CheckpointWarning) as record:
        out = load(tmp_path / "m.npz", {"body": np.zeros(2), "new_head": head}, strict=False)
    assert record[0].message.missing == ["new_head"] and record[0].message.extra == ["head"]
    assert np.array_equal(out["body"], np.ones(2)) and out["new_head"] is head
    with pytest.raises(CheckpointError, match="body: the file has a float64 array of shape"):
        load(tmp_path / "m.npz", {"body": np.zeros(3)}, strict=False)  # a mismatch still raises


def test_no_warning_when_everything_matches(tmp_path):
    save(tmp_path / "m.npz", {"w": np.ones(2)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load(tmp_path / "m.npz", {"w": np.zeros(2)}, strict=False)


def test_save_refuses_object_arrays_and_ambiguous_names(tmp_path):
    with pytest.raises(CheckpointError, match=r"the array at b\[0\] has dtype object"):
        save(tmp_path / "x.npz", {"b": [np.array([{}], dtype=object)]})
    with pytest.raises(CheckpointError, match="'a.b'"):
        save(tmp_path / "x.npz", {"a.b": np.ones(1), "a": {"b": np.ones(1)}})
    assert not os.listdir(tmp_path)  # no half-written file left behind


def test_a_save_that_fails_midway_leaves_the_previous_checkpoint_whole(tmp_path, monkeypatch):
    save(tmp_path / "c.npz", {"w": np.ones(2), "v": np.ones(3)})
    calls, open_member = [], zipfile.ZipFile.open

    def fail_on_second_array(archive, name, mode="r", **kwargs):  # a checkpoint is a zip archive (an .npz)
        if mode == "w":
            calls.append(name)
            if len(calls) == 3:  # the metadata, then "w", then "v"
                raise OSError("disk full")
        return open_member(archive, name, mode, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", fail_on_second_array)
    with pytest.raises(OSError, match="disk full"):
        save(tmp_path / "c.npz", {"w": np.zeros(2), "v": np.zeros(3)})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["c.npz"]
    assert np.array_equal(load(tmp_path / "c.npz", {"w": np.zeros(2), "v": np.zeros(3)})["v"], np.ones(3))


# ---- safety: crafted files are refused and their payload never runs ----

class _Payload:
    """Unpickling this creates the sentinel file: the proof that a file ran code."""

    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __reduce__(self):
        return (open, (self.sentinel, "w"))


def _valid_meta(tmp_path):
    save(tmp_path / "valid.npz", {"w": np.ones(2)})
    with np.load(tmp_path / "valid.npz") as npz:
        return npz["__checkpoint__"]


def _crafted_object_array(tmp_path, sentinel, writer):
    writer(tmp_path / "evil.npz", __checkpoint__=_valid_meta(tmp_path), w=np.array([_Payload(sentinel)], dtype=object))
    return tmp_path / "evil.npz"


def _crafted_pickled_member(tmp_path, sentinel, member="w.npy"):
    path = tmp_path / "evil.npz"
    meta = _valid_meta(tmp_path)
    with zipfile.ZipFile(path, "w") as z:
        with z.open("__checkpoint__.npy", "w") as f:
            np.lib.format.write_array(f, meta)
        z.writestr(member, pickle.dumps(_Payload(sentinel)))
    return path


@pytest.mark.parametrize("writer", [np.savez, np.savez_compressed], ids=["stored", "deflated"])
def test_an_object_array_is_refused_and_its_payload_never_runs(tmp_path, writer):
    sentinel = tmp_path / "ran"
    path = _crafted_object_array(tmp_path, sentinel, writer)
    with np.load(path, allow_pickle=True) as npz:  # the control: unpickling does run the payload
        npz["w"]
    assert sentinel.exists()
    sentinel.unlink()
    with pytest.raises(CheckpointError, match="member 'w' holds Python objects, which only pickle can read") as info:
        load(path, {"w": np.zeros(2)})
    assert "damaged" not in str(info.value)
    assert not sentinel.exists()


@pytest.mark.parametrize("member", ["w.npy", "evil.pkl"])
def test_a_pickled_member_is_refused_and_never_runs(tmp_path, member):
    sentinel = tmp_path / "ran"
    path = _crafted_pickled_member(tmp_path, sentinel, member)
    with zipfile.ZipFile(path) as z:  # the control
        pickle.loads(z.read(member))
    assert sentinel.exists()
    sentinel.unlink()
    expected = "is not a .npy array" if member == "w.npy" else r"members \['evil.pkl'\] are not arrays"
    with pytest.raises(CheckpointError, match=expected):
        load(path, {"w": np.zeros(2)})
    assert not sentinel.exists()


def test_a_plain_pickle_and_a_torch_file_are_refused(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    sentinel = tmp_path / "ran"
    (tmp_path / "p.pkl").write_bytes(pickle.dumps(_Payload(sentinel)))
    with pytest.raises(CheckpointError, match="is not a checkpoint archive"):
        load(tmp_path / "p.pkl", {"w": np.zeros(2)})
    torch.save({"w": torch.ones(2)}, tmp_path / "t.pt")
    with pytest.raises(CheckpointError, match=r"torch file\? read it with torch.load\(..., weights_only=True\)"):
        load(tmp_path / "t.pt", {"w": np.zeros(2)})
    assert not sentinel.exists()


def test_a_member_edited_behind_the_metadata_is_caught(tmp_path):
    meta = json.loads(_valid_meta(tmp_path).tobytes())
    np.savez(tmp_path / "e.npz", __checkpoint__=np.frombuffer(json.dumps(meta).encode(), np.uint8),
             w=np.ones(3, np.float32))
    with pytest.raises(CheckpointError, match="member 'w' is float32 .3,., but its metadata says float64 .2,."):
        load(tmp_path / "e.npz", {"w": np.zeros(2)})


_W = {"kind": "array", "dtype": "float64", "shape": [2]}
_DAMAGE = {  # what a damaged __checkpoint__ member holds -> what the error must say is wrong
    "not json": (b"{not json", "'__checkpoint__' member is not JSON .JSONDecodeError"),
    "a list": (b"[1, 2]", "'__checkpoint__' member is a JSON list, not an object"),
    "entries a list": ({"entries": []}, "'entries' is a list, not a JSON object"),
    "tie without to": ({"entries": {"w": _W, "v": {**_W, "kind": "tie"}}}, "entry 'v'.*KeyError: 'to'"),
    "unknown kind": ({"entries": {"w": {**_W, "kind": "blob"}}}, "entry 'w'.*KeyError: 'blob'"),
    "unknown type": ({"entries": {"w": _W, "s": {"kind": "value", "type": "module", "value": 1}}},
                     "entry 's'.*KeyError: 'module'"),
    "float hello": ({"entries": {"w": _W, "s": {"kind": "value", "type": "float", "value": "hello"}}},
                    "entry 's'.*TypeError: its float value is the JSON str 'hello'"),
    "entry not a dict": ({"entries": {"w": _W, "s": 5}}, "entry 's', 5, .*TypeError"),
    "shape not ints": ({"entries": {"w": {**_W, "shape": ["2"]}}}, "entry 'w'.*not a list of ints"),
}


@pytest.mark.parametrize("case", list(_DAMAGE))
def test_damaged_metadata_is_a_checkpoint_error_naming_the_file_and_the_damage(tmp_path, case):
    meta, says = _DAMAGE[case]
    if isinstance(meta, dict):
        meta = json.dumps({"format": "traversal-checkpoint", "version": 1, **meta}).encode()
    np.savez(tmp_path / "d.npz", __checkpoint__=np.frombuffer(meta, np.uint8), w=np.ones(2))
    with pytest.raises(CheckpointError, match=f"^load: .*d.npz is damaged: .*{says}.*save the model again with "
                                              "traversal.save, or load an undamaged copy") as caught:
        load(tmp_path / "d.npz", {"w": np.zeros(2), "v": np.zeros(2), "s": 0.0})
    assert caught.value.__cause__ is not None or case in ("a list", "entries a list")  # the original error, chained


def test_undamaged_metadata_of_another_structure_keeps_its_own_message(tmp_path):
    save(tmp_path / "w.npz", {"w": np.ones(2), "s": 1.5})
    with pytest.raises(CheckpointError, match="(?s)does not fit like at 2 key path.*s: the file has the float 1.5"):
        load(tmp_path / "w.npz", {"w": np.zeros(3), "s": np.tanh})


def test_a_header_claiming_a_huge_array_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge.npz"
    with zipfile.ZipFile(path, "w") as z:
        with z.open("__checkpoint__.npy", "w") as f:
            np.lib.format.write_array(f, _valid_meta(tmp_path))
        with z.open("w.npy", "w") as f:  # a header for 8 TB of float64, and no data
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    with pytest.raises(CheckpointError, match=r"member 'w' is float64 \(1000000000000,\), but its metadata says"):
        load(path, {"w": np.zeros(2)})


# ---- optimiser state: training resumed from a checkpoint is bit-identical ----

def _model(seed):
    rng = np.random.default_rng(seed)
    scale = rng.standard_normal(3)
    return {"mlp": layers.MLP([4, 8, 3], seed=seed), "scale": scale, "again": scale,
            "norm": layers.BatchNorm.init(3)}


_X = np.random.default_rng(9).standard_normal((16, 4)).astype(np.float32)
_Y = np.random.default_rng(10).standard_normal((16, 3))


def _loss(m):
    return anp.sum((m["mlp"](_X) * m["scale"] * m["again"] + m["norm"](_Y) - _Y) ** 2)


def _train(state, model, steps):
    for k in steps:
        if k == 4:
            state = optimisers.freeze(state, ("mlp",))
        if k == 6:
            state = optimisers.adjust(optimisers.thaw(state), lr=0.003)
        state, model = optimisers.update(state, model, autodiff.grad(_loss)(model))
    return state, model


def _optimiser_state(state):
    """Every moment array, step count, frozen flag and hyperparameter inside the state's Leafs."""
    is_leaf = lambda x: isinstance(x, optimisers.Leaf) or not children(x)  # noqa: E731
    leaves = [x for x in fleaves(state, exclude=is_leaf) if isinstance(x, optimisers.Leaf)]
    return [v for x in leaves for v in fleaves((x.state, x.frozen, x.rule))]


@pytest.mark.parametrize("rule", [optimisers.Adam(lr=0.01),
                                  optimisers.OptimiserChain(optimisers.ClipNorm(1.0), optimisers.AdamW(lr=0.01))],
                         ids=["Adam", "ClipNorm+AdamW"])
def test_resumed_training_is_bit_identical(tmp_path, rule):
    model = _model(0)
    state, model = _train(optimisers.setup(rule, model), model, range(10))
    save(tmp_path / "ckpt.npz", {"model": model, "opt": state})
    straight = _train(state, model, range(10, 20))

    fresh = _model(1)
    restored = load(tmp_path / "ckpt.npz", {"model": fresh, "opt": optimisers.setup(rule, fresh)})
    moments = [[a for a in fleaves(restored["opt"][k].state) if isinstance(a, np.ndarray)] for k in ("scale", "again")]
    assert len(moments[0]) == 2 and all(a is b for a, b in zip(*moments))  # the tied array's one state
    loaded_rule = restored["opt"]["mlp"].layers[0].weight.rule
    assert getattr(loaded_rule, "rules", [loaded_rule])[-1].lr == 0.003  # the adjusted hyperparameter
    resumed = _train(restored["opt"], restored["model"], range(10, 20))
    _assert_same(straight, resumed)  # every parameter and buffer, np.array_equal
    a, b = _optimiser_state(straight[0]), _optimiser_state(resumed[0])
    assert len(a) == len(b) > 10 and all(np.array_equal(x, y) for x, y in zip(a, b))  # moments, steps, flags
    naive = _train(optimisers.setup(rule, model), model, range(10, 20))  # a fresh state is not a resume
    assert not np.array_equal(naive[1]["scale"], straight[1]["scale"])


def test_frozen_flags_and_step_counts_are_restored(tmp_path):
    model = _model(0)
    state = optimisers.freeze(optimisers.setup(optimisers.Adam(), model), ("scale",))
    state, model = optimisers.update(state, model, autodiff.grad(_loss)(model))
    save(tmp_path / "s.npz", state)
    back = load(tmp_path / "s.npz", optimisers.setup(optimisers.Adam(), _model(1)))
    assert back["scale"].frozen and not back["mlp"].layers[0].weight.frozen
    assert back["mlp"].layers[0].weight.state[2] == 1 and back["scale"].state[2] == 0
    assert dataclasses.is_dataclass(back["scale"]) and type(back["scale"]) is optimisers.Leaf


# ---- torch interop: save_torch_state_dict is the reverse of load_torch_state_dict ----

def test_resnet18_state_dict_round_trips_against_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    from layers.torch_reference import ResNet18

    torch.manual_seed(0)
    module = ResNet18(10)
    ours = layers.load_torch_state_dict(layers.resnet18(10), module.state_dict())
    back, reference = layers.save_torch_state_dict(ours), module.state_dict()
    assert list(back) == list(reference)  # every name, in torch's order, buffers included
    assert all(back[k].dtype == reference[k].dtype and torch.equal(back[k], reference[k]) for k in reference)

    trained_here = layers.resnet18(10, seed=3)
    other = ResNet18(10)
    other.load_state_dict(layers.save_torch_state_dict(trained_here))  # strict: no key missing or extra
    torch.save(other.state_dict(), tmp_path / "r.pt")
    again = layers.load_torch_state_dict(layers.resnet18(10, seed=4),
                                         torch.load(tmp_path / "r.pt", weights_only=True))
    _assert_same(trained_here, again)


def test_tied_arrays_share_one_tensor_like_torch():
    pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    w = np.ones((2, 2), np.float32)
    state = layers.save_torch_state_dict({"embed": {"weight": w}, "head": {"weight": w}})
    assert state["embed.weight"] is state["head.weight"]
    w[0, 0] = 5  # a copy: the state dict never aliases the model's arrays
    assert state["embed.weight"][0, 0] == 1


def _tied_torch_pair(torch):
    """torch's tied embedding and output layer (the state dict lists the one parameter under both names), and
    ours, tied the same way."""
    module = torch.nn.Sequential(torch.nn.Embedding(4, 3), torch.nn.Linear(3, 4))
    module[1].weight = module[0].weight
    emb = layers.Embedding.init(4, 3)
    return module, layers.Chain([emb, layers.Dense(emb.weight, np.zeros(4, np.float32))])


def test_a_tied_model_loads_and_saves_torch_state_dicts_like_torch():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    module, ours = _tied_torch_pair(torch)
    reference = module.state_dict()
    assert list(reference) == ["0.weight", "1.weight", "1.bias"]  # torch lists the tie under both names
    loaded = layers.load_torch_state_dict(ours, reference)
    assert loaded.layers[0].weight is loaded.layers[1].weight  # the tie is kept
    assert np.array_equal(loaded.layers[1].weight, reference["1.weight"].numpy())
    back = layers.save_torch_state_dict(loaded)
    assert list(back) == list(reference) and all(torch.equal(back[k], reference[k]) for k in reference)
    module.load_state_dict(back)  # strict
    again = layers.load_torch_state_dict(ours, layers.save_torch_state_dict(ours))  # our own round trip
    assert again.layers[0].weight is again.layers[1].weight


def test_a_tie_whose_torch_values_differ_is_refused_naming_both_keys():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    _, ours = _tied_torch_pair(torch)
    state = {k: v.clone() for k, v in layers.save_torch_state_dict(ours).items()}
    state["1.weight"] += 1
    with pytest.raises(ValueError, match="load_torch_state_dict: torch keys '0.weight' and '1.weight' hold "
                                         "different values, but the model ties them.*make them equal, or untie"):
        layers.load_torch_state_dict(ours, state)


def test_torch_names_that_collide_and_bare_arrays_are_refused():
    pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    two = {"b": {"gamma": np.ones(3), "weight": np.zeros(3)}}
    with pytest.raises(ValueError, match="save_torch_state_dict: b.gamma and b.weight both become torch key "
                                         "'b.weight'.*rename one of them"):
        layers.save_torch_state_dict(two)
    with pytest.raises(ValueError, match="load_torch_state_dict: b.gamma and b.weight both become torch key"):
        layers.load_torch_state_dict(two, {"b.weight": np.ones(3)})
    for call in (layers.save_torch_state_dict, lambda m: layers.load_torch_state_dict(m, {"": np.ones(3)})):
        with pytest.raises(TypeError, match="_torch_state_dict: the model is a ndarray with no children.*pass a "
                                            "layer, a Chain, or a dict such as {'weight': array}"):
            call(np.ones(3, np.float32))



def test_each_member_is_an_npy_file_numpy_reads_back_exactly(tmp_path):
    """save writes a contiguous array's memory straight after its header: np.load (the oracle) must read back
    every layout and dtype as it was, the views and Fortran-ordered arrays that take write_array's path too."""
    base = np.arange(24.0).reshape(4, 6)
    tree = {"c": base, "f": np.asfortranarray(base), "strided": base[::2, 1::2], "big": np.arange(5, dtype=">f4"),
            "complex": np.array([1 + 2j, 3 - 4j]), "scalar": np.array(2.5), "empty": np.zeros((0, 3)),
            "half": np.linspace(0, 1, 7, dtype=np.float16), "ints": np.arange(6, dtype=np.int16).reshape(2, 3)}
    save(tmp_path / "c.npz", tree)
    with np.load(tmp_path / "c.npz", allow_pickle=False) as members:
        for name, array in tree.items():
            read = members[name]
            assert read.dtype == array.dtype and read.shape == array.shape, name
            assert np.array_equal(read, array), name
