"""Primitives from scipy's ufuncs (which carry no ``__module__``), named for pickling and reading."""

from ..extend import primitive


def ufunc_primitive(ufunc, name, module="autodiff.scipy.special"):
    """A primitive calling ``ufunc``; ``module.name`` is where users find it (and pickle finds it)."""

    def fun(*args, **kwargs):
        return ufunc(*args, **kwargs)

    fun.__name__ = fun.__qualname__ = name
    fun.__module__ = module
    fun.__doc__ = (ufunc.__doc__ or "").strip().split("\n\n")[0]
    return primitive(fun, name)
