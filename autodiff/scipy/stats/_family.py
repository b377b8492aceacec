"""A distribution family as a namespace of functions (``norm.logpdf``), as in ``scipy.stats``."""


class Family:
    """Named functions of one family; asking for a missing one names what the family has."""

    def __init__(self, name, **methods):
        self._name = name
        self._methods = methods
        for key, fun in methods.items():
            fun.__qualname__ = f"{name}.{key}"
            setattr(self, key, fun)

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        raise AttributeError(
            f"autodiff.scipy.stats.{self._name} has no {key!r}; it has {', '.join(self._methods)}. "
            f"Use scipy.stats.{self._name}.{key} on plain values (no gradient)"
        )

    def __repr__(self):
        return f"<autodiff.scipy.stats.{self._name}: {', '.join(self._methods)}>"
