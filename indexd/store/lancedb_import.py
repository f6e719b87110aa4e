"""Import lancedb without paying for the REST client it never uses here.

``import lancedb`` pulls in ``lance_namespace_urllib3_client``, a generated REST
client whose nine API classes wrap ~370 methods in pydantic's ``validate_call``;
building those validators is about half of lancedb's import time (0.45 of
0.88 s on the bars machine), paid by every ``indexd`` process (each one-shot
index, each daemon start, each test that starts one). indexd opens local paths
and S3 URIs, never a REST namespace, so those methods are never called.

While lancedb is first imported, ``pydantic.validate_call`` is swapped for one
that builds its validator on the first call instead of at decoration: a method
that is called still validates exactly as before. Only that import is patched;
the original is put back before anything else runs.
"""

from __future__ import annotations

import functools
import sys
import threading
from types import ModuleType

_LOCK = threading.Lock()


def _deferred(real):
    """``validate_call`` with the same signature, building the validator on first use."""

    def validate_call(func=None, /, **options):
        def wrap(fn):
            built = None

            @functools.wraps(fn)
            def call(*args, **kwargs):
                nonlocal built
                if built is None:
                    built = real(**options)(fn)
                return built(*args, **kwargs)

            return call

        return wrap if func is None else wrap(func)

    return validate_call


def lancedb() -> ModuleType:
    """The lancedb module, imported once with deferred REST-client validators."""
    with _LOCK:
        if "lancedb" in sys.modules:
            return sys.modules["lancedb"]
        import pydantic

        real = pydantic.validate_call
        pydantic.validate_call = _deferred(real)
        try:
            import lancedb as module
        finally:
            pydantic.validate_call = real
        return module
