"""A content-addressed disk cache of LLM calls, as an ``LLMClient`` wrapper.

The key hashes only what changes the output: the model, the messages, the sampling params, the
requested output schema and the versions (content hashes) of the prompts the messages were
rendered from. Everything else a call carries is listed in :data:`CACHE_KEY_EXCLUDE` and kept out
of the key on purpose, so changing a timeout or a concurrency limit never invalidates a run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

from guard.llm import Completion, LLMClient, Message, SamplingParams
from prompts import Prompt

CACHE_KEY_EXCLUDE: frozenset[str] = frozenset(
    {"timeout_s", "concurrency", "attempts", "api_base", "api_key", "retry", "progress"}
)
"""Call attributes that never change a model's output and are left out of the cache key."""

_PROMPT_REFS: ContextVar[tuple[str, ...]] = ContextVar("mirage_bench_prompt_refs", default=())


@contextmanager
def prompt_scope(*prompts: Prompt) -> Iterator[None]:
    """Declare the prompts the next calls are rendered from (their versions join the key)."""
    token = _PROMPT_REFS.set(tuple(sorted(p.ref for p in prompts)))
    try:
        yield
    finally:
        _PROMPT_REFS.reset(token)


def call_description(
    model: str,
    messages: Sequence[Message],
    schema: type[BaseModel] | None,
    params: SamplingParams | None,
    *,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything known about a call, then minus :data:`CACHE_KEY_EXCLUDE`."""
    described: dict[str, Any] = {
        "model": model,
        "messages": [m.model_dump() for m in messages],
        "params": (params or SamplingParams()).model_dump(),
        "schema": None
        if schema is None
        else {"name": schema.__name__, "json_schema": schema.model_json_schema()},
        "prompts": list(_PROMPT_REFS.get()),
        **(context or {}),
    }
    return {k: v for k, v in described.items() if k not in CACHE_KEY_EXCLUDE}


def cache_key(description: dict[str, Any]) -> str:
    blob = json.dumps(description, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DiskCache:
    """``<dir>/<key[:2]>/<key>.json`` files, written atomically (tmp file + rename)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self.path(key)
        try:
            data = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return Completion.model_validate_json(data)
        except ValueError:
            return None  # a torn or foreign file is a miss, it will be rewritten

    def put(self, key: str, completion: Completion) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(completion.model_dump_json(), encoding="utf-8")
        os.replace(tmp, path)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json"))


class CachedLLM(LLMClient):
    """Answers from the disk cache when it can; otherwise calls ``inner`` and stores the answer.

    Concurrent identical calls are coalesced: only one reaches ``inner``.
    """

    def __init__(
        self, inner: LLMClient, cache: DiskCache, *, context: dict[str, Any] | None = None
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.cache = cache
        self.context = dict(context or {})
        self.hits = 0
        self.misses = 0
        self._inflight: dict[str, anyio.Event] = {}

    def key_for(
        self,
        messages: Sequence[Message],
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> str:
        return cache_key(
            call_description(self.model, messages, schema, params, context=self.context)
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        key = self.key_for(messages, schema, params)
        while key in self._inflight:
            await self._inflight[key].wait()
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return hit.model_copy(update={"cached": True})
        event = anyio.Event()
        self._inflight[key] = event
        try:
            completion = await self.inner.complete(messages, schema=schema, params=params)
            self.misses += 1
            self.cache.put(key, completion.model_copy(update={"cached": False}))
            return completion
        finally:
            del self._inflight[key]
            event.set()

    async def aclose(self) -> None:
        await self.inner.aclose()
