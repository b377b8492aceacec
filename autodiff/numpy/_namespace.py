"""numpy's own objects that ``autodiff.numpy`` re-exports as they are, so ``import autodiff.numpy as np`` finds
numpy's everyday namespace: constants, dtypes and scalar types, constructors of fresh constant arrays, and
queries of dtypes and shapes.

None of them reads the values of an array it is given, so none can strip a traced value of its derivative:
a constructor takes shapes and numbers (``np.zeros(x.shape)``; a traced number where a plain one is read,
``np.arange(n)`` with ``n`` traced, raises our ``DetachError``), and a dtype is a dtype.  What of numpy reads
values is either an op with rules in ``autodiff.numpy``, a plain-valued helper in ``_plain_ops``, or listed in
``tests/rules/test_numpy_namespace.py`` as deliberately absent, with the reason.

>>> import autodiff.numpy as anp
>>> anp.zeros(2, anp.float32), anp.pi == np.pi, anp.newaxis is None
(array([0., 0.], dtype=float32), True, True)
"""

import numpy as np

CONSTANTS = ["e", "pi", "inf", "nan", "euler_gamma", "newaxis", "True_", "False_", "little_endian",
             "ScalarType", "typecodes", "sctypeDict"]

# numpy's index expressions: s_ and index_exp build index tuples (a traced value inside passes through
# untouched); mgrid and ogrid build constant grids from slices of plain numbers
INDEX_EXPRESSIONS = ["s_", "index_exp", "mgrid", "ogrid"]

TYPES = [
    "dtype", "finfo", "iinfo", "ndarray", "ufunc", "generic", "number", "integer", "signedinteger",
    "unsignedinteger", "inexact", "floating", "complexfloating", "flexible", "character",
    "bool", "bool_", "int8", "int16", "int32", "int64", "int_", "intc", "intp", "long", "longlong", "short", "byte",
    "uint8", "uint16", "uint32", "uint64", "uint", "uintc", "uintp", "ulong", "ulonglong", "ushort", "ubyte",
    "float16", "float32", "float64", "half", "single", "double", "longdouble",
    "complex64", "complex128", "csingle", "cdouble", "clongdouble",
    "object_", "str_", "bytes_", "void", "datetime64", "timedelta64", "busdaycalendar",
    "errstate", "broadcast", "ndindex",
]
PLATFORM_TYPES = ["float128", "complex256"]  # where the platform has them, as in numpy

# fresh constant arrays from shapes and numbers (full, linspace and the *_like ones read an array or a
# value that may be traced: those are ops of ours)
CONSTRUCTORS = [
    "zeros", "ones", "empty", "arange", "eye", "identity", "tri", "indices", "fromfunction", "fromiter",
    "bartlett", "blackman", "hamming", "hanning", "kaiser",
    "diag_indices", "tril_indices", "triu_indices", "mask_indices",
]

# questions about dtypes, shapes and Python objects, and numpy's floating-point error settings
QUERIES = [
    "promote_types", "can_cast", "mintypecode", "isdtype", "issubdtype", "typename", "isscalar", "iterable",
    "broadcast_shapes", "base_repr", "binary_repr", "seterr", "geterr", "seterrcall", "geterrcall",
    "is_busday", "busday_count", "busday_offset", "datetime_as_string", "datetime_data",
]

# whole modules, numpy's own: random draws plain samples (a traced parameter raises our DetachError) and
# testing compares plain arrays; dtypes, exceptions and typing hold classes
MODULES = ["random", "testing", "dtypes", "exceptions", "typing"]

AS_IS = {name: getattr(np, name) for name in CONSTANTS + INDEX_EXPRESSIONS + TYPES + CONSTRUCTORS + QUERIES
         + MODULES + [n for n in PLATFORM_TYPES if hasattr(np, n)]}
"""Every name above, bound to numpy's object."""
