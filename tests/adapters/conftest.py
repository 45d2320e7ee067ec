"""Fast guarded-memory wiring: real Guard (shipped evidence profile, hashing embedder), fakes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.adapters import AsyncGuardedMemory, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.extraction import CandidateExtractor
from mirage_guard.guard.llm import LLMClient, ScriptedLLM
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore, conversation_reply


@pytest.fixture
def settings(data_dir: Path) -> GuardSettings:
    return GuardSettings(data_dir=data_dir)


@pytest.fixture
def decision_log(settings: GuardSettings) -> Iterator[DecisionLog]:
    log = DecisionLog.from_settings(settings)
    yield log
    log.close()


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def build_memory(
    settings: GuardSettings, decision_log: DecisionLog, store: InMemoryStore
) -> Callable[..., AsyncGuardedMemory]:
    def build(
        llm: LLMClient | None = None,
        *,
        backend: MemoryBackend | None = None,
        settings_: GuardSettings | None = None,
        **kwargs: Any,
    ) -> AsyncGuardedMemory:
        s = settings_ or settings
        writer = llm or ScriptedLLM([conversation_reply()], model="mock/writer")
        return AsyncGuardedMemory(
            backend=backend or store,
            guard=Guard.from_settings(s, embedder=HashingEmbedder()),
            extractor=CandidateExtractor(writer),
            decision_log=decision_log,
            metrics=GuardMetrics(),
            **kwargs,
        )

    return build


# -- a label-sample file, as `mirage report label-sample` writes it (the labeller's tests)

TURNS = [
    {"id": "t1", "role": "user", "content": "I went climbing last weekend."},
    {"id": "t2", "role": "assistant", "content": "Sounds fun! Where?"},
    {"id": "t3", "role": "user", "content": "At the gym near my flat in Leeds."},
]


def _row(claim_id: str, text: str, label: str | None = None) -> dict[str, Any]:
    """A line as `mirage report label-sample` writes it (with the fields it adds)."""
    return {"claim_id": claim_id, "text": text, "label": label, "source_turn_id": None,
            "turns": TURNS, "tenant": "acme", "user_id": "alice", "writer_model": "m",
            "decided_at": "2026-12-06T10:00:00+00:00"}  # fmt: skip


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "to_label.jsonl",
        [_row("log-1", "Went climbing last weekend"), _row("log-2", "Lives in Leeds"),
         _row("log-3", "Has two younger sisters")],
    )  # fmt: skip
