"""`mirage perf history`: one guarded write against a long conversation history.

A memory write in a long-running chat is judged against every earlier user turn. The history's
sentence vectors are cached, so a write must encode only its own candidates: this measures the
latency of a write of ``facts`` candidates against a ``turns``-turn history (the first write pays
for encoding the history; the figure that matters is the warm p50) and counts how many sentences
each warm write sent to the encoder.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import numpy as np

from mirage_guard.calibration import load_examples, packaged
from mirage_guard.guard import Candidate, Guard, Role, Turn
from mirage_guard.guard.evidence import Embedder, Vectors, shared_minilm
from mirage_guard.guard.settings import GuardSettings

HISTORY_SETS = ("longchat_assistant", "longchat_friends", "longchat_mixed")


class _Counting:
    """Counts the sentences an embedder is asked to encode (the linker's cache is above it)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.sentences = 0

    def encode(self, texts: Sequence[str]) -> Vectors:
        self.sentences += len(texts)
        return self.inner.encode(texts)


@dataclass(frozen=True)
class HistoryPerf:
    turns: int
    user_turns: int
    facts: int
    writes: int
    cold_ms: float
    p50_ms: float
    p95_ms: float
    encoded_per_warm_write: float


def long_history(turns: int) -> tuple[list[Turn], list[str]]:
    """The packaged long held-out conversations, one after another, cut at ``turns`` turns."""
    history: list[Turn] = []
    claims: list[str] = []
    for name in HISTORY_SETS:
        examples = load_examples(packaged("heldout") / name)
        seen: set[str] = set()
        for ex in examples:
            claims.append(ex.claim.text)
            if ex.conversation_id not in seen:
                seen.add(ex.conversation_id)
                history.extend(ex.turns)
    if len(history) < turns:
        raise ValueError(f"the packaged long conversations have {len(history)} turns, not {turns}")
    return history[:turns], claims


def measure_history(*, turns: int = 500, facts: int = 5, writes: int = 50) -> HistoryPerf:
    history, claims = long_history(turns)
    embedder = _Counting(shared_minilm())
    guard = Guard.from_settings(GuardSettings(), embedder=embedder)
    latencies: list[float] = []
    encoded: list[int] = []
    try:
        for w in range(writes + 1):
            texts = [claims[(w * facts + i) % len(claims)] for i in range(facts)]
            cands = [Candidate(id=f"w{w}-{i}", text=t) for i, t in enumerate(texts)]
            before = embedder.sentences
            start = time.perf_counter()
            anyio.run(lambda c=cands: guard.atag(history, c))  # type: ignore[misc]
            latencies.append((time.perf_counter() - start) * 1000)
            encoded.append(embedder.sentences - before)
    finally:
        guard.close()
    warm = latencies[1:]
    user_turns = sum(1 for t in history if t.role is Role.USER)
    return HistoryPerf(
        turns=turns,
        user_turns=user_turns,
        facts=facts,
        writes=writes,
        cold_ms=latencies[0],
        p50_ms=statistics.median(warm),
        p95_ms=float(np.percentile(warm, 95)),
        encoded_per_warm_write=statistics.mean(encoded[1:]),
    )
