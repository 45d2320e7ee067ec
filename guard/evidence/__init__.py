"""Evidence path (no LLM): embedder + linker + features.

Part of the core: imports the domain of :mod:`mirage_guard.guard`, numpy, and
sentence-transformers lazily (the ``embed`` extra) inside :func:`shared_minilm`.
"""

from mirage_guard.guard.evidence._cross import (
    CROSS_FROZEN_PREFIX,
    MAX_PAIR_TOKENS,
    PRECISIONS,
    CrossSupportModel,
    build_cross,
    cross_model_dir,
    encode_pairs,
    keep_layers,
    n_layers,
    resolve_precision,
    shared_cross_model,
    shipped_state,
)
from mirage_guard.guard.evidence._embedder import (
    Embedder,
    MiniLMEmbedder,
    Vectors,
    minilm_model_path,
    shared_minilm,
)
from mirage_guard.guard.evidence._linker import (
    FEATURE_NAMES,
    KINDS,
    PROFILE_FEATURES,
    TOPIC_FEATURES,
    EvidenceLinker,
    evidence_units,
)
from mirage_guard.guard.evidence._namespace import cache_namespace, current_cache_namespace
from mirage_guard.guard.evidence._shipped import shipped_linker, shipped_support
from mirage_guard.guard.evidence._support import (
    SUPPORT_FEATURES,
    WEIGHTS,
    Alignment,
    ClaimSupport,
    SupportClass,
    TokenAligner,
    exact_word,
    verify_support_dir,
)
from mirage_guard.guard.evidence._text import (
    HEDGES,
    RELATION_KINDS,
    changed_values,
    content_stems,
    denied_stems,
    ended_stems,
    has_negation,
    retracted_stems,
    sentences,
    value_kind,
)

__all__ = [
    "CROSS_FROZEN_PREFIX",
    "FEATURE_NAMES",
    "HEDGES",
    "KINDS",
    "MAX_PAIR_TOKENS",
    "PRECISIONS",
    "PROFILE_FEATURES",
    "RELATION_KINDS",
    "SUPPORT_FEATURES",
    "TOPIC_FEATURES",
    "WEIGHTS",
    "Alignment",
    "ClaimSupport",
    "CrossSupportModel",
    "Embedder",
    "EvidenceLinker",
    "MiniLMEmbedder",
    "SupportClass",
    "TokenAligner",
    "Vectors",
    "build_cross",
    "cache_namespace",
    "changed_values",
    "content_stems",
    "cross_model_dir",
    "current_cache_namespace",
    "denied_stems",
    "encode_pairs",
    "ended_stems",
    "evidence_units",
    "exact_word",
    "has_negation",
    "keep_layers",
    "minilm_model_path",
    "n_layers",
    "resolve_precision",
    "retracted_stems",
    "sentences",
    "shared_cross_model",
    "shared_minilm",
    "shipped_linker",
    "shipped_state",
    "shipped_support",
    "value_kind",
    "verify_support_dir",
]
