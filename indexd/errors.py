"""The indexd error tree. Each class carries a JSON-RPC code and a retryable flag.

    IndexdError
    ├── ProtocolError        -32700 parse, -32600 invalid request, -32601 no method, -32602 bad params
    ├── RealmError           unknown realm/repo, path outside every realm
    ├── IndexNotReady        retryable; data says what is pending
    ├── ModelUnavailable     embedding model or Ollama; retryable
    ├── StoreError           store missing, schema mismatch: message names the fix
    └── ConfigError          bad config file, env value or flag
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


_BY_CODE = {}
for _cls in (ProtocolError, ParseError, MethodNotFound, InvalidParams, RealmError,
             IndexNotReady, ModelUnavailable, StoreError, ConfigError,
             NotImplementedYet):
    _BY_CODE[_cls.code] = _cls


def from_rpc(err: dict) -> IndexdError:
    """Rebuild a typed error from a JSON-RPC error object (client side)."""
    cls = _BY_CODE.get(err.get("code"), IndexdError)
    return cls(err.get("message", "error"), err.get("data") or {})
