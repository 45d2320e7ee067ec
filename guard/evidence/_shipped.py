"""The linker the guard ships with: MiniLM + the claim-support model + word alignment."""

from __future__ import annotations

from mirage_guard.guard.evidence._embedder import MiniLMEmbedder, shared_minilm
from mirage_guard.guard.evidence._linker import EvidenceLinker
from mirage_guard.guard.evidence._support import ClaimSupport, TokenAligner, shared_support_model


def shipped_support() -> ClaimSupport:
    """Method B (cross-encoder) for the support class, method A (alignment) for the words."""
    return ClaimSupport(shared_support_model(), TokenAligner())


def shipped_linker(embedder: MiniLMEmbedder | None = None) -> EvidenceLinker:
    emb = embedder or shared_minilm()
    return EvidenceLinker(emb, support=shipped_support())
