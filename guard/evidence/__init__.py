"""Evidence path (no LLM): embedder + linker + features.

Part of the core: imports the domain of :mod:`mirage_guard.guard`, numpy, and
sentence-transformers lazily (the ``embed`` extra) inside :func:`shared_minilm`.
"""

from mirage_guard.guard.evidence._embedder import (
    Embedder,
    MiniLMEmbedder,
    Vectors,
    minilm_model_path,
    shared_minilm,
)
from mirage_guard.guard.evidence._linker import FEATURE_NAMES, KINDS, EvidenceLinker

__all__ = [
    "FEATURE_NAMES",
    "KINDS",
    "Embedder",
    "EvidenceLinker",
    "MiniLMEmbedder",
    "Vectors",
    "minilm_model_path",
    "shared_minilm",
]
