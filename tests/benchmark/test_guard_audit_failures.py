"""A guard arm whose self-audit calls fail (the auditor's server down, a wrong model name, a
timeout) fails its units: they had been recorded as decisions (every claim quarantined, "failed
units 0", exit 0) and cached, so the report's guard figures measured the guard failing closed
(found by a new user pointing MIRAGE_AUDITOR_MODEL at a server that was not listening)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mirage_guard.benchmark._guard_arm import GuardAuditFailedError
from mirage_guard.benchmark._records import GuardTagRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard import AuditMode, Guard, Label, SelfAuditor
from mirage_guard.guard.errors import LLMAuthError, LLMUnavailableError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.llm import LLMClient
from tests.benchmark.small_run import FAST, small_config
from tests.calibration.factories import make_profile
from tests.fakes.bench import CallLog, recording_provider
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import labelling_llm, raising_llm

AUDITOR = "mock/auditor"


def _audited_by(llm: LLMClient) -> Callable[[], Guard]:
    return lambda: Guard(
        linker=EvidenceLinker(HashingEmbedder()),
        evidence_profile=make_profile(),
        auditor=SelfAuditor.independent(llm),
        audit_mode=AuditMode.SEPARATE,
        auditor_model=AUDITOR,
    )


def _run(run_dir: Path, personas: list[Persona], guard: Callable[[], Guard]) -> BenchmarkRun:
    return BenchmarkRun(
        small_config(stages=["task", "judge"], guard="on"),
        run_dir,
        provider=recording_provider(CallLog()),
        options=FAST,
        guard_factory=guard,
        personas=personas,
    )


async def test_a_failed_audit_fails_the_guard_unit_and_a_resume_redoes_it(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    down = raising_llm(LLMUnavailableError("connection refused", model=AUDITOR), model=AUDITOR)
    summary = await _run(tmp_path / "run", small_personas, _audited_by(down)).run()
    records = RunDirectory(tmp_path / "run").records(GuardTagRecord)
    assert records
    for record in records:
        assert record.error is not None
        assert record.error.type == GuardAuditFailedError.__name__
        assert record.error.retryable is True
        assert "self-audit failed (LLMUnavailableError)" in record.error.message
        assert record.decisions == []
    assert summary.errors == len(records)
    # the auditor is back: the resume redoes those units (nothing failed was cached)
    working = labelling_llm(Label.GROUNDED, model=AUDITOR)
    await _run(tmp_path / "run", small_personas, _audited_by(working)).run()
    assert working.calls
    done = RunDirectory(tmp_path / "run").records(GuardTagRecord)
    latest = {r.unit: r for r in done}  # the last record of each unit
    assert all(r.error is None and r.decisions for r in latest.values())


async def test_a_refused_key_of_the_auditor_stops_the_run(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    refused = raising_llm(LLMAuthError("401: invalid api key", model=AUDITOR), model=AUDITOR)
    with pytest.raises(LLMAuthError, match="self-audit failed"):
        await _run(tmp_path / "run", small_personas, _audited_by(refused)).run()
