"""One MiniLM for the guard and the store, and one encode per text.

The guard's evidence linker already embeds every candidate with all-MiniLM-L6-v2; Mem0 would
embed the same text again to store it. ``CachingEmbedder`` remembers recent vectors, and
``Mem0Embedding`` gives Mem0 its embedding interface over the same embedder, so a guarded write
costs one batched forward pass, not one per fact.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from mirage_guard.adapters._fair_encoder import FairEncoder
from mirage_guard.guard.evidence import Embedder, Vectors, current_cache_namespace

_ENTRY_OVERHEAD = 200  # dict slot, key tuple and strings, array header


class CachingEmbedder:
    """An :class:`guard.evidence.Embedder` with an LRU cache of text -> vector (thread-safe),
    bounded by ``max_bytes`` and keyed by cache namespace (the tenant) as well as text.

    Cache misses go through a :class:`~._fair_encoder.FairEncoder`: concurrent callers share
    forward passes (coalescing), each pass takes one chunk of ``chunk`` texts from every waiting
    request in turn (a large request cannot hold a small one for more than one chunk), and a
    request not encoded within ``budget_s`` fails with ``EncoderBusyError`` (nothing written).
    """

    def _encode_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[Any]]:
        """The inner embedder's sentence and token vectors (the claim-support signal needs both),
        fairly scheduled like every encode; the sentence vectors also go into this cache.
        Offered only when the inner one has it."""
        if not texts:
            return self.inner.encode_with_tokens(texts)  # type: ignore[attr-defined,no-any-return]
        job = self._fair.run(texts, tokens=True)
        vecs = np.stack([job.vectors[t] for t in texts]).astype(np.float32)
        tokens = [job.token_vectors[t] for t in texts]
        namespace = current_cache_namespace()
        with self._lock:
            for t, v in zip(texts, vecs, strict=True):
                self._remember((namespace, t), v)
        return vecs, list(tokens)

    def __init__(
        self,
        inner: Embedder,
        *,
        max_bytes: int = 32 * 1024 * 1024,
        chunk: int = 32,
        budget_s: float = 30.0,
    ) -> None:
        self.inner = inner
        self.max_bytes = max_bytes
        with_tokens = getattr(inner, "encode_with_tokens", None)
        if with_tokens is not None:
            self.encode_with_tokens = self._encode_with_tokens
        self._fair = FairEncoder(
            lambda texts: inner.encode(texts),
            (lambda texts: with_tokens(texts)) if with_tokens is not None else None,
            chunk=chunk,
            budget_s=budget_s,
        )
        # (cache namespace, text) -> vector: a tenant's hits never come from another's texts
        self._cache: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def cached_bytes(self) -> int:
        return self._bytes

    @staticmethod
    def _size(key: tuple[str, str], vector: Vectors) -> int:
        return int(vector.nbytes) + len(key[0]) + len(key[1]) + _ENTRY_OVERHEAD

    def _remember(self, key: tuple[str, str], vector: Vectors) -> None:
        """Cache one vector, evicting the least recently used past ``max_bytes`` (lock held)."""
        old = self._cache.pop(key, None)
        if old is not None:
            self._bytes -= self._size(key, old)
        size = self._size(key, vector)
        if size > self.max_bytes:
            return
        self._cache[key] = vector
        self._bytes += size
        while self._bytes > self.max_bytes:
            evicted, vec = self._cache.popitem(last=False)
            self._bytes -= self._size(evicted, vec)

    def _coalesced(self, texts: list[str]) -> dict[str, Vectors]:
        return self._fair.run(texts).vectors

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def profile_embedder(self) -> str | None:
        """The embedder whose profiles the inner one may use (see ``Guard``)."""
        return getattr(self.inner, "profile_embedder", None)

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def encode(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts``, cached in the current cache namespace (the tenant's)."""
        namespace = current_cache_namespace()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing: list[int] = []
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._cache.get((namespace, text))
                if hit is None:
                    missing.append(i)
                else:
                    self._cache.move_to_end((namespace, text))
                    out[i] = hit
        if missing:
            fresh = self._coalesced([texts[i] for i in missing])
            with self._lock:
                for i in missing:
                    out[i] = fresh[texts[i]]
                for text, vector in fresh.items():
                    self._remember((namespace, text), vector)
        return out

    def encode_uncached(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts`` without reading or filling the cache (a search query: Mem0 may
        run it on a thread that does not carry the tenant's cache namespace)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        fresh = self._coalesced(list(texts))
        return np.stack([fresh[t] for t in texts]).astype(np.float32)


class Mem0Embedding:
    """Mem0's embedder interface (``embed`` / ``embed_batch``) over a guard embedder."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def _encode(self, texts: Sequence[str], memory_action: str | None) -> Vectors:
        uncached = getattr(self.embedder, "encode_uncached", None)
        if memory_action == "search" and uncached is not None:
            vectors: Vectors = uncached(texts)  # a query's timing says nothing about the cache
            return vectors
        return self.embedder.encode(texts)

    def embed(
        self, text: str, memory_action: Literal["add", "search", "update"] | None = None
    ) -> list[float]:
        vector: list[float] = self._encode([text], memory_action)[0].tolist()
        return vector

    def embed_batch(self, texts: Sequence[str], memory_action: str = "add") -> list[list[float]]:
        if not texts:
            return []
        vectors: list[list[float]] = self._encode(list(texts), memory_action).tolist()
        return vectors


__all__ = ["CachingEmbedder", "Mem0Embedding"]
