"""The Mem0 OSS REST server's routes over a real ``mem0.Memory``: what ``RemoteMem0Backend``
meets in production, in-process (``httpx.ASGITransport``) and offline.

Routes, status codes and error handling follow mem0's ``server/main.py``: at least one scope id on
add / list / delete-all (else 400), ``null`` for a missing ``GET /memories/{id}``, and any
exception of the store answered with 500 (a missing id on ``PUT`` / ``DELETE`` included). Request
bodies are the ones ``RemoteMem0Backend`` sends (``infer``, ``top_k``, ``threshold``, ``text`` /
``metadata`` on update); Mem0 2.x takes scope ids inside ``filters``, so the routes put them there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

T = TypeVar("T")
_SCOPE = ("user_id", "agent_id", "run_id")


class _Message(BaseModel):
    role: str
    content: str


class _MemoryCreate(BaseModel):
    messages: list[_Message]
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool | None = None


class _SearchRequest(BaseModel):
    query: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    filters: dict[str, Any] | None = None
    top_k: int | None = None
    threshold: float | None = None


def _scope(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str]:
    ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    scope = {k: v for k, v in ids.items() if v is not None}
    if not scope:
        raise HTTPException(400, "At least one identifier (user_id, agent_id, run_id) is required.")
    return scope


def mem0_oss_app(memory: Any) -> FastAPI:
    """Mem0's REST routes over ``memory`` (a ``mem0.Memory``; one call at a time, as embedded
    Qdrant needs)."""
    app = FastAPI(title="Mem0 REST APIs")
    lock = threading.Lock()

    def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with lock:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # as upstream: every store error is a 500
                raise HTTPException(500, str(exc)) from exc

    @app.post("/memories")
    def add(body: _MemoryCreate) -> Any:
        scope = _scope(body.user_id, body.agent_id, body.run_id)
        params: dict[str, Any] = {"metadata": body.metadata}
        if body.infer is not None:
            params["infer"] = body.infer
        messages = [m.model_dump() for m in body.messages]
        return call(memory.add, messages=messages, **scope, **params)

    @app.get("/memories")
    def get_all(
        user_id: str | None = None, run_id: str | None = None, agent_id: str | None = None
    ) -> Any:
        return call(memory.get_all, filters=_scope(user_id, agent_id, run_id))

    @app.get("/memories/{memory_id}")
    def get(memory_id: str) -> Any:
        return call(memory.get, memory_id)

    @app.post("/search")
    def search(body: _SearchRequest) -> Any:
        scope = {k: v for k in _SCOPE if (v := getattr(body, k)) is not None}
        params = {k: v for k in ("top_k", "threshold") if (v := getattr(body, k)) is not None}
        filters = {**scope, **(body.filters or {})}
        return call(memory.search, query=body.query, filters=filters, **params)

    @app.put("/memories/{memory_id}")
    def update(memory_id: str, body: dict[str, Any]) -> Any:
        return call(memory.update, memory_id, text=body.get("text"), metadata=body.get("metadata"))

    @app.get("/memories/{memory_id}/history")
    def history(memory_id: str) -> Any:
        return call(memory.history, memory_id)

    @app.delete("/memories/{memory_id}")
    def delete(memory_id: str) -> Any:
        call(memory.delete, memory_id)
        return {"message": "Memory deleted successfully"}

    @app.delete("/memories")
    def delete_all(
        user_id: str | None = None, run_id: str | None = None, agent_id: str | None = None
    ) -> Any:
        call(memory.delete_all, **_scope(user_id, agent_id, run_id))
        return {"message": "All relevant memories deleted"}

    @app.post("/reset")
    def reset() -> Any:
        call(memory.reset)
        return {"message": "All memories reset"}

    return app


__all__ = ["mem0_oss_app"]
