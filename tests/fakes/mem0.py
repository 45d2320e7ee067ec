"""Fakes for the Mem0 side: an in-memory store, a fake Mem0 OSS REST server, extraction replies.

``InMemoryStore`` implements :class:`adapters.MemoryBackend` with dicts (word-overlap search) and
can be told to fail: ``down`` makes every call raise ``BackendUnavailableError``;
``fail_on_add`` makes the n-th add (1-based) fail that way. ``mem0_rest_app`` serves the Mem0 OSS
REST routes over such a store, for :class:`mirage_guard.adapters.RemoteMem0Backend` tests, with
the upstream server's status codes (400 without a scope id, 500 for any store error, an unknown
id included). Both are held to the real stores by tests/adapters/test_backend_contract.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from mirage_guard.adapters import MemoryBackend, MemoryScope, matches
from mirage_guard.guard.errors import BackendUnavailableError, MemoryNotFoundError

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _hash(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()  # what mem0 stores as "hash"


class InMemoryStore(MemoryBackend):
    name = "in-memory"

    def __init__(self, *, fail_on_add: int | None = None) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.events: dict[str, list[dict[str, Any]]] = {}
        self.add_calls = 0
        self.fail_on_add = fail_on_add
        self.down = False
        self.apply_filters = True  # False: behave like an upstream that ignores filters

    def _check(self) -> None:
        if self.down:
            raise BackendUnavailableError("fake store is down")

    def _event(self, memory_id: str, event: str, old: str | None, new: str | None) -> None:
        self.events.setdefault(memory_id, []).append(
            {
                "id": uuid.uuid4().hex,
                "memory_id": memory_id,
                "old_memory": old,
                "new_memory": new,
                "event": event,
                "created_at": _now(),
                "is_deleted": event == "DELETE",
            }
        )

    def _item(self, memory_id: str) -> dict[str, Any]:
        raw = self.items[memory_id]
        item = {k: v for k, v in raw.items() if k != "metadata"}
        if raw["metadata"]:
            item["metadata"] = dict(raw["metadata"])
        return item

    async def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        scope: MemoryScope,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        self._check()
        self.add_calls += 1
        if self.fail_on_add is not None and self.add_calls >= self.fail_on_add:
            raise BackendUnavailableError("fake store went down during the write")
        out = []
        for m in messages:
            memory_id = str(uuid.uuid4())
            now = _now()
            self.items[memory_id] = {
                "id": memory_id,
                "memory": m["content"],
                "hash": _hash(m["content"]),
                "role": m["role"],
                "created_at": now,
                "updated_at": now,
                **scope.as_kwargs(),
                "metadata": dict(metadata or {}),
            }
            self._event(memory_id, "ADD", None, m["content"])
            out.append({"id": memory_id, "memory": m["content"], "event": "ADD", "role": m["role"]})
        return out

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        self._check()
        return self._item(memory_id) if memory_id in self.items else None

    def _filtered(self, filters: Mapping[str, Any]) -> list[dict[str, Any]]:
        items = [self._item(i) for i in self.items]
        return [i for i in items if matches(i, filters)] if self.apply_filters else items

    async def get_all(self, *, filters: Mapping[str, Any], top_k: int) -> list[dict[str, Any]]:
        self._check()
        return self._filtered(filters)[:top_k]

    async def scan(self, *, filters: Mapping[str, Any], limit: int) -> list[dict[str, Any]]:
        self._check()
        return [i for i in (self._item(m) for m in self.items) if matches(i, filters)][:limit]

    async def search(
        self, query: str, *, filters: Mapping[str, Any], top_k: int, threshold: float
    ) -> list[dict[str, Any]]:
        self._check()
        q = _words(query)
        scored = []
        for item in self._filtered(filters):
            words = _words(item["memory"])
            score = len(q & words) / max(len(q | words), 1)
            if score >= threshold:
                scored.append({**item, "score": score})
        scored.sort(key=lambda i: -i["score"])
        return scored[:top_k]

    async def update(
        self, memory_id: str, *, text: str | None, metadata: Mapping[str, Any] | None
    ) -> None:
        self._check()
        if memory_id not in self.items:
            raise MemoryNotFoundError(memory_id)
        raw = self.items[memory_id]
        old = raw["memory"]
        if text is not None:
            raw["memory"] = text
            raw["hash"] = _hash(text)
        raw["updated_at"] = _now()
        if metadata is not None:
            raw["metadata"].update(metadata)
        self._event(memory_id, "UPDATE", old, raw["memory"])

    async def delete(self, memory_id: str) -> None:
        self._check()
        if memory_id not in self.items:
            raise MemoryNotFoundError(memory_id)
        old = self.items.pop(memory_id)["memory"]
        self._event(memory_id, "DELETE", old, None)

    async def delete_all(self, scope: MemoryScope) -> None:
        self._check()
        for memory_id in [i["id"] for i in self._filtered(scope.as_kwargs())]:
            await self.delete(memory_id)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        self._check()
        return list(self.events.get(memory_id, []))

    async def reset(self) -> None:
        self._check()
        self.items.clear()
        self.events.clear()

    async def ping(self) -> None:
        self._check()


class HeldStore(InMemoryStore):
    """Stores a write's first fact, then holds every later add until ``go`` is set or ``hold``
    is cleared: a write caught in flight between two store writes. With ``dead=True`` its
    deletes fail while it holds (a process killed there undoes nothing, so its write intent
    stays pending)."""

    def __init__(self, *, dead: bool = False) -> None:
        super().__init__()
        self.first_stored = anyio.Event()
        self.go = anyio.Event()
        self.hold = True
        self.dead = dead

    async def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        scope: MemoryScope,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        if self.hold and self.first_stored.is_set():
            await self.go.wait()
        out = await super().add(messages, scope=scope, metadata=metadata)
        self.first_stored.set()
        return out

    async def delete(self, memory_id: str) -> None:
        if self.dead and self.hold:
            raise RuntimeError("killed: the dead process undoes nothing")
        await super().delete(memory_id)


def mem0_rest_app(store: InMemoryStore) -> FastAPI:
    """The Mem0 OSS REST routes over ``store`` (what ``RemoteMem0Backend`` talks to)."""
    app = FastAPI()

    def scope_of(data: Mapping[str, Any]) -> MemoryScope:
        scope = MemoryScope(**{k: data.get(k) for k in ("user_id", "agent_id", "run_id")})
        if scope.is_empty():  # as Mem0's server/main.py
            raise HTTPException(400, "At least one identifier is required.")
        return scope

    @app.exception_handler(BackendUnavailableError)
    async def _down(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": "down"}, status_code=500)

    @app.exception_handler(MemoryNotFoundError)
    async def _missing(request: Request, exc: Exception) -> JSONResponse:
        # Mem0's server answers every store error with 500, an unknown id included
        return JSONResponse({"detail": f"memory {exc} not found"}, status_code=500)

    @app.post("/memories")
    async def add(request: Request) -> Any:
        body = await request.json()
        if body.get("infer") is not False:
            raise HTTPException(400, "this fake only stores verbatim")
        results = await store.add(
            body["messages"], scope=scope_of(body), metadata=body.get("metadata")
        )
        return {"results": results}

    @app.get("/memories")
    async def get_all(request: Request) -> Any:
        scope = scope_of(request.query_params)
        return {"results": await store.get_all(filters=scope.as_kwargs(), top_k=1000)}

    @app.get("/memories/{memory_id}")
    async def get(memory_id: str) -> Any:
        return await store.get(memory_id)

    @app.post("/search")
    async def search(request: Request) -> Any:
        body = await request.json()
        filters = body.get("filters") or scope_of(body).as_kwargs()
        results = await store.search(
            body["query"], filters=filters, top_k=body.get("top_k", 20),
            threshold=body.get("threshold", 0.0),
        )  # fmt: skip
        return {"results": results}

    @app.put("/memories/{memory_id}")
    async def update(memory_id: str, request: Request) -> Any:
        body = await request.json()
        await store.update(memory_id, text=body.get("text"), metadata=body.get("metadata"))
        return {"message": "Memory updated successfully!"}

    @app.delete("/memories/{memory_id}")
    async def delete(memory_id: str) -> Any:
        await store.delete(memory_id)
        return {"message": "Memory deleted successfully"}

    @app.delete("/memories")
    async def delete_all(request: Request) -> Any:
        await store.delete_all(scope_of(request.query_params))
        return {"message": "All relevant memories deleted"}

    @app.get("/memories/{memory_id}/history")
    async def history(memory_id: str) -> Any:
        return await store.history(memory_id)

    @app.post("/reset")
    async def reset() -> Any:
        await store.reset()
        return {"message": "All memories reset"}

    return app


def claims_reply(*claims: tuple[str, str | None, str, float]) -> str:
    """A well-formed answer of the extraction prompt: (text, source_turn_id, label, confidence)."""
    return json.dumps(
        {
            "claims": [
                {"text": t, "source_turn_id": s, "label": label, "confidence": c}
                for t, s, label, c in claims
            ]
        }
    )


# A conversation where each provenance has one obvious candidate. The wiring tests run the
# shipped profile on the hashing embedder's features, where INFERRED_TEXT lands in "inferred"
# (P(over-inference) 0.44 against 0.55, P(stated) 0.05 against 0.45 with the 2026-12-04 profile;
# "User probably watches a lot of anime", used before, moved to P(stated) 0.51 with that refit:
# hashed features are no reading of the claim, so the text is chosen with a margin both ways);
# the tests with the real MiniLM embedder use MINILM_INFERRED_TEXT, which lands there on MiniLM's
# features (on them INFERRED_TEXT reads as stated, the known weakness
# benchmark/GUARD_MEASUREMENTS.md describes; on hashed features MINILM_INFERRED_TEXT scores as
# over-inference since the profile stopped reading the claim's topic).
CONVERSATION = [
    {"id": "t1", "role": "user", "content": "I went climbing last weekend."},
    {"id": "t2", "role": "user", "content": "I watched anime until 4am yesterday."},
    {"id": "t3", "role": "assistant", "content": "Sounds fun! You must love the outdoors."},
]
STATED_TEXT = "User went climbing last weekend"
INFERRED_TEXT = "User watches anime regularly"
MINILM_INFERRED_TEXT = "User may be a night owl and an anime fan"
GENERATED_TEXT = "User is looking for an adventure partner"


def conversation_reply(inferred: str = INFERRED_TEXT) -> str:
    return claims_reply(
        (STATED_TEXT, "t1", "GROUNDED", 0.95),
        (inferred, "t2", "INFERRED_REASONABLE", 0.7),
        (GENERATED_TEXT, None, "FABRICATED", 0.6),
    )
