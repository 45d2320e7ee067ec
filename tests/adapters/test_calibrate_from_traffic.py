"""Calibrating the self-audit on a deployment's own traffic: the decision log keeps each audit
label with the model, prompt and mode it is of; `mirage report label-sample --verdicts-out`
writes them beside the sample; `mirage calibrate fit` fits that model's profile from the
labelled sample. The one way to fit an inline-mode profile (inline labels are of the writer's
own extractions, which no packaged labelled set holds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from mirage_guard.adapters import AsyncGuardedMemory
from mirage_guard.adapters._decision_log import DecisionLog, MemoryScope, WrittenDecision
from mirage_guard.adapters._label_sample import draw_label_sample, sample_verdicts
from mirage_guard.adapters.cli import _calibrate, app
from mirage_guard.calibration import load_verdicts, verdicts_mode
from mirage_guard.guard import (
    AuditMode,
    AuditSource,
    AuditVerdict,
    Candidate,
    Guard,
    GuardSettings,
    Label,
    Provenance,
    Role,
    SelfAuditor,
    Turn,
)
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.extraction import CandidateExtractor
from mirage_guard.guard.llm import FunctionLLM, ScriptedLLM
from mirage_guard.guard.scoring import ProfileMode, ProfileStore
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile
from tests.fakes.decisions import logged_decision
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore, claims_reply

WRITER = "mock/writer"
INLINE_PROMPT = load_prompt("extract_candidates").ref
TURNS = [
    Turn(id="t1", role=Role.USER, content="I live in Porto and work as a nurse."),
    Turn(id="t2", role=Role.USER, content="I swim every weekend."),
]
CANDIDATES = [Candidate(id="c0", text="Lives in Porto"), Candidate(id="c1", text="Has a dog")]

# ten users, each with a conversation of their own (the sample's conversations are keyed by
# their turns): what each says, and the writer's claims with its inline labels and the truth
PEOPLE = [
    ("Porto", "nurse", "swim"), ("Leeds", "baker", "climb"), ("Oslo", "pilot", "ski"),
    ("Lyon", "chef", "cycle"), ("Cork", "teacher", "surf"), ("Riga", "welder", "row"),
    ("Bern", "judge", "hike"), ("Turin", "farmer", "paint"), ("Ghent", "medic", "sing"),
    ("Split", "driver", "dive"),
]  # fmt: skip


def _claims(city: str, job: str, hobby: str) -> list[tuple[str, str | None, str, float, str]]:
    """(text, source turn, the writer's inline label, its confidence, the true label)."""
    return [
        (f"Lives in {city}", "t1", "GROUNDED", 0.95, "GROUNDED"),
        (f"Works as a {job}", "t1", "GROUNDED", 0.9, "GROUNDED"),
        (f"Enjoys being active ({hobby}ing)", "t3", "INFERRED_REASONABLE", 0.7,
         "INFERRED_REASONABLE"),
        (f"Has three children in {city}", None, "FABRICATED", 0.6, "FABRICATED"),
        # the writer vouches for what nobody said: its label is wrong here
        ("Is married", "t1", "GROUNDED", 0.8, "FABRICATED"),
    ]  # fmt: skip


def _messages(city: str, job: str, hobby: str) -> list[dict[str, str]]:
    return [
        {"id": "t1", "role": "user", "content": f"I live in {city} and work as a {job}."},
        {"id": "t2", "role": "assistant", "content": "Nice! What do you do for fun?"},
        {"id": "t3", "role": "user", "content": f"I {hobby} every weekend."},
    ]


def _memory(settings: GuardSettings, log: DecisionLog, llm: Any) -> AsyncGuardedMemory:
    inline = settings.audit_mode is AuditMode.INLINE
    return AsyncGuardedMemory(
        backend=InMemoryStore(),
        guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
        extractor=CandidateExtractor(llm, inline_audit=inline),
        decision_log=log,
    )


@pytest.fixture
def inline_settings(data_dir: Path) -> GuardSettings:
    return GuardSettings(data_dir=data_dir, audit_mode=AuditMode.INLINE, writer_model=WRITER)


@pytest.fixture
def inline_traffic(inline_settings: GuardSettings) -> DecisionLog:
    """Ten users' writes through the drop-in, inline mode, every decision logged."""
    replies = [claims_reply(*(c[:4] for c in _claims(*p))) for p in PEOPLE]
    log = DecisionLog.from_settings(inline_settings)
    memory = _memory(inline_settings, log, ScriptedLLM(replies, model=WRITER))

    async def run() -> None:
        for i, person in enumerate(PEOPLE):
            await memory.add(_messages(*person), user_id=f"user{i}")

    anyio.run(run)
    return log


def test_each_inline_decision_is_logged_with_its_label_and_whose_label_it_is(
    inline_traffic: DecisionLog,
) -> None:
    logged = inline_traffic.all_decisions()
    assert len(logged) == 50
    source = AuditSource(model=WRITER, prompt_version=INLINE_PROMPT, mode="self_audit_inline")
    assert {d.audit.source for d in logged if d.audit} == {source}
    assert all(d.audit is not None for d in logged)
    married = next(d for d in logged if d.candidate_text == "Is married")
    assert married.audit is not None
    assert (married.audit.verdict.label, married.audit.verdict.confidence) == (Label.GROUNDED, 0.8)
    assert married.audit.verdict.candidate_id == married.candidate_id
    # GET /v1/decisions answers with the same rows
    (shown,) = [d for d in inline_traffic.query("default") if d.id == married.id]
    assert shown.audit == married.audit


def test_labelled_inline_traffic_fits_the_writers_inline_profile_and_the_guard_uses_it(
    inline_traffic: DecisionLog,
    inline_settings: GuardSettings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sample_file, verdict_file = tmp_path / "sample.jsonl", tmp_path / "verdicts.jsonl"
    monkeypatch.setenv("MIRAGE_DATABASE_URL", inline_settings.resolved_database_url())
    runner = CliRunner()
    drawn = runner.invoke(
        app,
        ["report", "label-sample", "--n", "50", "--out", str(sample_file),
         "--verdicts-out", str(verdict_file)],
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    assert "wrote 50 self-audit labels of mock/writer (self_audit_inline" in drawn.output
    rows = [json.loads(line) for line in sample_file.read_text().splitlines()]
    # the sample stays blind: the writer's labels are only in the verdicts file
    assert not any("audit" in r or "guard" in r for r in rows)
    assert verdicts_mode(verdict_file) is ProfileMode.SELF_AUDIT_INLINE
    by_claim, model, prompt = load_verdicts(verdict_file)
    assert (model, prompt) == (WRITER, INLINE_PROMPT)
    assert set(by_claim) == {r["claim_id"] for r in rows}

    # a person labels the sample (here: the scenario's truth)
    truth = {c[0]: (c[4], c[1]) for p in PEOPLE for c in _claims(*p)}
    for r in rows:
        label, turn = truth[r["text"]]
        r["label"] = label
        r["source_turn_id"] = turn if label != "FABRICATED" else None
    sample_file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    monkeypatch.setattr(_calibrate, "_linker", lambda: EvidenceLinker(HashingEmbedder()))
    monkeypatch.setattr(_calibrate, "_evidence_profile", make_profile)
    profiles = tmp_path / "profiles"
    fitted = runner.invoke(
        app,
        ["calibrate", "fit", "--verdicts", str(verdict_file), "--data", str(sample_file),
         "--profile-dir", str(profiles)],
    )  # fmt: skip
    assert fitted.exit_code == 0, fitted.output
    assert "5-fold cross-validation over 10 conversations" in " ".join(fitted.output.split())
    (profile,) = [p for p in ProfileStore(profiles).all() if p.mode.uses_audit]
    assert profile.mode is ProfileMode.SELF_AUDIT_INLINE
    assert (profile.writer_model, profile.prompt_version) == (WRITER, INLINE_PROMPT)
    assert profile.metrics["heldout_folds"] == 5.0
    assert profile.metrics["heldout_personas"] == 10.0
    assert "heldout_combined_auroc" in profile.metrics
    assert not any(k.startswith("dev_") for k in profile.metrics)  # no in-sample "dev" figures

    # the inline guard of that writer is calibrated by it, and says nothing is missing
    settings = inline_settings.model_copy(update={"profile_dir": profiles})
    guard = Guard.from_settings(settings, embedder=HashingEmbedder())
    assert guard.audit_profile is not None
    assert guard.audit_profile.profile_id == profile.profile_id
    assert guard.uncalibrated_audit() is None
    inline = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=0.9) for c in
              CANDIDATES]  # fmt: skip
    decisions = guard.tag(TURNS, CANDIDATES, writer_model=WRITER, audit=inline)
    assert {(d.profile_id, d.calibrated) for d in decisions} == {(profile.profile_id, True)}


def test_an_uncalibrated_inline_guard_names_the_commands_that_fit_one(
    inline_settings: GuardSettings,
) -> None:
    said = Guard.from_settings(inline_settings, embedder=HashingEmbedder()).uncalibrated_audit()
    assert said is not None
    assert f"mirage report label-sample --writer-model {WRITER}" in said
    assert "--verdicts-out V.jsonl" in said
    assert "mirage calibrate fit --verdicts V.jsonl --data S.jsonl" in said


async def test_the_guards_own_separate_audit_is_logged_as_the_labellers(
    data_dir: Path,
) -> None:
    def audit(messages: Any, schema: Any) -> str:
        return json.dumps(
            {"verdicts": [{"id": "c0", "label": "GROUNDED", "confidence": 0.9,
                           "quote": "I live in Porto"},
                          {"id": "c1", "label": "FABRICATED", "confidence": 0.7, "quote": None}]}
        )  # fmt: skip

    settings = GuardSettings(data_dir=data_dir, audit_mode=AuditMode.SEPARATE, writer_model=WRITER)
    writer = FunctionLLM(audit, model=WRITER)
    guard = Guard.from_settings(settings, writer_llm=writer, embedder=HashingEmbedder())
    decisions = await guard.atag(TURNS, CANDIDATES, writer_model=WRITER)
    prompt = SelfAuditor(writer).prompt_version
    source = AuditSource(model=WRITER, prompt_version=prompt, mode="self_audit_separate")
    assert [d.audit_source for d in decisions] == [source, source]
    assert decisions[0].audit is not None
    assert decisions[0].audit.quote == "I live in Porto"
    # verdicts a caller passes in separate mode are no labeller's this guard can name
    passed = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=0.9) for c in
              CANDIDATES]  # fmt: skip
    theirs = await guard.atag(TURNS, CANDIDATES, writer_model=WRITER, audit=passed)
    assert [d.audit_source for d in theirs] == [None, None]
    assert all(d.audit is not None for d in theirs)
    # no audit at all
    off = Guard.from_settings(GuardSettings(data_dir=data_dir), embedder=HashingEmbedder())
    assert [d.audit_source for d in await off.atag(TURNS, CANDIDATES)] == [None, None]


def _written(audit: AuditVerdict | None, source: AuditSource | None) -> WrittenDecision:
    d = logged_decision("Lives in Porto", Provenance.STATED, "t1")
    return WrittenDecision(decision=d.model_copy(update={"audit": audit, "audit_source": source}))


def test_the_log_keeps_a_label_only_with_whose_it_is_and_an_old_log_gains_the_table(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'log.db'}"
    log = DecisionLog(url)
    with log.engine.begin() as conn:  # a log made before labels were kept has no such table
        conn.execute(text("DROP TABLE mirage_decision_audits"))
    log.close()
    log = DecisionLog(url)  # opening it creates the table; its older rows are untouched
    verdict = AuditVerdict(candidate_id="c0", label=Label.INFERRED_REASONABLE, confidence=0.6)
    source = AuditSource(model="m", prompt_version="p@1", mode="self_audit_separate")
    log.record(
        tenant="acme",
        scope=MemoryScope(user_id="u"),
        turns=TURNS,
        written=[_written(verdict, source), _written(verdict, None), _written(None, None)],
        request_id="r",
        writer_model="m",
    )
    kept, unnamed, none = sorted(log.all_decisions(), key=lambda d: d.id)
    assert kept.audit is not None
    assert kept.audit.source == source
    assert kept.audit.verdict.label is Label.INFERRED_REASONABLE
    assert kept.audit.verdict.candidate_id == kept.candidate_id
    assert unnamed.audit is None
    assert none.audit is None
    log.close()


def test_label_sample_refuses_verdicts_of_two_labellers_or_none(tmp_path: Path) -> None:
    log = DecisionLog(f"sqlite:///{tmp_path / 'log.db'}")
    verdict = AuditVerdict(candidate_id="c0", label=Label.GROUNDED, confidence=0.9)
    for i, prompt in enumerate(("p@1", "p@2")):
        log.record(
            tenant="acme",
            scope=MemoryScope(user_id=f"u{i}"),
            turns=TURNS,
            written=[_written(verdict, AuditSource(model="m", prompt_version=prompt,
                                                   mode="self_audit_separate"))],
            request_id=f"r{i}",
            writer_model="m",
        )  # fmt: skip
    with pytest.raises(
        InputError,
        match=r"several models, prompts or modes \(m / p@1 / self_audit_separate: 1; m / p@2",
    ):
        sample_verdicts(draw_label_sample(log, n=10))
    log.close()
    plain = _log_without_labels(tmp_path)
    with pytest.raises(InputError, match="none of the 1 sampled decisions"):
        sample_verdicts(draw_label_sample(plain, n=10))
    plain.close()


def _log_without_labels(tmp_path: Path) -> DecisionLog:
    log = DecisionLog(f"sqlite:///{tmp_path / 'plain.db'}")
    log.record(
        tenant="acme",
        scope=MemoryScope(user_id="u"),
        turns=TURNS,
        written=[_written(None, None)],
        request_id="r",
        writer_model="m",
    )
    return log


def test_fit_refuses_a_mode_other_than_the_verdicts_say(tmp_path: Path) -> None:
    from mirage_guard.calibration import save_verdicts

    path = tmp_path / "v.jsonl"
    verdict = AuditVerdict(candidate_id="x", label=Label.GROUNDED, confidence=0.9)
    save_verdicts(path, {"x": verdict}, writer_model="m", prompt_version="p@1",
                  mode=ProfileMode.SELF_AUDIT_INLINE)  # fmt: skip
    result = CliRunner().invoke(
        app,
        ["calibrate", "fit", "--verdicts", str(path), "--profile-dir", str(tmp_path / "p"),
         "--mode", "self_audit_separate"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "labels of self_audit_inline, not self_audit_separate" in result.output
