"""Names of a package that load on first use (PEP 562): what costs import time and most programs never call.

>>> import autodiff
>>> "trace" in dir(autodiff), autodiff.trace.__name__
(True, 'trace')
"""

import importlib
import sys


def lazy_names(package, table):
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``): each name in ``table`` (name -> module,
    relative to the package) is imported on first use and kept in the package's namespace."""
    namespace = vars(sys.modules[package])

    def __getattr__(name):
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module, package), name)
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
