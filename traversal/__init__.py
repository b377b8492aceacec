"""traversal: Functors/Optimisers-style walks over nested models.

Not built yet: the functor protocol, walks, ``trainables``, ``destructure``
and ``total`` arrive with their own issues.  This package is deliberately
empty so that nothing here pretends to work.
"""

__all__ = []
