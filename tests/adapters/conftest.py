"""Fast guarded-memory wiring: real Guard (shipped evidence profile, hashing embedder), fakes."""

from __future__ import annotations

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
