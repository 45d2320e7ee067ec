"""The drop-in and the sidecar build an independent auditor's client from MIRAGE_AUDITOR_MODEL /
MIRAGE_AUDITOR_API_BASE: the self-audit call goes to the auditor's server through the real
litellm, not to the writer's, and an auditor that does not answer fails the write closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirage_guard.adapters import GuardedMemory
from mirage_guard.guard import AuditMode, GuardSettings
from mirage_guard.guard.llm import RetryingLLM, ScriptedLLM
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import CONVERSATION, STATED_TEXT, InMemoryStore, conversation_reply
from tests.fakes.servers import SilentServer


@pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")  # litellm's, on first use
def test_the_auditors_server_is_asked_and_its_silence_stores_no_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import litellm

    from tests import conftest as root

    monkeypatch.setattr(litellm, "acompletion", root.REAL_ACOMPLETION)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-a-key")
    auditor_server = SilentServer()
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
    failed = [
        r for r in caplog.records if "the self-audit by openai/the-auditor failed" in r.msg % r.args
    ]
    assert failed, "an auditor's failure leaves a line in the log, as a writer's does"


def test_an_audit_no_profile_calibrates_is_said_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every write pays for the audit call; without the labeller's profile its labels can only
    make decisions more cautious, and nothing said so until someone read `calibrated=false`."""
    import logging

    from mirage_guard.guard import Label
    from mirage_guard.guard.scoring import ProfileStore
    from mirage_guard.prompts import load_prompt
    from tests.calibration.factories import make_profile
    from tests.fakes.llm import labelling_llm
    from tests.guard.paper import audit_profile

    def start(profile_dir: Path, **over: object) -> None:
        settings = GuardSettings(
            data_dir=tmp_path / "data",
            audit_mode=AuditMode.SEPARATE,
            profile_dir=profile_dir,
            **over,  # type: ignore[arg-type]
        )
        GuardedMemory.from_settings(
            settings,
            writer_llm=labelling_llm(Label.GROUNDED, model="mock/the-writer"),
            backend=InMemoryStore(),
            embedder=HashingEmbedder(),
        ).close()

    empty, fitted, forgot = tmp_path / "empty", tmp_path / "fitted", tmp_path / "forgot"
    for folder in (empty, fitted, forgot):
        ProfileStore(folder).save(make_profile(), folder)
    independent = load_prompt("audit_independent").ref
    ProfileStore(fitted).save(audit_profile("mock/auditor", prompt_version=independent), fitted)
    ProfileStore(forgot).save(audit_profile("mock/auditor"), forgot)  # without --as-auditor
    base = "http://127.0.0.1:9/v1"
    with caplog.at_level(logging.WARNING, logger="mirage.memory"):
        start(empty, auditor_model="mock/auditor", auditor_api_base=base)
        start(empty)  # the writer auditing itself
        start(fitted, auditor_model="mock/auditor")  # calibrated: nothing to say
        start(forgot, auditor_model="mock/auditor")
    said = [r.getMessage() for r in caplog.records if "no calibration profile" in r.getMessage()]
    assert len(said) == 3, said
    assert "the independent auditor 'mock/auditor'" in said[0]
    assert f"--model mock/auditor --as-auditor --api-base {base} --out" in said[0]
    assert "the writer model 'mock/the-writer'" in said[1]
    assert "--as-auditor" not in said[1]
    assert "has profiles for another prompt or mode, which are not used" in said[2]
    assert audit_profile("mock/auditor").profile_id in said[2]


def test_the_writer_as_its_own_auditor_is_said_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    settings = GuardSettings(
        data_dir=tmp_path,
        audit_mode=AuditMode.SEPARATE,
        writer_model="openai/same",
        auditor_model="openai/same",
    )
    with caplog.at_level(logging.WARNING, logger="mirage.memory"):
        GuardedMemory.from_settings(
            settings, backend=InMemoryStore(), embedder=HashingEmbedder()
        ).close()
    assert any("it audits its own memories" in r.getMessage() for r in caplog.records)
