"""A content-addressed disk cache of LLM calls, as an ``LLMClient`` wrapper.

The key hashes only what changes the output: the model, the messages, the sampling params, the
requested output schema and the versions (content hashes) of the prompts the messages were
rendered from. Everything else a call carries is listed in :data:`CACHE_KEY_EXCLUDE` and kept out
of the key on purpose, so changing a timeout or a concurrency limit never invalidates a run.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import IO, Any

import anyio
from pydantic import BaseModel

from mirage_guard.guard.errors import InputError
from mirage_guard.guard.llm import Completion, LLMClient, Message, SamplingParams
from mirage_guard.prompts import Prompt

CACHE_KEY_EXCLUDE: frozenset[str] = frozenset(
    {"timeout_s", "concurrency", "attempts", "api_base", "api_key", "retry", "progress"}
)
"""Call attributes that never change a model's output and are left out of the cache key."""

_PROMPT_REFS: ContextVar[tuple[str, ...]] = ContextVar("mirage_bench_prompt_refs", default=())
_ATTEMPT: ContextVar[int] = ContextVar("mirage_bench_attempt", default=1)
_SAMPLE: ContextVar[int] = ContextVar("mirage_bench_sample", default=1)


@contextmanager
def prompt_scope(*prompts: Prompt) -> Iterator[None]:
    """Declare the prompts the next calls are rendered from (their versions join the key)."""
    token = _PROMPT_REFS.set(tuple(sorted(p.ref for p in prompts)))
    try:
        yield
    finally:
        _PROMPT_REFS.reset(token)


@contextmanager
def attempt_scope(attempt: int) -> Iterator[None]:
    """Calls of a unit's ``attempt``-th try (``--retry-failed``): from the second try on, the
    attempt joins the key, so a retry asks the model again instead of re-reading the answer that
    failed; a retry killed mid-way finds its own completed calls again on the next resume."""
    token = _ATTEMPT.set(attempt)
    try:
        yield
    finally:
        _ATTEMPT.reset(token)


@contextmanager
def sample_scope(sample: int) -> Iterator[None]:
    """Calls for the ``sample``-th output of a unit (``--samples``): from the second on, the
    sample number joins the key, so each sample is its own call."""
    token = _SAMPLE.set(sample)
    try:
        yield
    finally:
        _SAMPLE.reset(token)


@cache
def _schema_description(schema: type[BaseModel]) -> dict[str, Any]:
    return {"name": schema.__name__, "json_schema": schema.model_json_schema()}


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
        "params": (params or SamplingParams()).key_fields(),
        "schema": None if schema is None else _schema_description(schema),
        "prompts": list(_PROMPT_REFS.get()),
        **(context or {}),
    }
    if _ATTEMPT.get() > 1:  # first tries keep the keys they always had
        described["attempt"] = _ATTEMPT.get()
    if _SAMPLE.get() > 1:
        described["sample"] = _SAMPLE.get()
    return {k: v for k, v in described.items() if k not in CACHE_KEY_EXCLUDE}


def cache_key(description: dict[str, Any]) -> str:
    blob = json.dumps(description, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DiskCache:
    """Append-only JSONL segments in ``<dir>``: one ``{"key", "completion"}`` line per call.

    Each cache instance appends to its own new segment file, so processes sharing a directory
    never interleave writes; all segments are read into an in-memory index when first used. A
    line torn by a kill is skipped (that call is simply a miss).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError(f"{self.directory} is a file, not a cache directory")
        self._index: dict[str, str] | None = None
        self._segment: IO[str] | None = None

    def _load(self) -> dict[str, str]:
        if self._index is None:
            index: dict[str, str] = {}
            for path in sorted(self.directory.glob("segment-*.jsonl")):
                # b"\n" only: a completion's text may hold U+2028 or U+0085 unescaped
                for line in path.read_bytes().split(b"\n"):
                    try:
                        row = json.loads(line.decode("utf-8"))
                        index[row["key"]] = json.dumps(row["completion"])
                    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
                        continue
            self._index = index
        return self._index

    def get(self, key: str) -> Completion | None:
        data = self.get_json(key)
        if data is None:
            return None
        try:
            return Completion.model_validate_json(data)
        except ValueError:
            return None

    def put(self, key: str, completion: Completion) -> None:
        self.put_json(key, completion.model_dump_json())

    def get_json(self, key: str) -> str | None:
        """The stored JSON text under ``key`` (any cached result, not only completions)."""
        return self._load().get(key)

    def put_json(self, key: str, body: str) -> None:
        index = self._load()
        if self._segment is None:
            self.directory.mkdir(parents=True, exist_ok=True)  # on the first write, not before
            name = f"segment-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}.jsonl"
            self._segment = (self.directory / name).open("a", encoding="utf-8")
        self._segment.write(f'{{"key":"{key}","completion":{body}}}\n')
        self._segment.flush()
        index[key] = body

    def close(self) -> None:
        if self._segment is not None:
            self._segment.close()
            self._segment = None

    def __contains__(self, key: str) -> bool:
        return key in self._load()

    def __len__(self) -> int:
        return len(self._load())


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
            self.cache.put(key, completion)  # stored as the provider returned it
            return completion
        finally:
            del self._inflight[key]
            event.set()

    async def aclose(self) -> None:
        self.cache.close()
        await self.inner.aclose()
