"""The drop-in and the sidecar build an independent auditor's client from MIRAGE_AUDITOR_MODEL /
MIRAGE_AUDITOR_API_BASE: the self-audit call goes to the auditor's server through the real
litellm, not to the writer's, and an auditor that does not answer fails the write closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirage_guard.adapters import GuardedMemory
from mirage_guard.guard import AuditMode, GuardSettings
from mirage_guard.guard.llm import RetryingLLM, ScriptedLLM
from tests.adapters.test_writer_timeout import _Silent
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import CONVERSATION, STATED_TEXT, InMemoryStore, conversation_reply


@pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")  # litellm's, on first use
def test_the_auditors_server_is_asked_and_its_silence_stores_no_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm

    from tests import conftest as root

    monkeypatch.setattr(litellm, "acompletion", root.REAL_ACOMPLETION)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-a-key")
    auditor_server = _Silent()
    writer = ScriptedLLM([conversation_reply()], model="mock/the-writer")
    try:
        settings = GuardSettings(
            data_dir=tmp_path,
            audit_mode=AuditMode.SEPARATE,
            auditor_model="openai/the-auditor",
            auditor_api_base=f"http://127.0.0.1:{auditor_server.port}/v1",
            audit_timeout_s=0.5,
        )
        store = InMemoryStore()
        memory = GuardedMemory.from_settings(
            settings, writer_llm=writer, backend=store, embedder=HashingEmbedder()
        )
        try:
            guard = memory.inner.guard
            assert guard.auditor is not None
            assert isinstance(guard.auditor.llm, RetryingLLM)  # retried like the writer
            assert guard.auditor.llm.model == "openai/the-auditor"
            out = memory.add(CONVERSATION, user_id="alice")  # the writer extracts three facts
        finally:
            memory.close()
    finally:
        auditor_server.close()
    assert len(writer.calls) == 1  # the extraction only: the writer is not the auditor
    assert auditor_server.accepted >= 1  # the audit went to the auditor's own server
    decisions = {d["text"]: d for d in out["decisions"]}
    assert len(decisions) == 3  # the write went on (MIRAGE_ON_AUDIT_FAILURE=quarantine) ...
    for d in decisions.values():  # ... and failed closed: no fact without its audit
        assert d["provenance"] != "stated", d
        assert d["action"] == "quarantine", d
        assert "self_audit_failed" in {r["code"] for r in d["reasons"]}
    assert STATED_TEXT in decisions  # even the fact the user said outright waits
