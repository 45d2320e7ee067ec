"""Evidence path (no LLM): embedder + linker + features."""

from mirage_guard.guard.evidence._embedder import (
    Embedder,
    MiniLMEmbedder,
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
    "minilm_model_path",
    "shared_minilm",
]
