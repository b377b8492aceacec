"""Checkpoints never load something other than what was saved (issue 36): concurrent saves to one path leave one
whole save; every byte flip and truncation is refused or loads the saved tree bit for bit (the CRC-32 of every
member is checked); headers are checked before a byte is inflated (zip bombs); damaged and crafted files raise
CheckpointError only, the cause chained; save refuses what it could not load back (ndarray subclasses, NUL and
overlong keys)."""

import io
import json
import threading
import tracemalloc
import zipfile

import numpy as np
import pytest

from traversal import CheckpointError, fmap_with_path, load, save


def _small():
    w = np.arange(6.0).reshape(2, 3) / 7
    return {"w": w, "tied": w, "b": np.linspace(-1, 1, 3, dtype=np.float32), "i": np.arange(4, dtype=np.int16),
            "c": np.array([1 + 2j, -0.5j]), "s": np.float32(2.5), "n": 3, "lr": 0.125, "name": "adam", "act": np.tanh}


def _like():
    z = np.zeros((2, 3))
    return {"w": z, "tied": z, "b": np.zeros(3, np.float32), "i": np.zeros(4, np.int16), "c": np.zeros(2, complex),
            "s": np.float32(0), "n": 0, "lr": 0.0, "name": "", "act": np.tanh}


def _positions(tree):
    out = []
    fmap_with_path(lambda p, x: out.append((str(p), x)), tree, cache=False)
    return out


def _bitwise_same(saved, loaded):
    """Every leaf of the same type, dtype, shape and bytes (a float's repr for plain floats), the same ties."""
    a, b = _positions(saved), _positions(loaded)
    assert [p for p, _ in a] == [p for p, _ in b]
    for (path, x), (_, y) in zip(a, b):
        assert type(x) is type(y), path
        if isinstance(x, (np.ndarray, np.generic)):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), path
        else:
            assert repr(x) == repr(y), path
    assert loaded["w"] is loaded["tied"]


def _loads_whole_or_refuses(path, saved, like):
    """``load`` raises CheckpointError, or returns exactly ``saved``: nothing else may happen."""
    try:
        loaded = load(path, like)
    except CheckpointError:
        return False
    _bitwise_same(saved, loaded)
    return True


# ---- two saves to one path: one of them, whole ----

def _constant_tree(value):
    return {f"k{i}": np.full(2000, value) for i in range(8)}


def _race(path, values):
    """Save ``_constant_tree(v)`` for each of ``values`` to ``path`` on threads started together; their errors."""
    barrier, errors = threading.Barrier(len(values)), []

    def run(value):
        barrier.wait()
        try:
            save(path, _constant_tree(value))
        except Exception as e:  # any failure of a save is what the test reports
            errors.append(e)

    threads = [threading.Thread(target=run, args=(v,)) for v in values]
    [t.start() for t in threads]
    [t.join() for t in threads]
    return errors


def test_concurrent_saves_to_one_path_leave_one_whole_save(tmp_path):
    """Two threads save different trees to one path at once, many times: both saves succeed and the file holds
    one of them, whole (the old shared temporary name mixed them, or made one save raise FileNotFoundError)."""
    path, like = tmp_path / "c.npz", _constant_tree(0.0)
    for _ in range(30):
        assert _race(path, (1.0, 2.0)) == []
        values = {float(v) for a in load(path, like).values() for v in np.unique(a)}
        assert values in ({1.0}, {2.0})
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]  # no temporary file left behind


def test_a_save_overtaken_by_another_still_writes_its_own_whole_file(tmp_path, monkeypatch):
    """Deterministic: the first save pauses after its metadata while a second save to the same path runs to the
    end; then the first finishes. Each wrote a file of its own, so the last rename wins, whole."""
    path, first_paused, second_done = tmp_path / "c.npz", threading.Event(), threading.Event()
    open_member, errors, written = zipfile.ZipFile.open, [], []

    def pausing(archive, name, mode="r", **kwargs):  # a checkpoint is a zip archive (an .npz) of members
        if mode == "w" and threading.current_thread().name == "first":
            written.append(name)
            if len(written) == 2:  # the metadata, the first member, is written: pause before the next
                first_paused.set()
                assert second_done.wait(10)
        return open_member(archive, name, mode, **kwargs)

    def run(value, after=None):
        try:
            save(path, _constant_tree(value))
        except Exception as e:  # any failure of a save is what the test reports
            errors.append(e)
        if after is not None:
            after.set()

    monkeypatch.setattr(zipfile.ZipFile, "open", pausing)
    first = threading.Thread(target=run, args=(1.0,), name="first")
    first.start()
    assert first_paused.wait(10)
    second = threading.Thread(target=run, args=(2.0, second_done), name="second")
    second.start()
    second.join()
    first.join()
    assert not errors
    assert all(np.array_equal(a, np.full(2000, 1.0)) for a in load(path, _constant_tree(0.0)).values())


# ---- every member's checksum is verified ----

# A damaged .npy header may make Python's parser warn (an invalid escape) or numpy retry it as a Python 2 header
# (a UserWarning) before the header is refused: warnings, not failures, in the tests that damage every byte.
@pytest.mark.filterwarnings("ignore:invalid escape sequence")
@pytest.mark.filterwarnings("ignore:Reading `.npy` or `.npz` file required additional header")
@pytest.mark.parametrize("mask", [0xFF, 0x01])
def test_every_single_byte_flip_is_refused_or_loads_the_saved_tree(tmp_path, mask):
    """Flip each byte of a small checkpoint in turn: load raises CheckpointError (nothing else), or returns
    exactly the saved tree (a flip in a field the reader does not use, such as a timestamp)."""
    save(tmp_path / "s.npz", _small())
    raw = (tmp_path / "s.npz").read_bytes()
    refused = 0
    for i in range(len(raw)):
        damaged = bytearray(raw)
        damaged[i] ^= mask
        (tmp_path / "d.npz").write_bytes(damaged)
        refused += not _loads_whole_or_refuses(tmp_path / "d.npz", _small(), _like())
    assert refused > len(raw) // 2  # most bytes matter (the control: the flips did reach the reader)


@pytest.mark.filterwarnings("ignore:invalid escape sequence")
@pytest.mark.filterwarnings("ignore:Reading `.npy` or `.npz` file required additional header")
def test_every_byte_flip_of_a_compressed_copy_is_refused_or_loads_the_saved_tree(tmp_path):
    save(tmp_path / "s.npz", _small())
    with np.load(tmp_path / "s.npz") as npz:
        np.savez_compressed(tmp_path / "z.npz", **{name: npz[name] for name in npz.files})
    raw = (tmp_path / "z.npz").read_bytes()
    for i in range(len(raw)):
        damaged = bytearray(raw)
        damaged[i] ^= 0xFF
        (tmp_path / "d.npz").write_bytes(damaged)
        _loads_whole_or_refuses(tmp_path / "d.npz", _small(), _like())


@pytest.mark.filterwarnings("ignore:invalid escape sequence")
@pytest.mark.filterwarnings("ignore:Reading `.npy` or `.npz` file required additional header")
def test_every_truncation_and_random_damage_is_refused_or_loads_the_saved_tree(tmp_path):
    save(tmp_path / "s.npz", _small())
    raw = (tmp_path / "s.npz").read_bytes()
    for n in range(len(raw)):
        (tmp_path / "d.npz").write_bytes(raw[:n])
        assert not _loads_whole_or_refuses(tmp_path / "d.npz", _small(), _like())
    rng = np.random.default_rng(0)
    for _ in range(300):  # a few random bytes at random places, as a bad disk or a bad copy leaves them
        damaged = np.frombuffer(raw, np.uint8).copy()
        damaged[rng.integers(0, len(raw), rng.integers(2, 6))] = rng.integers(0, 256, 1, np.uint8)
        (tmp_path / "d.npz").write_bytes(damaged.tobytes())
        _loads_whole_or_refuses(tmp_path / "d.npz", _small(), _like())


def _flip_in_data(tmp_path):
    """A checkpoint whose array ``w`` has one byte of its data flipped (its .npy header and zip records intact)."""
    w = np.arange(1000.0)
    save(tmp_path / "s.npz", {"w": w})
    raw = bytearray((tmp_path / "s.npz").read_bytes())
    raw[raw.index(w[500:501].tobytes())] ^= 0x10
    (tmp_path / "d.npz").write_bytes(raw)
    return tmp_path / "d.npz", w


def test_a_flipped_data_byte_fails_the_checksum_and_verify_false_skips_it(tmp_path):
    path, w = _flip_in_data(tmp_path)
    with pytest.raises(CheckpointError, match=r"d.npz is damaged: member 'w' fails its CRC-32 checksum"):
        load(path, {"w": np.zeros(1000)})
    unchecked = load(path, {"w": np.zeros(1000)}, verify=False)["w"]  # the opt-out, for trusted files: it reads
    assert not np.array_equal(unchecked, w) and np.sum(unchecked != w) == 1  # the damage as it is


# ---- zip bombs: every header checked before a byte is inflated ----

_BOMB = 256 << 20  # bytes of zeros, deflated to ~0.25 MB


def _bomb(path, header, zeros, meta_padding=0):
    """A deflated checkpoint of one float64 member ``w`` (metadata: shape (2,)): ``header`` for its .npy header,
    ``zeros`` bytes after it; the metadata JSON padded with ``meta_padding`` spaces (still valid JSON)."""
    meta = json.dumps({"format": "traversal-checkpoint", "version": 1,
                       "entries": {"w": {"kind": "array", "dtype": "float64", "shape": [2]}}}).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("__checkpoint__.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False,
                                                     "shape": (len(meta) + meta_padding,)})
            f.write(meta)
            _zeros(f, meta_padding, b" ")
        with z.open("w.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": header})
            _zeros(f, zeros, b"\0")


def _zeros(f, n, byte):
    chunk = byte * (1 << 20)
    while n > 0:
        f.write(chunk[:n])
        n -= len(chunk)


@pytest.mark.parametrize("case", ["header claims a huge array", "data longer than the header says",
                                  "metadata padded to a bomb"])
def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path, case):
    header, zeros, padding = {"header claims a huge array": ((_BOMB // 8,), _BOMB, 0),
                              "data longer than the header says": ((2,), _BOMB, 0),
                              "metadata padded to a bomb": ((2,), 16, _BOMB)}[case]
    _bomb(tmp_path / "b.npz", header, zeros, padding)
    assert (tmp_path / "b.npz").stat().st_size < _BOMB / 500
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match="b.npz is damaged"):
            load(tmp_path / "b.npz", {"w": np.zeros(2)})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"load's peak was {peak / 2**20:.0f} MB"


# ---- every failure is a CheckpointError, the cause chained ----

def _write(path, meta, members=None, compression=zipfile.ZIP_STORED):
    """A zip holding the metadata ``meta`` (bytes, or a dict of entries) and ``members`` (name -> raw bytes)."""
    if isinstance(meta, dict):
        meta = json.dumps({"format": "traversal-checkpoint", "version": 1, "entries": meta}).encode()
    with zipfile.ZipFile(path, "w", compression) as z:
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.frombuffer(meta, np.uint8))
        z.writestr("__checkpoint__.npy", buffer.getvalue())
        for name, raw in (members or {}).items():
            z.writestr(name, raw)
    return path


def _npy(array=None, header=None, version=(1, 0), length=None, data=b""):
    """The bytes of a .npy member: ``array``'s, or a crafted ``header`` text (any length field) and ``data``."""
    buffer = io.BytesIO()
    if array is not None:
        np.lib.format.write_array(buffer, array)
        return buffer.getvalue()
    text = header.encode("latin1")
    size = (len(text) if length is None else length).to_bytes(2 if version == (1, 0) else 4, "little")
    return b"\x93NUMPY" + bytes(version) + size + text + data


_W = {"kind": "array", "dtype": "float64", "shape": [2]}
_HEADER = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }\n"
_CRAFTED = {  # name -> (metadata, members, the cause's type or None)
    "deep JSON": (b"[" * 100_000 + b"]" * 100_000, None, RecursionError),
    "deep JSON in an entry": (b'{"format": "traversal-checkpoint", "version": 1, "entries": {"w": '
                              + b"[" * 100_000 + b"]" * 100_000 + b"}}", None, RecursionError),
    "deep tuple in a .npy header": (
        {"w": _W}, {"w.npy": _npy(header="{'descr': '<f8', 'fortran_order': False, 'shape': "
                                         + "(" * 3000 + ")" * 3000 + "}")}, ValueError),
    "a .npy header 4 GB long": ({"w": _W}, {"w.npy": _npy(header=_HEADER % "(2,)", version=(2, 0),
                                                          length=2**32 - 1)}, ValueError),
    "huge shape in a .npy header": ({"w": _W}, {"w.npy": _npy(header=_HEADER % "(10**30,)")}, ValueError),
    "negative shape in the metadata": ({"w": {**_W, "shape": [-1]}}, {"w.npy": _npy(np.ones(2))}, TypeError),
    "an int of 1e999": ({"w": _W, "n": {"kind": "value", "type": "int", "value": 1e999}},
                        {"w.npy": _npy(np.ones(2))}, TypeError),
    "a float of 10**400": ({"w": _W, "x": {"kind": "value", "type": "float", "value": 10**400}},
                           {"w.npy": _npy(np.ones(2))}, TypeError),
    "an int of 1.5": ({"w": _W, "n": {"kind": "value", "type": "int", "value": 1.5}},
                      {"w.npy": _npy(np.ones(2))}, TypeError),
    "a scalar of shape [2]": ({"w": _W, "s": {"kind": "scalar", "dtype": "float64", "shape": [2]}},
                              {"w.npy": _npy(np.ones(2)), "s.npy": _npy(np.ones(2))}, ValueError),
    "a .npy header that is not a dict": ({"w": _W}, {"w.npy": _npy(header="[1, 2]\n")}, ValueError),
    "an unknown .npy version": ({"w": _W}, {"w.npy": _npy(header=_HEADER % "(2,)", version=(7, 0))}, ValueError),
    "two members of one name": ({"w": _W}, {"w.npy": _npy(np.ones(2)), "w": _npy(np.ones(2))}, None),
}
_REFUSED_BEFORE = {  # the same, for damage the reader refused before issue 36 too: guards of the new reader
    "huge shape in the metadata": ({"w": {**_W, "shape": [10**30]}}, {"w.npy": _npy(np.ones(2))}, None),
    "huge shape in both": ({"w": {**_W, "shape": [2**62]}}, {"w.npy": _npy(header=_HEADER % f"({2**62},)")}, None),
    "negative shape in a .npy header": ({"w": _W}, {"w.npy": _npy(header=_HEADER % "(-2,)")}, None),
    "a short member": ({"w": _W}, {"w.npy": _npy(np.ones(2))[:-3]}, None),
    "a long member": ({"w": _W}, {"w.npy": _npy(np.ones(2)) + b"\0" * 8}, None),
}


@pytest.mark.parametrize("case", list(_CRAFTED))
def test_crafted_files_raise_checkpoint_error_only_with_the_cause_chained(tmp_path, case):
    _refused_with_its_cause(tmp_path, *_CRAFTED[case])


@pytest.mark.parametrize("case", list(_REFUSED_BEFORE))
def test_crafted_files_refused_before_are_still_refused(tmp_path, case):
    _refused_with_its_cause(tmp_path, *_REFUSED_BEFORE[case])


def _refused_with_its_cause(tmp_path, meta, members, cause):
    like = {"w": np.zeros(2), "n": 0, "x": 0.0, "s": np.float64(0)}
    with pytest.raises(CheckpointError, match="c.npz"):
        load(_write(tmp_path / "c.npz", meta, members), like, strict=False)
    if cause is not None:
        with pytest.raises(CheckpointError) as info:
            load(tmp_path / "c.npz", like, strict=False)
        assert isinstance(info.value.__cause__, cause), repr(info.value.__cause__)


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_members_compressed_with_methods_zipfile_inflates_unbounded_are_refused(tmp_path, compression):
    _write(tmp_path / "c.npz", {"w": _W}, {"w.npy": _npy(np.ones(2))}, compression)
    with pytest.raises(CheckpointError, match="compressed with zip method"):
        load(tmp_path / "c.npz", {"w": np.zeros(2)})


def test_a_damaged_zip_directory_chains_zipfiles_error(tmp_path):
    save(tmp_path / "s.npz", _small())
    (tmp_path / "d.npz").write_bytes((tmp_path / "s.npz").read_bytes()[:-30])
    with pytest.raises(CheckpointError, match="is not a checkpoint archive.*or its zip directory is damaged") as info:
        load(tmp_path / "d.npz", _like())
    assert isinstance(info.value.__cause__, zipfile.BadZipFile)


# ---- save refuses what it could not load back ----

@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix's, on making one
@pytest.mark.parametrize("make,says", [
    (lambda: np.ma.masked_array([1.0, 2.0], mask=[False, True]), "numpy.ma.MaskedArray.*np.ma.getmaskarray"),
    (lambda: np.asmatrix(np.eye(2)), r"numpy.matrix.*np.asarray\(x\)"),
    (lambda: np.rec.array([(1.0, 2)], dtype=[("a", "f8"), ("b", "i4")]), r"numpy.rec.recarray.*np.asarray\(x\)"),
], ids=["masked", "matrix", "recarray"])
def test_save_refuses_ndarray_subclasses_naming_the_path_and_the_fix(tmp_path, make, says):
    with pytest.raises(CheckpointError, match=f"^save: the array at layers\\[1\\].w is a {says}"):
        save(tmp_path / "x.npz", {"layers": [np.ones(1), {"w": make()}]})
    assert not list(tmp_path.iterdir())
    with pytest.raises(CheckpointError, match="^load: the array at w is a .*pass a like that holds plain arrays"):
        save(tmp_path / "y.npz", {"w": np.ones(2)}) or load(tmp_path / "y.npz", {"w": make()})


@pytest.mark.parametrize("key,says", [
    ("a\0b", "holds a NUL character"),
    ("k" * 70_000, "is 70005 bytes long in UTF-8; a zip member's name holds at most 65531"),
    ("\ud800", "is not valid Unicode text"),
], ids=["NUL", "70k characters", "lone surrogate"])
@pytest.mark.parametrize("leaf", [np.ones(2), 1.5], ids=["array", "float"])
def test_save_refuses_keys_it_could_not_write_or_load_back(tmp_path, key, says, leaf):
    with pytest.raises(CheckpointError, match=f"^save: the key path 'head\\..*{says}.*rename the key"):
        save(tmp_path / "x.npz", {"head": {key: leaf}})
    assert not list(tmp_path.iterdir())  # nothing written
