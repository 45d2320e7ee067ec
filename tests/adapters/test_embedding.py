"""CachingEmbedder: the model's vectors, each text encoded once, concurrent callers batched."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from mirage_guard.adapters._embedding import CachingEmbedder, Mem0Embedding
from mirage_guard.guard.evidence import cache_namespace
from mirage_guard.guard.evidence._embedder import Vectors
from tests.fakes.embedder import CountingEmbedder, HashingEmbedder


def test_vectors_match_the_model_and_each_text_is_encoded_once() -> None:
    model = HashingEmbedder()
    counting = CountingEmbedder(model)
    cached = CachingEmbedder(counting, max_bytes=2 * (256 * 4 + 220))  # two vectors
    texts = ["likes tea", "likes tea", "went climbing"]
    np.testing.assert_allclose(cached.encode(texts), model.encode(texts))
    assert counting.calls == [["likes tea", "went climbing"]]
    cached.encode(["went climbing"])
    assert len(counting.calls) == 1
    cached.encode(["a", "b"])  # evicts the two older texts (LRU of 2)
    cached.encode(["likes tea"])
    assert counting.calls[-1] == ["likes tea"]
    assert Mem0Embedding(cached).embed("a") == pytest.approx(model.encode(["a"])[0].tolist())
    assert Mem0Embedding(cached).embed_batch([]) == []


class _GatedEmbedder(CountingEmbedder):
    """Blocks its first encode until released, so later callers queue behind it."""

    def __init__(self) -> None:
        super().__init__(HashingEmbedder())
        self.entered = threading.Event()
        self.release = threading.Event()

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not self.calls:
            self.entered.set()
            self.release.wait(timeout=30)
        return super().encode(texts)


def test_callers_arriving_during_a_forward_pass_share_the_next_one() -> None:
    gated = _GatedEmbedder()
    cached = CachingEmbedder(gated)
    results: dict[str, Vectors] = {}

    def call(text: str) -> None:
        results[text] = cached.encode([text])

    first = threading.Thread(target=call, args=("first",))
    first.start()
    assert gated.entered.wait(timeout=30)
    others = [threading.Thread(target=call, args=(f"text {i}",)) for i in range(5)]
    for t in others:
        t.start()
    for _ in range(3000):  # until all five wait for the model (bounded, never a hang)
        if len(cached._fair._queue) == 5:
            break
        threading.Event().wait(0.01)
    gated.release.set()
    for t in [first, *others]:
        t.join(timeout=30)
    assert gated.calls[0] == ["first"]
    assert len(gated.calls) == 2
    assert sorted(gated.calls[1]) == sorted(f"text {i}" for i in range(5))
    for text, vector in results.items():
        np.testing.assert_allclose(vector, HashingEmbedder().encode([text]))


def test_a_failed_pass_fails_every_caller_in_it() -> None:
    class Broken(HashingEmbedder):
        def encode(self, texts: Sequence[str]) -> Vectors:
            raise RuntimeError("model crashed")

    with pytest.raises(RuntimeError, match="model crashed"):
        CachingEmbedder(Broken()).encode(["x"])


def test_the_cache_is_per_namespace_and_bounded_by_bytes() -> None:
    counting = CountingEmbedder(HashingEmbedder())
    cached = CachingEmbedder(counting, max_bytes=50 * (256 * 4 + 220))
    with cache_namespace("tenant-b"):
        cached.encode(["my sister lives in Lyon"])
    with cache_namespace("tenant-a"):
        cached.encode(["my sister lives in Lyon"])  # not answered from tenant-b's cache
        cached.encode(["my sister lives in Lyon"])  # tenant-a's own: cached
    assert counting.calls == [["my sister lives in Lyon"], ["my sister lives in Lyon"]]
    with cache_namespace("tenant-a"):
        for i in range(200):
            cached.encode([f"text {i}"])
    assert cached.cached_bytes <= cached.max_bytes
    assert len(cached._cache) < 60
    counting.reset()
    Mem0Embedding(cached).embed("text 199", memory_action="search")  # queries: never cached
    assert counting.calls == [["text 199"]]
