"""One ``.npy`` member of a checkpoint, read from a stream without trusting it.

The header is read with a bounded length (numpy's own reader first reads as many bytes as the file says the
header has, up to 4 GB for format 2.0, and only then compares with its limit), so a crafted length inflates
nothing.  The caller checks the dtype and shape against the metadata, and the member's size against the
shape, before :func:`read_into` reads a byte of the data: the data read is the size the shape declares.
"""

import io

import numpy as np

__all__ = ["NotNpy", "MAGIC", "MAX_HEADER", "header", "read_into"]

MAGIC = b"\x93NUMPY"
MAX_HEADER = 10_000  # bytes: numpy's own limit (np.load's max_header_size); save writes ~128
_LENGTH_BYTES = {1: 2, 2: 4}  # format version -> bytes that give the header's length (save writes 1.0)
_READERS = {1: np.lib.format.read_array_header_1_0, 2: np.lib.format.read_array_header_2_0}


class NotNpy(ValueError):
    """The member does not start as a ``.npy`` array does (raw bytes, perhaps a pickle)."""


def header(stream):
    """``(prefix, shape, fortran_order, dtype)`` of the ``.npy`` member at ``stream``'s position.

    ``prefix`` is every byte read (magic, version, length, header), for the checksum.  Raises
    :class:`NotNpy` when the magic is wrong, ``ValueError`` for an unknown version or an overlong header,
    and whatever numpy's header parser raises for a malformed one (the caller turns each into a
    ``CheckpointError``).

    >>> buffer = io.BytesIO()
    >>> np.lib.format.write_array(buffer, np.ones((2, 3), np.float32))
    >>> _ = buffer.seek(0)
    >>> prefix, shape, fortran, dtype = header(buffer)
    >>> len(prefix), shape, fortran, dtype
    (128, (2, 3), False, dtype('float32'))
    """
    start = stream.read(8)
    if start[:6] != MAGIC:
        raise NotNpy("it does not start with the .npy magic")
    version = start[6]
    if version not in _LENGTH_BYTES or start[7] != 0:
        raise ValueError(f"its .npy format version is {start[6]}.{start[7]}; save writes 1.0 (numpy 2.0 too)")
    length = stream.read(_LENGTH_BYTES[version])
    size = int.from_bytes(length, "little")
    if len(length) != _LENGTH_BYTES[version] or size > MAX_HEADER:
        raise ValueError(f"its .npy header says it is {size} bytes long, more than the {MAX_HEADER} allowed")
    text = stream.read(size)
    if len(text) != size:
        raise EOFError(f"the member ends inside its {size}-byte .npy header")
    shape, fortran, dtype = _READERS[version](io.BytesIO(length + text), max_header_size=MAX_HEADER)
    return start + length + text, shape, fortran, dtype


def read_into(stream, buffer):
    """Fill the writable uint8 array ``buffer`` from ``stream`` (straight into it from a file); raises
    ``EOFError`` if the stream ends first.

    >>> buffer = np.zeros(2, np.uint8)
    >>> read_into(io.BytesIO(b"abc"), buffer)
    >>> buffer.tobytes()
    b'ab'
    """
    view, done = memoryview(buffer), 0
    while done < len(buffer):
        got = stream.readinto(view[done:])
        if not got:
            raise EOFError(f"the member ends after {done} of its {len(buffer)} bytes")
        done += got
