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

from mirage_guard.guard.evidence import Embedder, Vectors, current_cache_namespace

_ENTRY_OVERHEAD = 200  # dict slot, key tuple and strings, array header


class _Request:
    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.result: dict[str, Vectors] | None = None
        self.error: BaseException | None = None


class CachingEmbedder:
    """An :class:`guard.evidence.Embedder` with an LRU cache of text -> vector (thread-safe),
    bounded by ``max_bytes`` and keyed by cache namespace (the tenant) as well as text.

    Concurrent callers are coalesced: while one forward pass runs, the texts of every caller that
    arrives queue up and go through the model together in the next pass (one batch instead of
    one pass per request; no added wait when the model is idle).
    """

    def _encode_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[Any]]:
        """The inner embedder's sentence and token vectors (the claim-support signal needs both);
        the sentence vectors also go into this cache. Offered only when the inner one has it."""
        vecs, tokens = self.inner.encode_with_tokens(texts)  # type: ignore[attr-defined]
        namespace = current_cache_namespace()
        with self._lock:
            for t, v in zip(texts, vecs, strict=True):
                self._remember((namespace, t), v)
        return vecs, list(tokens)

    def __init__(self, inner: Embedder, *, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.inner = inner
        self.max_bytes = max_bytes
        if hasattr(inner, "encode_with_tokens"):
            self.encode_with_tokens = self._encode_with_tokens
        # (cache namespace, text) -> vector: a tenant's hits never come from another's texts
        self._cache: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._turn = threading.Condition()
        self._queue: list[_Request] = []
        self._busy = False

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
        request = _Request(texts)
        with self._turn:
            self._queue.append(request)
            while request.result is None and request.error is None:
                if self._busy:
                    self._turn.wait()
                    continue
                self._busy = True
                batch, self._queue = self._queue, []
                self._turn.release()
                try:
                    self._run(batch)
                finally:
                    self._turn.acquire()
                    self._busy = False
                    self._turn.notify_all()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _run(self, batch: list[_Request]) -> None:
        unique = list(dict.fromkeys(t for r in batch for t in r.texts))  # each text once
        try:
            vectors = dict(zip(unique, self.inner.encode(unique), strict=True))
        except BaseException as exc:  # every waiting caller gets the failure
            for r in batch:
                r.error = exc
            raise
        for r in batch:
            r.result = {t: vectors[t] for t in r.texts}

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
