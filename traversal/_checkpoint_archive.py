"""The checkpoint archive on disk: a zip of ``.npy`` members plus JSON metadata, written and read without pickle.

Reading goes through numpy's own ``.npy`` reader with ``allow_pickle=False``.  A
member stored uncompressed (as ``save`` writes them) is read straight from the
file at its offset, one ``fromfile`` per array, instead of through zipfile's
stream, which copies in 256 KB pieces and checksums: shapes, dtypes and sizes
are checked against the metadata, the bytes are not checksummed (safetensors
does not either).  A compressed member (``np.savez_compressed``) goes the slow way.
"""

import json
import os
import struct
import zipfile

import numpy as np

from ._checkpoint_entries import CheckpointError, check_entry

__all__ = ["META", "STORED", "write", "Archive"]

META = "__checkpoint__"
FORMAT, VERSION = "traversal-checkpoint", 1
STORED = ("array", "scalar")  # the kinds of entry kept as .npy members; the others live in the metadata


def write(path, entries, stored):
    """Write the metadata (``entries``) and the ``(name, array)`` members to ``path``, atomically."""
    meta = {"format": FORMAT, "version": VERSION, "entries": entries}
    partial = f"{path}.{os.getpid()}.partial"
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as archive:
            _member(archive, META, np.frombuffer(json.dumps(meta).encode(), np.uint8))
            for name, leaf in stored:
                _member(archive, name, np.asarray(leaf))
        os.replace(partial, path)  # a crash mid-write leaves the previous checkpoint whole
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _member(archive, name, array):
    with archive.open(name + ".npy", "w", force_zip64=True) as out:
        if array.flags.c_contiguous and not array.dtype.hasobject:  # the header, then the array's own memory:
            header = np.lib.format.header_data_from_array_1_0(array)  # write_array would first copy the data
            np.lib.format.write_array_header_1_0(out, header)  # into 16 MB chunks (40% of saving ResNet-18)
            out.write(array.reshape(-1).view(np.uint8))
        else:
            np.lib.format.write_array(out, array, allow_pickle=False)


class Archive:
    """An open checkpoint: ``entries`` from its metadata, ``read(name, entry)`` for one member.

    Use as a context manager.  Opening refuses anything that is not a checkpoint archive,
    and an archive holding members its metadata does not list, before reading any array.
    """

    def __init__(self, path):
        self.path = path
        self.npz = _open(path)
        self.file = None
        try:
            self.entries = self._metadata()
            self._check_members()
            self.file = open(path, "rb")
        except BaseException:
            self.npz.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.npz.close()
        self.file.close()

    def _metadata(self):
        if META not in self.npz.files:
            raise CheckpointError(f"load: {self.path} has no {META!r} member, so traversal.save did not write it (a "
                                  "torch file? read it with torch.load(..., weights_only=True) and "
                                  "layers.load_torch_state_dict)")
        raw = self._raw(META).tobytes()
        try:
            meta = json.loads(raw.decode())
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
            raise self._damaged(f"its {META!r} member is not JSON", e) from e
        if not isinstance(meta, dict):
            raise self._damaged(f"its {META!r} member is a JSON {type(meta).__name__}, not an object")
        if meta.get("format") != FORMAT or meta.get("version") not in range(1, VERSION + 1):
            raise CheckpointError(f"load: {self.path} is format {meta.get('format')!r} version "
                                  f"{meta.get('version')!r}; this reader knows {FORMAT!r} up to version {VERSION}")
        return self._entries(meta.get("entries"))

    def _entries(self, entries):
        """The metadata's entries, each checked to be one ``save`` writes, so later steps may index them."""
        if not isinstance(entries, dict):
            raise self._damaged(f"its metadata's 'entries' is a {type(entries).__name__}, not a JSON object")
        for name, entry in entries.items():
            try:
                check_entry(entry)
            except (KeyError, TypeError, ValueError) as e:
                raise self._damaged(f"its metadata entry {name!r}, {entry!r:.100}, is not one traversal.save "
                                    "writes", e) from e
        return entries

    def _damaged(self, what, cause=None):
        why = f" ({type(cause).__name__}: {cause})" if cause else ""
        return CheckpointError(f"load: {self.path} is damaged: {what}{why}; nothing was loaded: save the model "
                               "again with traversal.save, or load an undamaged copy")

    def _check_members(self):
        expected = {META} | {name for name, e in self.entries.items() if e["kind"] in STORED}
        present = set(self.npz.files)
        unexpected, absent = sorted(present - expected), sorted(expected - present)
        if unexpected:
            raise CheckpointError(f"load: refused {self.path}: members {unexpected[:10]} are not arrays its metadata "
                                  "lists (a checkpoint holds only .npy arrays); none of them was read")
        if absent:
            raise self._damaged(f"its metadata lists arrays {absent[:10]} it does not hold")

    def read(self, name, entry):
        """Member ``name`` as an array, refusing pickled data, checked against its metadata ``entry``
        (which ``load`` has checked against ``like``, so a crafted header cannot make it allocate more)."""
        array = self._raw(name, entry)
        self._check(name, array.dtype, array.shape, entry)
        return array

    def _check(self, name, dtype, shape, entry):
        if str(dtype) != entry["dtype"] or list(shape) != entry["shape"]:
            raise self._damaged(f"member {name!r} is {dtype} {tuple(shape)}, but its metadata says "
                                f"{entry['dtype']} {tuple(entry['shape'])}")

    def _raw(self, name, entry=None):
        info = self._info(name)
        try:
            if info.compress_type == zipfile.ZIP_STORED and entry is not None:  # (the metadata: via zipfile)
                return self._read_stored(name, info, entry)
            array = self.npz[name]
        except CheckpointError:
            raise
        except ValueError as e:  # numpy's reader refuses object arrays when allow_pickle=False
            raise self._objects(name, e) from None
        if not isinstance(array, np.ndarray):
            raise CheckpointError(f"load: refused {self.path}: member {name!r} is not a .npy array (raw bytes, "
                                  "perhaps a pickle); it was not unpickled")
        return array

    def _objects(self, name, reason):
        return CheckpointError(f"load: refused {self.path}: member {name!r} holds Python objects, which only "
                               f"pickle can read, and pickle can run code ({reason})")

    def _info(self, name):
        for candidate in (name + ".npy", name):
            try:
                return self.npz.zip.getinfo(candidate)
            except KeyError:
                continue
        raise CheckpointError(f"load: {self.path} has no member {name!r}")

    def _read_stored(self, name, info, entry):
        """numpy's .npy reader (allow_pickle=False), at the member's data in the file: one read per array."""
        self.file.seek(info.header_offset)
        signature, name_length, extra_length = struct.unpack("<4s22xHH", self.file.read(30))
        start = info.header_offset + 30 + name_length + extra_length
        self.file.seek(start)
        if signature != b"PK\x03\x04" or self.file.read(6) != b"\x93NUMPY":
            raise CheckpointError(f"load: refused {self.path}: member {name!r} is not a .npy array (raw bytes, "
                                  "perhaps a pickle); it was not unpickled")
        self.file.seek(start)
        header = _HEADERS.get(np.lib.format.read_magic(self.file))
        if header is not None:  # the shape and dtype, checked before anything is allocated
            shape, _, dtype = header(self.file)
            if dtype.hasobject:
                raise self._objects(name, f"its .npy header says dtype {dtype}")
            self._check(name, dtype, shape, entry)
        self.file.seek(start)
        array = np.lib.format.read_array(self.file, allow_pickle=False)
        if self.file.tell() - start != info.file_size:
            raise self._damaged(f"member {name!r} does not end where its .npy header says")
        return array


_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _open(path):
    try:
        npz = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"load: {path} is not a checkpoint archive and was not read further ({e})") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise CheckpointError(f"load: {path} holds a single .npy array, not a checkpoint archive from traversal.save")
    return npz
