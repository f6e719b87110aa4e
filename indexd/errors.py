"""The indexd error tree. Each class carries a JSON-RPC code and a retryable flag.

    IndexdError
    ├── ProtocolError        -32700 parse, -32600 invalid request, -32601 no method, -32602 bad params
    ├── RealmError           unknown realm/repo, path outside every realm
    ├── IndexNotReady        retryable; data says what is pending
    ├── ModelUnavailable     embedding model or Ollama; retryable
    ├── StoreError           store missing, schema mismatch: message names the fix
    └── ConfigError          bad config file, env value or flag
        └── UnsafePath       runtime dir or a file in it others could have planted (a link)
    client side only: DaemonNotRunning, ConnectionLost, RequestTimeout

Foreign exceptions are mapped to the most specific class at the adapters.
No imports from the engine: the client uses this module.
"""

from __future__ import annotations


class IndexdError(Exception):
    code = -32603
    retryable = False

    def __init__(self, message: str, data: dict | None = None):
        super().__init__(message)
        self.message = message
        self.data = data or {}

    def to_rpc(self) -> dict:
        err = {"code": self.code, "message": self.message}
        data = dict(self.data)
        data.setdefault("type", type(self).__name__)
        data.setdefault("retryable", self.retryable)
        err["data"] = data
        return err


class ProtocolError(IndexdError):
    code = -32600


class ParseError(ProtocolError):
    code = -32700


class MethodNotFound(ProtocolError):
    code = -32601


class InvalidParams(ProtocolError):
    code = -32602


class RealmError(IndexdError):
    code = -32001


class IndexNotReady(IndexdError):
    code = -32002
    retryable = True


class ModelUnavailable(IndexdError):
    code = -32003
    retryable = True


class StoreError(IndexdError):
    code = -32004


class ConfigError(IndexdError):
    code = -32005


class UnsafePath(ConfigError):
    """A runtime directory (or a file in it) that is a link, someone else's, or open to others."""


class NotImplementedYet(IndexdError):
    code = -32006


# Client side only.
class DaemonNotRunning(IndexdError):
    code = -32010
    retryable = True


class ConnectionLost(IndexdError):
    code = -32011
    retryable = True


class RequestTimeout(IndexdError):
    code = -32012
    retryable = True


def describe_store_error(exc: Exception) -> str:
    """An error for status: what went wrong and, for a damaged store, the fix."""
    text = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    low = text.lower()
    if "lance" in low and any(w in low for w in ("not found", "no such file", "corrupt",
                                                  "failed to fill", "invalid", "io")):
        return (f"{text.splitlines()[0][:300]} -- the store looks damaged or deleted; "
                "stop the daemon, run `indexd reset --yes`, and start it again to rebuild")
    return text.splitlines()[0][:500] if text else type(exc).__name__


_BY_CODE = {}
for _cls in (ProtocolError, ParseError, MethodNotFound, InvalidParams, RealmError,
             IndexNotReady, ModelUnavailable, StoreError, ConfigError,
             NotImplementedYet):
    _BY_CODE[_cls.code] = _cls


def from_rpc(err: dict) -> IndexdError:
    """Rebuild a typed error from a JSON-RPC error object (client side)."""
    cls = _BY_CODE.get(err.get("code"), IndexdError)
    return cls(err.get("message", "error"), err.get("data") or {})


class Stopping(Exception):
    """Long work given up because the daemon is stopping (not an error: what it
    would have made is derived again at the next start)."""
