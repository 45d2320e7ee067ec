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
from tests.benchmark.small_run import FAST, SUBJECTS, small_config
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


async def test_the_guard_arms_audit_calls_are_counted_in_the_runs_cost(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """They went through the guard's own client and were in no count: the report's guard line
    said so. Now each unit's record carries them, in a Cost row of their own (here the auditor
    is one of the subject models: its audit calls are still not in that model's row)."""
    from mirage_guard.benchmark import SemanticMatcher
    from mirage_guard.benchmark._analysis import analyse
    from mirage_guard.benchmark._guard_arm import MeteredLLM
    from mirage_guard.benchmark._records import GUARD_AUDIT
    from mirage_guard.benchmark._report import _sections

    subject = SUBJECTS[0]
    auditor = labelling_llm(Label.GROUNDED, model=subject)

    def guard() -> Guard:
        return Guard(
            linker=EvidenceLinker(HashingEmbedder()),
            evidence_profile=make_profile(),
            auditor=SelfAuditor.independent(MeteredLLM(auditor)),
            audit_mode=AuditMode.SEPARATE,
            auditor_model=subject,
        )

    await _run(tmp_path / "run", small_personas, guard).run()
    records = RunDirectory(tmp_path / "run").records(GuardTagRecord)
    assert records
    audits = [c for r in records for c in r.calls]
    assert {(c.model, c.role, c.cached) for c in audits} == {(subject, GUARD_AUDIT, False)}
    assert len(audits) == len(auditor.calls)  # one per audit call, none lost or doubled

    analysis = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    assert analysis.guard_audit_accounting.calls == len(audits)
    assert analysis.guard_audit_accounting.prompt_tokens == sum(c.prompt_tokens for c in audits)
    # in the run's total, in no model's row: every call of this run is a subject's, the
    # judge's or an audit
    rows = sum(acc.calls for acc in analysis.accounting_by_model.values())
    assert rows + len(audits) == analysis.accounting.calls
    sections = {title: (note, rows) for title, note, _, rows in _sections(analysis, tmp_path)}
    (row,) = [r for r in sections["Cost"][1] if r[0] == "guard arm's audit"]
    assert row[1:3] == [str(len(audits)), "0"]  # calls, of which cached
    said = f"its {len(audits)} call(s) are the Cost table's \"guard arm's audit\" row"
    assert said in sections["Guard arm data"][0]


async def test_a_cached_guard_decision_counts_its_audit_call_as_cached(tmp_path: Path) -> None:
    from mirage_guard.benchmark._cache import DiskCache
    from mirage_guard.benchmark._guard_arm import CachedTagger, MeteredLLM, guard_calls
    from mirage_guard.guard import Candidate, Role, Turn

    auditor = labelling_llm(Label.GROUNDED, model=AUDITOR)
    turns = [Turn(id="t1", role=Role.USER, content="I live in Porto.")]
    cands = [Candidate(id="c0", text="Lives in Porto")]
    tagger = CachedTagger(_audited_by(MeteredLLM(auditor))(), DiskCache(tmp_path / "cache"))
    with guard_calls() as fresh:
        await tagger.atag(turns, cands, writer_model="mock/subject")
    with guard_calls() as again:
        await tagger.atag(turns, cands, writer_model="mock/subject")
    assert len(auditor.calls) == 1
    assert [(c.cached, c.role) for c in fresh] == [(False, "guard_audit")]
    assert [(c.cached, c.role) for c in again] == [(True, "guard_audit")]
    tagger.close()


async def test_a_guard_unit_that_fails_after_its_audit_answered_keeps_the_call(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """An auditor that answers what cannot be read: the call is paid, the guard fails closed and
    the unit fails; the failed record had kept no call, so the run counted none."""
    from mirage_guard.benchmark._guard_arm import MeteredLLM
    from mirage_guard.guard.llm import FunctionLLM

    garbled = FunctionLLM(lambda messages, schema: "sorry, not JSON", model=AUDITOR)
    summary = await _run(tmp_path / "run", small_personas, _audited_by(MeteredLLM(garbled))).run()
    records = RunDirectory(tmp_path / "run").records(GuardTagRecord)
    assert records
    assert all(r.error is not None for r in records)
    kept = [c for r in records for c in r.calls]
    assert len(kept) == len(garbled.calls) > 0
    assert {c.role for c in kept} == {"guard_audit"}
    assert summary.accounting.calls >= len(kept)
