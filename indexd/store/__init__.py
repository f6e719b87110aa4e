"""Storage: LanceDB tables behind one class. See store/lance.py."""

from .lance import FileWrite, Store

__all__ = ["FileWrite", "Store"]
