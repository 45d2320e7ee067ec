"""A write against a long history encodes only its own candidates (the history is cached)."""

from __future__ import annotations

from mirage_guard.adapters._perf_history import long_history
from mirage_guard.guard import Candidate, Role
from mirage_guard.guard.evidence import EvidenceLinker
from tests.fakes.embedder import CountingEmbedder, HashingEmbedder


def test_a_500_turn_history_is_encoded_once_then_only_candidates_are() -> None:
    history, claims = long_history(500)
    assert len(history) == 500
    assert {t.role for t in history} == {Role.USER, Role.ASSISTANT}
    counting = CountingEmbedder(HashingEmbedder())
    linker = EvidenceLinker(counting)
    counting.reset()  # the attribute-kind prototypes are encoded once at start
    first = [Candidate(id=f"a{i}", text=t) for i, t in enumerate(claims[:5])]
    linker.link(history, first)
    cold = len(counting.encoded_texts)
    assert cold > 250  # every user sentence of the history, once
    second = [Candidate(id=f"b{i}", text=t) for i, t in enumerate(claims[5:10])]
    links = linker.link(history, second)
    assert len(counting.encoded_texts) - cold == 5
    user_ids = {t.id for t in history if t.role is Role.USER}
    assert all(link.turn_id in user_ids for link in links if link.turn_id is not None)
