"""Neural-network building blocks for autodiff."""

from . import functional

__all__ = ["functional"]
