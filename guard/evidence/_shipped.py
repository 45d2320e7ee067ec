"""The linker the guard ships with: MiniLM + the claim-support cross-encoder + word alignment."""

from __future__ import annotations

from pathlib import Path

from mirage_guard.guard.evidence._cross import shared_cross_model
from mirage_guard.guard.evidence._embedder import MiniLMEmbedder, shared_minilm
from mirage_guard.guard.evidence._linker import EvidenceLinker
from mirage_guard.guard.evidence._support import ClaimSupport, TokenAligner


def shipped_support(precision: str = "fp32", support_dir: Path | None = None) -> ClaimSupport:
    """Method C (cross-encoder) for the support class, method A (alignment) for the words;
    ``precision`` of the cross-encoder as :class:`~._cross.CrossSupportModel`; ``support_dir``:
    a cross-encoder folder of ``mirage calibrate train-support`` instead of the shipped one."""
    return ClaimSupport(shared_cross_model(precision, support_dir), TokenAligner())


def shipped_linker(
    embedder: MiniLMEmbedder | None = None, *, support_dir: Path | None = None
) -> EvidenceLinker:
    emb = embedder or shared_minilm()
    return EvidenceLinker(emb, support=shipped_support(support_dir=support_dir))
