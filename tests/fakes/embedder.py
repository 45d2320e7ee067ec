"""Deterministic embedders for fast unit tests (no model, no torch).

``HashingEmbedder`` is a hashed bag of words: texts that share words are close, texts that share
none are orthogonal. It satisfies :class:`guard.evidence.Embedder`. ``CountingEmbedder`` wraps
any embedder and records every ``encode`` call, to check batching and caching.
``TableEmbedder`` gives hand-set vectors for given texts (cosines chosen by the test) and hashes
the rest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from mirage_guard.guard.evidence import Embedder
from mirage_guard.guard.evidence._embedder import Vectors

_TOKEN = re.compile(r"[a-z0-9]+")
# function words carry no evidence; dropping them keeps "a"/"my" from linking unrelated texts
_STOPWORDS = frozenset(
    "a an the i m my me at in on of to for and or is am are was were has have had with this "  # noqa: SIM905
    "that it its be been you your they their he she his her we our".split()
)


def _bucket(token: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % dimension, 1.0 if (value >> 63) & 1 else -1.0


class HashingEmbedder:
    """Signed feature hashing of lower-cased word tokens, L2-normalised."""

    def __init__(self, dimension: int = 256) -> None:
        self._dimension = dimension

    @property
    def name(self) -> str:
        return f"test/hashing-bow-{self._dimension}"

    @property
    def profile_embedder(self) -> str:
        """Stands in for MiniLM in tests, so the shipped evidence profile applies to it (the
        guard refuses a profile fitted with any other embedder)."""
        return "sentence-transformers/all-MiniLM-L6-v2"

    @property
    def dimension(self) -> int:
        return self._dimension

    def encode(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                if token in _STOPWORDS:
                    continue
                index, sign = _bucket(token, self._dimension)
                out[row, index] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


class TableEmbedder(HashingEmbedder):
    """Given vectors for given texts (normalised, zero-padded to 64 dimensions), the hashing fake
    for every other text (the linker's attribute-kind prototypes, say)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        super().__init__(dimension=64)
        self._table = table

    def encode(self, texts: Sequence[str]) -> Vectors:
        out = super().encode(texts)
        for row, text in enumerate(texts):
            if text in self._table:
                vec = np.zeros(self.dimension, np.float32)
                vec[: len(self._table[text])] = self._table[text]
                out[row] = vec / np.linalg.norm(vec)
        return out


class CountingEmbedder:
    """Wraps an embedder; ``calls`` holds the texts of every ``encode`` call, in order."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def profile_embedder(self) -> str | None:
        return getattr(self.inner, "profile_embedder", None)

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def encode(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return self.inner.encode(texts)

    def reset(self) -> None:
        self.calls.clear()

    @property
    def encoded_texts(self) -> list[str]:
        return [t for call in self.calls for t in call]
