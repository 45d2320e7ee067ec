"""Typed JSON errors and the request body limit.

Handlers raise ``mirage_guard.guard.errors`` types; these handlers turn them into
``{"detail": ..., "error": {"type", "message", "retryable"}}`` (``detail`` is what Mem0 clients
read). Nothing here logs request bodies or memory text.

A language-model failure reaches the client as a typed code and a generic sentence only
(``model_timeout``, ``model_request_rejected`` ...): the provider's own error text may carry a
traceback, file paths or the prompt, so it goes to the log (WARNING), never into the answer.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mirage_guard.adapters._decision_log import DATABASE_DOWN, database_down, database_error
from mirage_guard.guard.errors import (
    BackendError,
    BackendUnavailableError,
    ClosedError,
    ConfigError,
    DatabaseUnavailableError,
    EncoderBusyError,
    IdempotencyConflictError,
    InputError,
    LimitExceededError,
    LLMAuthError,
    LLMError,
    LLMOutputError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
    MemoryNotFoundError,
    MirageError,
    ProfileError,
)

log = logging.getLogger("mirage.server")


class UnauthorizedError(MirageError):
    """Missing or unknown API key (HTTP 401; never reveals which)."""


class ForbiddenError(MirageError):
    """A route this sidecar does not open to anyone as configured (HTTP 403), e.g. the admin
    routes without MIRAGE_ADMIN_KEYS."""


def error_response(
    status: int,
    kind: str,
    message: str,
    *,
    retryable: bool = False,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        status_code=status,
        content={
            "detail": message,
            "error": {"type": kind, "message": message, "retryable": retryable},
        },
        headers=headers,
    )


# (exception type, HTTP status, error type); the first match wins, so subclasses come first.
_MAPPING: list[tuple[type[MirageError], int, str]] = [
    (UnauthorizedError, 401, "unauthorized"),
    (ForbiddenError, 403, "forbidden"),
    (IdempotencyConflictError, 409, "idempotency_conflict"),
    (LimitExceededError, 413, "limit_exceeded"),
    (InputError, 400, "invalid_input"),
    (MemoryNotFoundError, 404, "memory_not_found"),
    (ProfileError, 409, "profile_error"),
    (ConfigError, 501, "not_configured"),
    (LLMOutputError, 502, "model_output_invalid"),
    (LLMTimeoutError, 504, "model_timeout"),
    (LLMRateLimitError, 502, "model_rate_limited"),
    (LLMUnavailableError, 502, "model_unavailable"),
    (LLMAuthError, 502, "model_auth_failed"),
    (LLMRefusalError, 502, "model_refused"),
    (LLMRequestError, 502, "model_request_rejected"),
    (LLMError, 502, "model_failed"),
    (BackendUnavailableError, 503, "upstream_unavailable"),
    (ClosedError, 503, "shutting_down"),  # a request that arrives while the sidecar stops
    (EncoderBusyError, 503, "encoder_busy"),
    (BackendError, 502, "backend_error"),
]

# what the client reads for a model failure (the upstream text stays in the log)
_MODEL_MESSAGES: dict[str, str] = {
    "model_output_invalid": "the writer model's answer was not valid for the expected schema",
    "model_timeout": "the writer model did not answer in time",
    "model_rate_limited": "the writer model's provider is rate limiting requests",
    "model_unavailable": "the writer model's provider could not be reached",
    "model_auth_failed": "the writer model's provider rejected the configured credentials",
    "model_refused": "the writer model refused to answer",
    "model_request_rejected": "the writer model's provider rejected the request",
    "model_failed": "the writer model call failed",
}


def _client_message(exc: MirageError, kind: str) -> str:
    if isinstance(exc, LLMError):
        # full provider text to the log only: it can hold tracebacks, paths, prompt text
        log.warning("model call failed (%s): %s", kind, exc)
        return f"{_MODEL_MESSAGES.get(kind, 'the writer model call failed')}; nothing was written"
    return str(exc)


def _mirage_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MirageError)
    status, kind = 500, "internal_error"
    for cls, code, name in _MAPPING:
        if isinstance(exc, cls):
            status, kind = code, name
            break
    headers: dict[str, str] = {}
    if exc.retryable and status >= 500:
        status = 503
        headers["Retry-After"] = "1"
    if status == 401:
        headers["WWW-Authenticate"] = "Token"
    log.info("%s %s -> %d %s", request.method, request.url.path, status, kind)
    message = _client_message(exc, kind)
    return error_response(status, kind, message, retryable=exc.retryable, headers=headers)


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors: list[dict[str, Any]] = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    message = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    body: dict[str, Any] = {
        "detail": message,
        "error": {
            "type": "validation_error",
            "message": message,
            "retryable": False,
            "fields": errors,
        },
    }
    return JSONResponse(status_code=422, content=body)


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_response(exc.status_code, kind, str(exc.detail), headers=dict(exc.headers or {}))


def _count(request: Request, stage: str, exc: Exception) -> None:
    """Count a failure the handlers answer in ``mirage_guard_errors_total`` (the alert rules
    read it: a database outage had raised no alert)."""
    sidecar = getattr(request.app.state, "sidecar", None)
    if sidecar is not None:
        sidecar.metrics.on_error(stage, exc)


def _database_down(request: Request, exc: Exception) -> JSONResponse:
    """The decision log's database is unreachable (a restart, a failover, a full pool): 503,
    retryable, as the store being down is; it was a 500 ``internal_error``, not retryable, so a
    client that honours ``retryable`` dropped the write. Nothing was half-written (a write's
    store items are undone when its log rows cannot be written). The memory raises
    :class:`DatabaseUnavailableError` for it, the log's own routes SQLAlchemy's error; either is
    counted under the driver error's type."""
    if not isinstance(exc, DatabaseUnavailableError) and not database_down(exc):
        # a log's own route (GET /v1/decisions) on a log SQLite cannot use: no retry mends it
        _count(request, "database", exc)
        return _mirage_error(request, database_error(exc))
    cause = exc.__cause__ if isinstance(exc, DatabaseUnavailableError) else exc
    kind = cause if isinstance(cause, Exception) else exc
    log.error("%s %s: the decision log's database is unavailable: %s", request.method,
              request.url.path, type(kind).__name__)  # fmt: skip
    _count(request, "database", kind)
    return error_response(
        503,
        "database_unavailable",
        "the decision log's database is unavailable; retry later",
        retryable=True,
        headers={"Retry-After": "1"},
    )


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    # type only at ERROR: an exception message may quote memory text
    log.error("%s %s failed: %s", request.method, request.url.path, type(exc).__name__)
    log.debug("traceback", exc_info=exc)
    _count(request, "request", exc)
    return error_response(500, "internal_error", "internal error")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(MirageError, _mirage_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    database_down: tuple[type[Exception], ...] = (DatabaseUnavailableError, *DATABASE_DOWN)
    for db_down in database_down:
        app.add_exception_handler(db_down, _database_down)
    app.add_exception_handler(Exception, _unexpected)


class BodyLimitMiddleware:
    """Refuse request bodies larger than ``max_bytes`` with a typed 413, before any handler runs.

    Checks ``Content-Length`` and also counts streamed (chunked) bodies.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await self._reject(scope, receive, send, 400, "invalid Content-Length")
                    return
                if declared > self.max_bytes:
                    await self._too_large(scope, receive, send)
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._reject(
            scope, receive, send, 413, f"request body larger than {self.max_bytes} bytes"
        )

    @staticmethod
    async def _reject(scope: Scope, receive: Receive, send: Send, status: int, msg: str) -> None:
        kind = "payload_too_large" if status == 413 else "invalid_request"
        response = error_response(status, kind, msg)
        await response(scope, receive, send)
