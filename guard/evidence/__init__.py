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
from mirage_guard.guard.evidence._namespace import cache_namespace, current_cache_namespace
from mirage_guard.guard.evidence._shipped import shipped_linker, shipped_support
from mirage_guard.guard.evidence._support import (
    SUPPORT_FEATURES,
    WEIGHTS,
    Alignment,
    ClaimSupport,
    SupportClass,
    SupportModel,
    TokenAligner,
    build_head,
    exact_word,
    pack_pairs,
    premise_tokens,
    save_support_dir,
    shared_support_model,
    support_model_dir,
    verify_support_dir,
)
from mirage_guard.guard.evidence._text import sentences

__all__ = [
    "FEATURE_NAMES",
    "KINDS",
    "SUPPORT_FEATURES",
    "WEIGHTS",
    "Alignment",
    "ClaimSupport",
    "Embedder",
    "EvidenceLinker",
    "MiniLMEmbedder",
    "SupportClass",
    "SupportModel",
    "TokenAligner",
    "Vectors",
    "build_head",
    "cache_namespace",
    "current_cache_namespace",
    "exact_word",
    "minilm_model_path",
    "pack_pairs",
    "premise_tokens",
    "save_support_dir",
    "sentences",
    "shared_minilm",
    "shared_support_model",
    "shipped_linker",
    "shipped_support",
    "support_model_dir",
    "verify_support_dir",
]
