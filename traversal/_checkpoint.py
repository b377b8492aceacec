"""save and load: a model (or optimiser state) as a numpy ``.npz`` archive, each array under its key path.

The archive is a zip of ``.npy`` members, one per distinct array, named by the
key path of its first occurrence (``layers[0].weight``), plus one member,
``__checkpoint__``, holding JSON metadata: for every leaf position its entry
(see ``_checkpoint_entries``), so ties, plain values and opaque leaves are
recorded too.  Nothing is pickled: ``load`` reads with ``allow_pickle=False``,
refuses members that are not plain ``.npy`` arrays, and checks everything
against ``like`` before it builds anything, so a bad file loads nothing.
"""

import os
import warnings

from ._cache import IdentityCache
from ._checkpoint_archive import META, STORED, Archive, write
from ._checkpoint_entries import CheckpointError, CheckpointWalk, decode_value, describe, entries
from ._walks import NOPRUNE, CachedWalk, execute

__all__ = ["save", "load", "CheckpointError", "CheckpointWarning"]

_SAME = {"array": ("dtype", "shape"), "tie": ("to", "dtype", "shape"), "value": (), "scalar": ("dtype",),
         "object": ("type",)}  # what must agree between file and ``like`` for each kind of entry
_FIX = ("load into a model of the same architecture (same fields, shapes, dtypes, and ties: a tie is one "
        "array object at several positions), or pass strict=False to skip missing and extra keys")


class CheckpointWarning(UserWarning):
    """``load(..., strict=False)`` skipped keys: ``missing`` (in ``like``, not the file) and ``extra``.

    >>> import os, tempfile, warnings
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "body.npz")
    >>> save(path, {"body": np.ones(2), "old_head": np.ones(3)})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = load(path, {"body": np.zeros(2), "new_head": np.zeros(4)}, strict=False)
    >>> caught[0].message.missing, caught[0].message.extra, model["body"]
    (['new_head'], ['old_head'], array([1., 1.]))
    """

    def __init__(self, message, missing, extra):
        super().__init__(message)
        self.missing, self.extra = missing, extra


def save(path, tree):
    """Write ``tree`` (a model, an optimiser state, or a dict of both) to ``path`` as an ``.npz`` archive.

    Each distinct array is stored once under the key path of its first occurrence; later
    occurrences are recorded as ties.  Plain values (bool, int, float, complex, str, None) are
    written; other leaves (functions, say) are only named, and ``load`` takes them from ``like``.
    The file is written to a temporary file of its own beside ``path`` and renamed into place, so a
    crash never leaves half a file and two saves to one path leave one of them, whole.  Refused, with
    :class:`CheckpointError` naming the key path and nothing written: an ndarray subclass (a masked
    array's mask would be lost), an object array, a traced leaf, and a key path that could not be a
    zip member's name (a NUL character, more than 65,531 bytes).

    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> w = np.array([1.0, 2.0])
    >>> save(path, {"a": w, "b": w, "act": np.tanh, "lr": 0.1})
    >>> sorted(np.load(path))
    ['__checkpoint__', 'a']
    """
    found = entries(tree)
    if META in found:
        raise CheckpointError(f"save: the key path {META!r} is reserved for the checkpoint's metadata; rename it")
    for name in found:
        _check_name(name)
    stored = [(name, leaf) for name, (_, e, leaf) in found.items() if e["kind"] in STORED]
    write(os.fspath(path), {name: e for name, (_, e, _) in found.items()}, stored)


_MAX_NAME = 0xFFFF - len(".npy")  # bytes: a zip member's name has a 16-bit length


def _name_problem(name):
    """Why the key path ``name`` could not be a zip member's name that loads back as itself, or ``None``."""
    if "\0" in name:
        return "holds a NUL character, where zipfile ends a member's name (it would load back as another key)"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid Unicode text (it holds a lone surrogate), which a member's name must be"
    if size > _MAX_NAME:
        return f"is {size} bytes long in UTF-8; a zip member's name holds at most {_MAX_NAME}"
    return None


def _check_name(name):
    problem = _name_problem(name)
    if problem is not None:
        shown = repr(name[:80]) + ("..." if len(name) > 80 else "")
        raise CheckpointError(f"save: the key path {shown} {problem}; nothing was written: rename the key (a dict "
                              "key, a field), or save a dict that maps shorter, plain names to the leaves")


def load(path, like, strict=True, verify=True):
    """The tree saved at ``path``, rebuilt in the structure of ``like`` (a model of the same architecture).

    Arrays, numpy scalars and plain values come from the file; opaque leaves (functions) from
    ``like``, after checking they are of the same kind.  A tie in the file is restored as one array
    at every tied position.  A missing or extra key, a shape or dtype mismatch, or a tie the file
    has and ``like`` lacks (or the reverse) raises :class:`CheckpointError` naming each key path
    and both sides, and nothing is loaded.  With ``strict=False`` missing keys keep ``like``'s leaf,
    extra keys are ignored, and a :class:`CheckpointWarning` lists both.  Never unpickles.

    A damaged or crafted file raises :class:`CheckpointError` (the original exception chained), never
    another exception and never other numbers: every member's header is checked before its data is
    read, and its CRC-32 verified.  ``verify=False`` skips the checksum of stored members, which costs
    about half of a load's time (docs/checkpoints.md): for trusted files only.

    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> w = np.array([1.0, 2.0])
    >>> save(path, {"a": w, "b": w, "lr": 0.1})
    >>> z = np.zeros(2)
    >>> out = load(path, {"a": z, "b": z, "lr": 0.0})
    >>> out["a"], out["a"] is out["b"], out["lr"]
    (array([1., 2.]), True, 0.1)
    """
    with Archive(path, verify) as archive:
        found = archive.entries
        wanted = entries(like, "load")
        missing, extra = _compare(found, wanted, strict, path)
        arrays = {name: archive.read(name, found[name]) for name in wanted
                  if name in found and found[name]["kind"] in STORED}
    if missing or extra:
        warnings.warn(CheckpointWarning(f"load: {path}: skipped {len(missing)} key path(s) missing from the file "
                                        f"{missing[:10]} and {len(extra)} extra in it {extra[:10]}",
                                        missing, extra), stacklevel=2)
    return _build(like, found, arrays)


def _compare(found, wanted, strict, path):
    """``(missing, extra)`` key paths; raise listing every mismatch (and, if strict, every missing/extra key)."""
    missing = [name for name in wanted if name not in found]
    extra = [name for name in found if name not in wanted]
    problems = [f"{name}: the file has {describe(found[name])} but like has {describe(want)}"
                for name, (_, want, _) in wanted.items() if name in found and not _same(found[name], want)]
    if strict:
        problems += _strict_problems(found, wanted, missing, extra)
    if problems:
        shown = "\n  ".join(problems[:20]) + ("\n  ..." if len(problems) > 20 else "")
        raise CheckpointError(f"load: {path} does not fit like at {len(problems)} key path(s); nothing was "
                              f"loaded:\n  {shown}\n{_FIX}")
    return missing, extra


def _strict_problems(found, wanted, missing, extra):
    """The lines ``strict=True`` adds: every key path missing from the file, and every extra one."""
    return ([f"{name}: missing from the file; like has {describe(wanted[name][1])}" for name in missing]
            + [f"{name}: in the file ({describe(found[name])}) but not in like" for name in extra])


def _same(have, want):
    kind = have["kind"]
    return kind == want["kind"] and all(have[k] == want[k] for k in _SAME[kind])


_RESTORE = {  # (entry, stored member or None, like's leaf) -> the loaded leaf
    "array": lambda entry, stored, old: stored,
    "scalar": lambda entry, stored, old: stored[()],
    "value": lambda entry, stored, old: decode_value(entry),
    "tie": lambda entry, stored, old: old,  # not reached: a matching tie in like is served by the identity cache
    "object": lambda entry, stored, old: old,
}


def _build(like, found, arrays):
    """``like`` rebuilt with the file's leaves; the identity cache keyed on ``like`` restores every tie."""

    def restore(path, old):
        name = str(path)
        entry = found.get(name)
        return old if entry is None else _RESTORE[entry["kind"]](entry, arrays.get(name), old)

    return execute(CachedWalk(CheckpointWalk(restore, build=True), IdentityCache(), NOPRUNE), like)
