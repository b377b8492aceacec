"""The checkpoint archive on disk: a zip of ``.npy`` members plus JSON metadata, written and read without pickle.

Writing goes to a temporary file of its own beside the target (two saves to one path never share one), which is
then renamed over the target: a reader sees the old checkpoint or a new one, whole, never a mix.

Reading trusts nothing in the file.  Every member's ``.npy`` header is read (with a bounded length) and checked
against the metadata, and its size against the shape the metadata declares, before a byte of its data is read or
inflated; the data is then read to exactly that size, and its CRC-32 (the zip's own checksum) is verified.  A
member stored uncompressed (as ``save`` writes them) is read straight from the file at its offset into the new
array and checksummed there; one compressed by ``np.savez_compressed`` is inflated by zipfile, which checks the
CRC itself when the member's last byte is read.  Whatever zipfile, numpy, json or the OS raise on a damaged
file becomes a :class:`CheckpointError` naming the file, with the original exception chained.
"""

import contextlib
import json
import math
import os
import secrets
import struct
import zipfile
import zlib

import numpy as np

from . import _checkpoint_npy as npy
from ._checkpoint_entries import CheckpointError, check_entry

__all__ = ["META", "STORED", "write", "Archive"]

META = "__checkpoint__"
FORMAT, VERSION = "traversal-checkpoint", 1
STORED = ("array", "scalar")  # the kinds of entry kept as .npy members; the others live in the metadata
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # np.savez and np.savez_compressed; zipfile inflates
# bzip2 and lzma members without a bound on the output, so a small one could fill the memory
_META_RATIO, _META_FLOOR = 100, 1 << 20  # metadata JSON deflates 12-26x (ResNet-18, 10^6 leaves); a zip bomb 1000x


def write(path, entries, stored):
    """Write the metadata (``entries``) and the ``(name, array)`` members to ``path``, atomically."""
    meta = {"format": FORMAT, "version": VERSION, "entries": entries}
    partial, file = _partial(path)
    try:
        with file, zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
            _member(archive, META, np.frombuffer(json.dumps(meta).encode(), np.uint8))
            for name, leaf in stored:
                _member(archive, name, np.asarray(leaf))
        os.replace(partial, path)  # atomic: a crash or another save mid-write leaves a whole checkpoint at path
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _partial(path):
    """A new file beside ``path`` under a name no other save can pick, opened for writing: ``(name, file)``.

    Created with ``open(..., "xb")`` rather than ``tempfile.mkstemp``, whose file is private to its owner
    (mode 0600): the checkpoint renamed from it keeps the permissions the user's umask gives a new file."""
    while True:
        name = f"{path}.{secrets.token_hex(8)}.partial"
        try:
            return name, open(name, "xb")
        except FileExistsError:  # a 64-bit random name taken: practically never, but never share one
            continue


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

    Use as a context manager.  Opening refuses anything that is not a checkpoint archive, and an archive
    holding members its metadata does not list, before reading any array.  ``verify=False`` skips the
    checksum of uncompressed members (a zip's compressed members are always checked, by zipfile).
    """

    def __init__(self, path, verify=True):
        self.path, self.verify = path, verify
        self.file = open(path, "rb")  # a missing file or a directory raises here, as open does
        try:
            self.zip = self._zip()
            self.members = self._members()
            self.entries = self._metadata()
            self._check_members()
        except BaseException:
            self.file.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()

    def _zip(self):
        try:
            return zipfile.ZipFile(self.file)
        except Exception as e:  # BadZipFile, and OSError, EOFError, struct.error... from a damaged directory
            if self.file.seek(0) == 0 and self.file.read(6) == npy.MAGIC:
                raise CheckpointError(f"load: {self.path} holds a single .npy array, not a checkpoint archive "
                                      "from traversal.save") from e
            raise CheckpointError(f"load: {self.path} is not a checkpoint archive (a zip of .npy arrays), or its "
                                  f"zip directory is damaged, and was not read further ({type(e).__name__}: "
                                  f"{str(e)[:200]})") from e

    @contextlib.contextmanager
    def _reading(self, what):
        """Any exception but a ``CheckpointError`` becomes one: the file is damaged (the cause is chained)."""
        try:
            yield
        except CheckpointError:
            raise
        except npy.NotNpy as e:
            raise CheckpointError(f"load: refused {self.path}: {what}: it is not a .npy array (raw bytes, perhaps "
                                  "a pickle); it was not unpickled") from e
        except Exception as e:  # zipfile, numpy's header parser, json, the OS: each has its own exceptions
            raise self._damaged(what, e) from e

    def _damaged(self, what, cause=None):
        why = f" ({type(cause).__name__}: {str(cause)[:200]})" if cause else ""
        return CheckpointError(f"load: {self.path} is damaged: {what}{why}; nothing was loaded: save the model "
                               "again with traversal.save, or load an undamaged copy")

    def _members(self):
        """``{member name without .npy: ZipInfo}``, each checked to be one this reader can bound."""
        infos = self.zip.infolist()
        members = {info.filename.removesuffix(".npy"): info for info in infos}
        if len(members) != len(infos):
            raise self._damaged("two of its members have one name")
        for name, info in members.items():
            if info.compress_type not in _METHODS or info.flag_bits & 1:
                raise self._damaged(f"member {name!r} is encrypted or compressed with zip method "
                                    f"{info.compress_type}; save stores members, np.savez_compressed deflates them")
        return members

    def _metadata(self):
        if META not in self.members:
            raise CheckpointError(f"load: {self.path} has no {META!r} member, so traversal.save did not write it (a "
                                  "torch file? read it with torch.load(..., weights_only=True) and "
                                  "layers.load_torch_state_dict)")
        info = self.members[META]
        if info.file_size > max(_META_FLOOR, _META_RATIO * info.compress_size):  # before inflating a byte of it
            raise self._damaged(f"its {META!r} member inflates {info.file_size} bytes from {info.compress_size} "
                                "(a zip bomb?)")
        with self._reading(f"its {META!r} member cannot be read"):
            raw = self._read(META, info, None).tobytes()
        try:
            meta = json.loads(raw.decode())
        except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError; nesting too deep
            raise self._damaged(f"its {META!r} member is not JSON", e) from e
        if not isinstance(meta, dict):
            raise self._damaged(f"its {META!r} member is a JSON {type(meta).__name__}, not an object")
        if meta.get("format") != FORMAT or meta.get("version") not in range(1, VERSION + 1):
            raise CheckpointError(f"load: {self.path} is format {meta.get('format')!r:.100} version "
                                  f"{meta.get('version')!r:.100}; this reader knows {FORMAT!r} up to version {VERSION}")
        return self._entries(meta.get("entries"))

    def _entries(self, entries):
        """The metadata's entries, each checked to be one ``save`` writes, so later steps may index them."""
        if not isinstance(entries, dict):
            raise self._damaged(f"its metadata's 'entries' is a {type(entries).__name__}, not a JSON object")
        for name, entry in entries.items():
            try:
                check_entry(entry)
            except (KeyError, TypeError, ValueError, OverflowError) as e:
                raise self._damaged(f"its metadata entry {name!r:.100}, {entry!r:.100}, is not one traversal.save "
                                    "writes", e) from e
        return entries

    def _check_members(self):
        expected = {META} | {name for name, e in self.entries.items() if e["kind"] in STORED}
        present = set(self.members)
        unexpected, absent = sorted(present - expected), sorted(expected - present)
        if unexpected:
            raise CheckpointError(f"load: refused {self.path}: members {unexpected[:10]} are not arrays its metadata "
                                  "lists (a checkpoint holds only .npy arrays); none of them was read")
        if absent:
            raise self._damaged(f"its metadata lists arrays {absent[:10]} it does not hold")

    def read(self, name, entry):
        """Member ``name`` as an array of its metadata ``entry``'s dtype and shape (which ``load`` has checked
        against ``like``, so a crafted file cannot make it allocate more), refusing pickled data."""
        with self._reading(f"member {name!r} cannot be read"):
            return self._read(name, self.members[name], entry)

    def _read(self, name, info, entry):
        """Header, checks, then exactly the declared bytes; ``entry=None`` for the metadata (1-d uint8)."""
        stream, stored = self._stream(info)
        prefix, shape, fortran, dtype = npy.header(stream)
        if dtype.hasobject:
            raise self._objects(name, f"its .npy header says dtype {dtype}")
        self._check(name, dtype, shape, entry)
        nbytes = dtype.itemsize * math.prod(shape)
        if len(prefix) + nbytes != info.file_size:
            raise self._damaged(f"member {name!r} is {info.file_size} bytes, but its .npy header says "
                                f"{len(prefix) + nbytes}")
        array = np.empty(shape, dtype, order="F" if fortran else "C")
        raw = array.reshape(-1, order="A").view(np.uint8)  # the array's own memory, read into in place
        npy.read_into(stream, raw)
        if stored and self.verify and zlib.crc32(raw, zlib.crc32(prefix)) != info.CRC:
            raise self._damaged(f"member {name!r} fails its CRC-32 checksum")
        if not stored and stream.read(1):  # zipfile checks the CRC when it reads the last byte
            raise self._damaged(f"member {name!r} holds more than its .npy header says")
        return array

    def _check(self, name, dtype, shape, entry):
        if entry is None:  # the metadata: JSON bytes
            if dtype != np.uint8 or len(shape) != 1:
                raise self._damaged(f"its {META!r} member is {dtype} {shape}, not bytes (uint8, 1-d)")
        elif str(dtype) != entry["dtype"] or list(shape) != entry["shape"]:
            raise self._damaged(f"member {name!r} is {dtype} {tuple(shape)}, but its metadata says "
                                f"{entry['dtype']} {tuple(entry['shape'])}")

    def _objects(self, name, reason):
        return CheckpointError(f"load: refused {self.path}: member {name!r} holds Python objects, which only "
                               f"pickle can read, and pickle can run code ({reason})")

    def _stream(self, info):
        """``(stream at the member's first byte, stored)``: the file itself for a stored member (read at its
        offset, one read per array), zipfile's inflating stream for a compressed one."""
        if info.compress_type != zipfile.ZIP_STORED:
            return self.zip.open(info), False
        if info.compress_size != info.file_size:
            raise ValueError(f"member {info.filename!r} is stored but its sizes differ")
        self.file.seek(info.header_offset)
        signature, name_length, extra_length = struct.unpack("<4s22xHH", self.file.read(30))
        name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
        if signature != b"PK\x03\x04" or self.file.read(name_length) != name:
            raise ValueError(f"the local header of member {info.filename!r} does not match the zip directory")
        self.file.seek(extra_length, os.SEEK_CUR)
        return self.file, True
