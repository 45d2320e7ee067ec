"""The call cache: what is in the key, what is excluded, hits, coalescing, torn files."""

from __future__ import annotations

from pathlib import Path

import anyio

from mirage_guard.benchmark._cache import (
    CACHE_KEY_EXCLUDE,
    CachedLLM,
    DiskCache,
    cache_key,
    call_description,
    prompt_scope,
)
from mirage_guard.benchmark._schemas import ProbeOutput
from mirage_guard.guard.llm import FunctionLLM, Message, SamplingParams
from mirage_guard.prompts import load_prompt

MSG = [Message(role="user", content="hello")]


def _key(**kw: object) -> str:
    params = kw.pop("params", SamplingParams(temperature=0.7))
    return cache_key(call_description("m", MSG, None, params, context=kw))  # type: ignore[arg-type]


def test_key_covers_model_messages_params_schema_and_prompt_version() -> None:
    base = cache_key(call_description("m", MSG, None, SamplingParams(temperature=0.7)))
    assert base == _key()
    assert base != cache_key(call_description("n", MSG, None, SamplingParams(temperature=0.7)))
    other_msg = [Message(role="user", content="hello!")]
    assert base != cache_key(
        call_description("m", other_msg, None, SamplingParams(temperature=0.7))
    )
    assert base != _key(params=SamplingParams(temperature=0.0))
    assert base != _key(params=SamplingParams(temperature=0.7, seed=1))
    assert base != cache_key(
        call_description("m", MSG, ProbeOutput, SamplingParams(temperature=0.7))
    )
    with prompt_scope(load_prompt("bench_probe")):
        assert base != _key()


def test_excluded_fields_never_change_the_key() -> None:
    assert {"timeout_s", "concurrency", "api_base", "attempts"} <= CACHE_KEY_EXCLUDE
    assert _key() == _key(timeout_s=5, concurrency=99, api_base="http://x", attempts=2)
    assert _key() != _key(top_p=0.5)  # anything not excluded is part of the key


async def test_hits_misses_and_coalescing(tmp_path: Path) -> None:
    inner = FunctionLLM(lambda m, s: "answer", model="mock/x", latency_s=0.01)
    cached = CachedLLM(inner, DiskCache(tmp_path))
    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(cached.complete, MSG)
    assert len(inner.calls) == 1
    again = await CachedLLM(inner, DiskCache(tmp_path)).complete(MSG)
    assert again.cached
    assert again.text == "answer"
    assert len(inner.calls) == 1
    assert len(DiskCache(tmp_path)) == 1


async def test_torn_cache_line_is_a_miss(tmp_path: Path) -> None:
    inner = FunctionLLM(lambda m, s: "answer", model="mock/x")
    first = CachedLLM(inner, DiskCache(tmp_path))
    await first.complete(MSG)
    await first.aclose()
    [segment] = list(tmp_path.glob("segment-*.jsonl"))  # noqa: ASYNC240 - a test file
    segment.write_text(segment.read_text()[:-20])  # a kill tore the only line
    cache = DiskCache(tmp_path)
    result = await CachedLLM(inner, cache).complete(MSG)
    assert not result.cached
    assert len(inner.calls) == 2
    assert len(DiskCache(tmp_path)) == 1
