"""A writer model that does not answer holds a write for MIRAGE_WRITER_ATTEMPTS tries of
MIRAGE_WRITER_TIMEOUT_S each, not a fixed 4 x 60 s (a tester's write waited 248 s on a model
server that never answered; no setting shortened it)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from mirage_guard.adapters import GuardedMemory
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import LLMTimeoutError
from mirage_guard.guard.llm import RetryingLLM, ScriptedLLM
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore
from tests.fakes.servers import SilentServer


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


@pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")  # litellm's, on first use
def test_the_writer_timeout_and_attempts_are_settings(
    silent: SilentServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real litellm, to a loopback server that never answers (no provider)."""
    import litellm

    from tests import conftest as root

    monkeypatch.setattr(litellm, "acompletion", root.REAL_ACOMPLETION)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-a-key")
    settings = GuardSettings(
        data_dir=tmp_path,
        writer_model="openai/any-model",
        writer_api_base=f"http://127.0.0.1:{silent.port}/v1",
        writer_timeout_s=0.5,
        writer_attempts=2,
    )
    memory = GuardedMemory.from_settings(
        settings,
        backend=InMemoryStore(),
        guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
    )
    try:
        with pytest.raises(LLMTimeoutError):
            memory.add([{"role": "user", "content": "I keep bees."}], user_id="alice")
        assert memory.get_all(filters={"user_id": "alice"})["results"] == []
    finally:
        memory.close()
    assert silent.accepted == 2  # two tries, each given up after its timeout


def test_a_writer_slower_than_the_idempotency_lease_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def build(**kw: float) -> None:
        settings = GuardSettings(data_dir=tmp_path, writer_model="openai/any-model", **kw)
        GuardedMemory.from_settings(
            settings,
            backend=InMemoryStore(),
            guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
        ).close()

    with caplog.at_level(logging.WARNING, logger="mirage.memory"):
        build()  # the defaults: 4 x 25 s + back-off = 110 s, under the 120 s lease
        assert not [r for r in caplog.records if "MIRAGE_IDEMPOTENCY_LEASE_S" in r.message]
        build(writer_timeout_s=60.0)
    [warning] = [r for r in caplog.records if "MIRAGE_IDEMPOTENCY_LEASE_S" in r.message]
    assert "250 s" in warning.message


def test_longest_call_counts_every_try_and_each_back_off() -> None:
    retrying = RetryingLLM(ScriptedLLM([], model="m"), attempts=4, jitter_s=1.0, max_s=30.0)
    assert retrying.longest_s(25.0) == 4 * 25.0 + (1 + 1) + (2 + 1) + (4 + 1)
    assert RetryingLLM(ScriptedLLM([], model="m"), attempts=1).longest_s(5.0) == 5.0


def test_an_answer_cut_at_the_token_cap_says_so() -> None:
    """It read as bad JSON ("Unterminated string"), with no hint to raise max_tokens."""
    from pydantic import BaseModel

    from mirage_guard.guard.errors import LLMOutputError
    from mirage_guard.guard.llm import Completion

    class Out(BaseModel):
        claims: list[str]

    cut = Completion(text='{"claims": ["Keeps be', model="m", finish_reason="length")
    with pytest.raises(LLMOutputError, match="cut at the token cap"):
        cut.parse(Out)
    bad = Completion(text='{"claims": ["Keeps be', model="m", finish_reason="stop")
    with pytest.raises(LLMOutputError, match="not JSON") as caught:
        bad.parse(Out)
    assert "token cap" not in str(caught.value)
    assert Completion(text='{"claims": []}', model="m", finish_reason="length").parse(Out)
