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
from mirage_guard.adapters._decision_log import (
    DecisionLog,
    DecisionQuery,
    MemoryScope,
    WrittenDecision,
)
from mirage_guard.adapters._label_sample import draw_label_sample, sample_verdicts
from mirage_guard.adapters._pollution_report import open_decision_log
from mirage_guard.adapters.cli import _calibrate, app
from mirage_guard.calibration import load_verdicts, verdict_turns, verdicts_mode
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

# ten users, each writing twice (the second write's turns follow the first's in the user's
# conversation): what each says, and the writer's claims with its inline labels and the truth
PEOPLE = [
    ("Porto", "nurse", "swim", "cat"), ("Leeds", "baker", "climb", "dog"),
    ("Oslo", "pilot", "ski", "parrot"), ("Lyon", "chef", "cycle", "rabbit"),
    ("Cork", "teacher", "surf", "hamster"), ("Riga", "welder", "row", "tortoise"),
    ("Bern", "judge", "hike", "goat"), ("Turin", "farmer", "paint", "horse"),
    ("Ghent", "medic", "sing", "ferret"), ("Split", "driver", "dive", "gecko"),
]  # fmt: skip
Claim = tuple[str, str | None, str, float, str]


def _first(city: str, job: str, hobby: str, pet: str) -> list[Claim]:
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


def _second(city: str, job: str, hobby: str, pet: str) -> list[Claim]:
    return [
        (f"Has a {pet}", "t4", "GROUNDED", 0.9, "GROUNDED"),
        (f"Likes animals, {pet}s above all", "t4", "INFERRED_REASONABLE", 0.7,
         "INFERRED_REASONABLE"),
        ("Works from home", None, "FABRICATED", 0.6, "FABRICATED"),
    ]  # fmt: skip


def _messages(city: str, job: str, hobby: str, pet: str) -> list[dict[str, str]]:
    return [
        {"id": "t1", "role": "user", "content": f"I live in {city} and work as a {job}."},
        {"id": "t2", "role": "assistant", "content": "Nice! What do you do for fun?"},
        {"id": "t3", "role": "user", "content": f"I {hobby} every weekend."},
    ]


def _later(city: str, job: str, hobby: str, pet: str) -> list[dict[str, str]]:
    return [
        {"id": "t4", "role": "user", "content": f"Last month I adopted a {pet}."},
        {"id": "t5", "role": "assistant", "content": "How lovely!"},
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
    """Ten users' two writes each through the drop-in, inline mode, every decision logged."""
    replies = [
        claims_reply(*(c[:4] for c in claims(*p))) for p in PEOPLE for claims in (_first, _second)
    ]
    log = DecisionLog.from_settings(inline_settings)
    memory = _memory(inline_settings, log, ScriptedLLM(replies, model=WRITER))

    async def run() -> None:
        for i, person in enumerate(PEOPLE):
            await memory.add(_messages(*person), user_id=f"user{i}")
            await memory.add(_later(*person), user_id=f"user{i}")

    anyio.run(run)
    return log


def test_each_inline_decision_is_logged_with_its_label_and_whose_label_it_is(
    inline_traffic: DecisionLog,
) -> None:
    ids = inline_traffic.decision_ids()
    logged = inline_traffic.decisions(ids, audits=True)
    assert len(logged) == 80
    source = AuditSource(model=WRITER, prompt_version=INLINE_PROMPT, mode="self_audit_inline")
    assert {d.audit.source for d in logged if d.audit} == {source}
    assert all(d.audit is not None for d in logged)
    married = next(d for d in logged if d.candidate_text == "Is married")
    assert married.audit is not None
    assert (married.audit.verdict.label, married.audit.verdict.confidence) == (Label.GROUNDED, 0.8)
    assert married.audit.verdict.candidate_id == married.candidate_id
    assert married.audit.turn_ids == ["t1", "t2", "t3"]
    pet = next(d for d in logged if d.candidate_text == "Has a cat")
    assert pet.audit is not None
    assert pet.audit.turn_ids == ["t4", "t5"]  # its write's turns, not the conversation's
    # GET /v1/decisions answers with the same labels; the reports' reads leave them out
    (shown,) = [d for d in inline_traffic.query("default", DecisionQuery(limit=1000))
                if d.id == married.id]  # fmt: skip
    assert shown.audit == married.audit
    assert all(d.audit is None for d in inline_traffic.all_decisions())


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
        ["report", "label-sample", "--n", "80", "--out", str(sample_file),
         "--verdicts-out", str(verdict_file)],
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    assert "wrote 80 self-audit labels of mock/writer (self_audit_inline" in drawn.output
    rows = [json.loads(line) for line in sample_file.read_text().splitlines()]
    # the sample stays blind: the writer's labels are only in the verdicts file
    assert not any("audit" in r or "guard" in r for r in rows)
    assert verdicts_mode(verdict_file) is ProfileMode.SELF_AUDIT_INLINE
    by_claim, model, prompt = load_verdicts(verdict_file)
    assert (model, prompt) == (WRITER, INLINE_PROMPT)
    assert set(by_claim) == {r["claim_id"] for r in rows}
    # each label with its write's turns; the labeller sees the conversation as it stood
    later = {r["claim_id"] for r in rows if r["text"].startswith("Has a ")}
    assert {verdict_turns(verdict_file)[c] for c in later} == {("t4", "t5")}
    assert {len(r["turns"]) for r in rows if r["claim_id"] in later} == {5}
    assert len({r["group_id"] for r in rows}) == 10  # one per user, both writes

    # a person labels the sample (here: the scenario's truth)
    truth = {c[0]: (c[4], c[1]) for p in PEOPLE for f in (_first, _second) for c in f(*p)}
    for r in rows:
        label, turn = truth[r["text"]]
        r["label"] = label
        r["source_turn_id"] = turn if label != "FABRICATED" else None
        if r["text"] == "Has a goat":  # the labeller cites the earlier write's turn
            r["source_turn_id"] = "t1"
    sample_file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    monkeypatch.setattr(_calibrate, "_linker", lambda: EvidenceLinker(HashingEmbedder()))
    monkeypatch.setattr(_calibrate, "_evidence_profile", lambda *_: make_profile())
    profiles = tmp_path / "profiles"
    fitted = runner.invoke(
        app,
        ["calibrate", "fit", "--verdicts", str(verdict_file), "--data", str(sample_file),
         "--profile-dir", str(profiles)],
    )  # fmt: skip
    assert fitted.exit_code == 0, fitted.output
    said = " ".join(fitted.output.split())
    # held out by user: both writes of a user (20 conversations) in one fold
    assert "5-fold cross-validation over 10 groups (users, or conversations)" in said
    assert "warning" not in said
    assert "1 stated or inferred claim(s) cite a turn outside the write they were" in said
    (profile,) = [p for p in ProfileStore(profiles).all() if p.mode.uses_audit]
    assert profile.mode is ProfileMode.SELF_AUDIT_INLINE
    assert (profile.writer_model, profile.prompt_version) == (WRITER, INLINE_PROMPT)
    assert profile.metrics["heldout_folds"] == 5.0
    assert profile.metrics["heldout_personas"] == 10.0
    assert "heldout_combined_auroc" in profile.metrics
    assert not any(k.startswith("dev_") for k in profile.metrics)  # no in-sample "dev" figures
    # and the guard itself, each user's claims decided with the profile of the other folds
    assert "the guard on each of 5 folds, with the audit profile fitted on the others (80 " in said
    assert "guard eval on sample.jsonl, held out (n=80" in said
    assert profile.metrics["heldout_guard_n"] == 80.0
    # ... which the quote checks also decide: these labels carry no quote, so the guard trusts
    # them less than the profile's own model does (its cross-validated accuracy is 1.0 here)
    assert "audit_quote_missing" in said
    assert profile.metrics["heldout_combined_accuracy"] == 1.0
    assert profile.metrics["heldout_guard_three_way"] == 0.375  # the README quotes it
    listed = runner.invoke(app, ["calibrate", "list", "--profile-dir", str(profiles)])
    assert listed.exit_code == 0, listed.output
    shown = _calibrate.held_out_figures(profile.metrics)
    assert shown == (
        f"{profile.metrics['heldout_guard_auroc']:.3f} / "
        f"{profile.metrics['heldout_guard_three_way']:.3f} (cross-validated, the guard)"
    )
    auroc, three_way = shown.split(" (")[0].split(" / ")
    assert auroc in listed.output
    assert three_way in listed.output

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
    kept, unnamed, none = log.decisions(log.decision_ids(), audits=True)
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
        sample_verdicts(draw_label_sample(log, n=10, with_audits=True))
    log.close()
    plain = _log_without_labels(tmp_path)
    with pytest.raises(InputError, match="none of the 1 sampled decisions"):
        sample_verdicts(draw_label_sample(plain, n=10))
    plain.close()


def _log_without_labels(tmp_path: Path, name: str = "plain.db") -> DecisionLog:
    """A log of one decision made without an audit label."""
    log = DecisionLog(f"sqlite:///{tmp_path / name}")
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


def _older_log(tmp_path: Path) -> Path:
    """A log as an earlier version left it: decisions, no audit labels' table."""
    log = _log_without_labels(tmp_path, "old.db")
    with log.engine.begin() as conn:
        conn.execute(text("DROP TABLE mirage_decision_audits"))
    log.close()
    return tmp_path / "old.db"


def test_an_older_log_opened_read_only_is_read_without_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A reading tool (report, label-sample, doctor) opens a log it may not write; a writer that
    cannot add the labels' table (a read-only file, a role without CREATE) still starts."""
    monkeypatch.chdir(tmp_path)
    read_only = f"sqlite:///file:{_older_log(tmp_path)}?mode=ro&uri=true"
    reader = open_decision_log(read_only)
    assert not reader.keeps_audits
    (d,) = reader.all_decisions()
    assert d.audit is None
    assert len(draw_label_sample(reader, n=5).rows) == 1
    sample = draw_label_sample(reader, n=5, with_audits=True)
    assert (sample.rows, sample.without_audit) == ([], 1)
    reader.close()
    with caplog.at_level("WARNING", logger="mirage.decisions"):
        writer = DecisionLog(read_only)
    assert not writer.keeps_audits
    assert "decisions are logged without their self-audit labels" in caplog.text
    writer.close()


def _audit_answer(messages: Any, schema: Any) -> str:
    return json.dumps(
        {"verdicts": [{"id": "c0", "label": "GROUNDED", "confidence": 0.9, "quote": None},
                      {"id": "c1", "label": "FABRICATED", "confidence": 0.7, "quote": None}]}
    )  # fmt: skip


async def test_a_self_audit_is_the_called_models_and_only_of_its_own_claims(
    data_dir: Path,
) -> None:
    """The writer audits itself: a write that names another writer gets the configured
    writer's labels under the self-audit prompt ("you wrote"), untrue of that writer's claims,
    so they are kept as nobody's; an independent auditor's labels are the auditor's, with its
    own prompt, whoever wrote the claims."""
    settings = GuardSettings(data_dir=data_dir, audit_mode=AuditMode.SEPARATE, writer_model=WRITER)
    writer = FunctionLLM(_audit_answer, model=WRITER)
    guard = Guard.from_settings(settings, writer_llm=writer, embedder=HashingEmbedder())
    other = await guard.atag(TURNS, CANDIDATES, writer_model="agent/other")
    assert all(d.audit is not None for d in other)
    assert [d.audit_source for d in other] == [None, None]
    own = await guard.atag(TURNS, CANDIDATES)  # no writer named: the configured one's claims
    assert {d.audit_source.model for d in own if d.audit_source} == {WRITER}

    auditor = FunctionLLM(_audit_answer, model="mock/auditor")
    independent = Guard.from_settings(
        settings, writer_llm=writer, auditor_llm=auditor, embedder=HashingEmbedder()
    )
    labelled = await independent.atag(TURNS, CANDIDATES, writer_model="agent/other")
    prompt = SelfAuditor.independent(auditor).prompt_version
    assert [d.audit_source for d in labelled] == [
        AuditSource(model="mock/auditor", prompt_version=prompt, mode="self_audit_separate")
    ] * 2


async def test_inline_labels_are_the_writers_only_with_the_prompt_they_came_from(
    inline_settings: GuardSettings,
) -> None:
    guard = Guard.from_settings(inline_settings, embedder=HashingEmbedder())
    verdicts = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=0.9)
                for c in CANDIDATES]  # fmt: skip
    # a caller's own verdicts (remember(audit=...), /v1/guard/tag): no prompt vouches for them
    passed = await guard.atag(TURNS, CANDIDATES, writer_model=WRITER, audit=verdicts)
    assert [d.audit_source for d in passed] == [None, None]
    extracted = await guard.atag(
        TURNS, CANDIDATES, writer_model=WRITER, audit=verdicts, audit_prompt=INLINE_PROMPT
    )
    source = AuditSource(model=WRITER, prompt_version=INLINE_PROMPT, mode="self_audit_inline")
    assert [d.audit_source for d in extracted] == [source, source]
    # a claim in a language the profile does not read is decided without the profile: its
    # label is kept as no one's
    french = [
        Turn(
            id="t1",
            role=Role.USER,
            content="J'habite à Porto et je travaille comme infirmière depuis dix ans.",
        )
    ]
    (fr,) = await guard.atag(
        french, [Candidate(id="c0", text="Habite à Porto depuis dix ans")], writer_model=WRITER,
        audit=verdicts[:1], audit_prompt=INLINE_PROMPT,
    )  # fmt: skip
    assert "unsupported_language" in {r.code.value for r in fr.reasons}
    assert fr.audit_source is None


async def test_an_edits_label_is_kept_as_no_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit's text is the tenant's, not the writer's claim: its label fits no profile."""
    from mirage_guard.adapters._edit import guarded_edit

    log = DecisionLog(f"sqlite:///{tmp_path / 'log.db'}")
    guard = Guard.from_settings(GuardSettings(data_dir=tmp_path), embedder=HashingEmbedder())
    source = AuditSource(model=WRITER, prompt_version="self_audit@x", mode="self_audit_separate")
    verdict = AuditVerdict(candidate_id="c0", label=Label.GROUNDED, confidence=0.9)

    async def tagged(turns: Any, candidates: Any, **_: Any) -> list[Any]:
        d = logged_decision(candidates[0].text, Provenance.GENERATED, None)
        return [d.model_copy(update={"audit": verdict, "audit_source": source})]

    monkeypatch.setattr(guard, "atag", tagged)
    store = InMemoryStore()
    (item,) = await store.add([{"role": "user", "content": "Lives in Porto"}],
                              scope=MemoryScope(user_id="u"))  # fmt: skip
    await guarded_edit(item=item, text="Lives in Lisbon", caller_metadata=None, backend=store,
                       guard=guard, decision_log=log, tenant="default")  # fmt: skip
    (logged,) = log.decisions(log.decision_ids(), audits=True)
    assert logged.audit is None
    log.close()
    guard.close()


def _three_users(tmp_path: Path, prompt_version: str = INLINE_PROMPT) -> list[str]:
    """Three users' labelled claims and inline labels, every over-inference of one of them:
    the `calibrate fit` arguments that read them."""
    from mirage_guard.calibration import save_verdicts

    rows, verdicts = [], {}
    for i, (city, wrong) in enumerate([("Porto", False), ("Leeds", False), ("Oslo", True)]):
        turns = [{"id": "t1", "role": "user", "content": f"I live in {city}."}]
        for j, (text_, label) in enumerate(
            [(f"Lives in {city}", "GROUNDED"), (f"Likes {city}", "INFERRED_REASONABLE")]
            + ([("Has three children", "FABRICATED"), ("Is married", "FABRICATED")] if wrong
               else [])
        ):  # fmt: skip
            cid = f"log-{i}-{j}"
            source = None if label == "FABRICATED" else "t1"
            rows.append({"claim_id": cid, "text": text_, "label": label, "turns": turns,
                         "source_turn_id": source, "group_id": f"acme/u{i}"})  # fmt: skip
            verdicts[cid] = AuditVerdict(candidate_id=cid, label=Label.GROUNDED, confidence=0.8)
    data, vfile = tmp_path / "s.jsonl", tmp_path / "v.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    save_verdicts(vfile, verdicts, writer_model=WRITER, prompt_version=prompt_version,
                  mode=ProfileMode.SELF_AUDIT_INLINE)  # fmt: skip
    return ["calibrate", "fit", "--verdicts", str(vfile), "--data", str(data),
            "--profile-dir", str(tmp_path / "p")]  # fmt: skip


def test_fit_warns_when_the_held_out_figures_measure_little(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three users, every over-inference of one of them: a test fold of one class has no AUROC,
    and the fit says its held-out figures measure too little."""
    monkeypatch.setattr(_calibrate, "_linker", lambda: EvidenceLinker(HashingEmbedder()))
    monkeypatch.setattr(_calibrate, "_evidence_profile", lambda *_: make_profile())
    result = CliRunner().invoke(app, _three_users(tmp_path))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "3-fold cross-validation over 3 groups" in said
    assert "warning: the held-out combined figures scored" in said
    assert "too few groups or over-inferences to measure this profile" in said


def test_a_fit_no_guard_of_this_version_would_use_is_saved_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inline labels of an older extraction prompt: the fit stands and is saved, and the guard's
    figures, which no guard of this version can give with it, are said to be missing (the fit
    had crashed after fitting, and the profile was lost)."""
    monkeypatch.setattr(_calibrate, "_linker", lambda: EvidenceLinker(HashingEmbedder()))
    monkeypatch.setattr(_calibrate, "_evidence_profile", lambda *_: make_profile())
    old = "extract_candidates@000000000000"
    result = CliRunner().invoke(app, _three_users(tmp_path, old))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "warning: the figures on claims the profile was not fitted on could not all be" in said
    assert "(ProfileMismatchError:" in said
    assert "the profile is saved with those that were" in said
    (profile,) = [p for p in ProfileStore(tmp_path / "p").all() if p.mode.uses_audit]
    assert profile.prompt_version == old
    assert "heldout_combined_n_scored" in profile.metrics
    assert not any(k.startswith("heldout_guard_") for k in profile.metrics)


def test_the_guard_of_the_held_out_figures_is_the_deployments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evidence profile of the profile directory (one fitted for another claim-support
    model there had made the fit crash against the shipped one), and the environment's policy
    and request limits."""
    evidence = make_profile().model_copy(update={"support_model": "b" * 64})
    profiles = tmp_path / "p"
    ProfileStore(profiles).save(evidence)
    assert _calibrate._evidence_profile(profiles).support_model == "b" * 64
    monkeypatch.setenv("MIRAGE_STATED_MIN", "0.9")
    monkeypatch.setenv("MIRAGE_MAX_TURN_CHARS", "1234")
    settings = GuardSettings.from_env()
    audit = make_profile(ProfileMode.SELF_AUDIT_SEPARATE, writer_model=WRITER,
                         prompt_version="self_audit@x").model_copy(
        update={"support_model": "b" * 64})  # fmt: skip

    class Linker(EvidenceLinker):
        support_sha256 = "b" * 64

    guard = _calibrate._audit_guard(Linker(HashingEmbedder()), evidence, audit, settings)
    try:
        assert guard.policy.stated_min == 0.9
        assert guard.limits.max_turn_chars == 1234
        assert guard.audit_mode is AuditMode.SEPARATE
    finally:
        guard.close()


def test_the_fit_says_when_the_guards_figures_are_partly_in_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped evidence profile was fitted on the packaged claims' train split: figures of
    the guard on those claims are not held out, and the fit says so."""
    from mirage_guard.calibration import file_sha256, load_examples

    args = _three_users(tmp_path)
    data = Path(args[args.index("--data") + 1])
    examples = load_examples(data)
    fitted_on = make_profile().fitted_on.model_copy(
        update={"sha256": file_sha256(data), "split": "all", "path": data.name}
    )
    evidence = make_profile().model_copy(update={"fitted_on": fitted_on})
    _calibrate._say_in_sample(evidence, data, examples)
    said = " ".join(capsys.readouterr().out.split())
    assert "was fitted on the all split of s.jsonl, which holds 8 of the 8 claims" in said
    assert "partly in-sample" in said
    other = evidence.model_copy(
        update={"fitted_on": fitted_on.model_copy(update={"sha256": "0" * 64})}
    )
    _calibrate._say_in_sample(other, data, examples)
    assert capsys.readouterr().out == ""


def test_the_fit_reads_a_logged_label_on_its_writes_turns_only() -> None:
    """The sample shows the labeller the conversation as it stood; the guard decided on the
    write's turns alone, and so does the fit of its label."""
    from mirage_guard.calibration import Example, LabelledClaim, conversation_key

    turns = tuple(Turn.model_validate(m) for m in _messages(*PEOPLE[0]) + _later(*PEOPLE[0]))
    claim = LabelledClaim(claim_id="log-9", text="Has a cat", label="GROUNDED",
                          source_turn_id="t4", turns=list(turns))  # fmt: skip
    example = Example(claim=claim, conversation_id=conversation_key(turns), turns=turns)
    on_write = _calibrate._on_write_turns(example, ("t4", "t5"))
    assert [t.id for t in on_write.turns] == ["t4", "t5"]
    assert on_write.conversation_id == conversation_key(on_write.turns)
    assert _calibrate._on_write_turns(example, None) is example
    assert _calibrate._on_write_turns(example, ("t9",)) is example  # none of them: as it was


def test_the_scheduled_job_points_an_inline_guard_at_its_traffic(data_dir: Path) -> None:
    from mirage_guard.adapters.cli._calibrate_job import job_problems

    inline = GuardSettings(data_dir=data_dir, audit_mode=AuditMode.INLINE, writer_model=WRITER,
                           profile_dir=data_dir / "p")  # fmt: skip
    (said,) = job_problems(inline)
    assert "fits a self_audit_separate profile" in said
    assert "label-sample --verdicts-out`, then `mirage calibrate fit`" in said
    off = inline.model_copy(update={"audit_mode": AuditMode.OFF})
    assert "label-sample" not in " ".join(job_problems(off))


def test_a_labels_table_of_another_shape_costs_the_labels_not_the_writes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A table made by a build that wrote fewer columns: every labelled write had failed."""
    url = f"sqlite:///{tmp_path / 'log.db'}"
    DecisionLog(url).close()
    log = DecisionLog(url)
    with log.engine.begin() as conn:
        conn.execute(text("DROP TABLE mirage_decision_audits"))
        conn.execute(text(
            "CREATE TABLE mirage_decision_audits (decision_id INTEGER PRIMARY KEY, "
            "labeller_model VARCHAR(200), prompt_version VARCHAR(200), mode VARCHAR(32), "
            "label VARCHAR(40), confidence FLOAT, quote TEXT, quote_check VARCHAR(20), "
            "source_turn_id VARCHAR(200))"
        ))  # fmt: skip
    log.close()
    with caplog.at_level("WARNING", logger="mirage.decisions"):
        log = DecisionLog(url)
    assert not log.keeps_audits
    assert "it has no column turn_ids" in caplog.text
    verdict = AuditVerdict(candidate_id="c0", label=Label.GROUNDED, confidence=0.9)
    source = AuditSource(model="m", prompt_version="p@1", mode="self_audit_separate")
    log.record(tenant="acme", scope=MemoryScope(user_id="u"), turns=TURNS,
               written=[_written(verdict, source)], request_id="r", writer_model="m")  # fmt: skip
    (logged,) = log.decisions(log.decision_ids(), audits=True)
    assert logged.audit is None
    log.close()


@pytest.mark.postgres
def test_a_role_without_the_grant_on_the_labels_table_keeps_writing(postgres_url: str) -> None:
    """The owner created the table; the guard's role was granted the older tables only."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    DecisionLog(postgres_url).close()  # the owner: every table
    engine = create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE ROLE app_nolabels LOGIN PASSWORD 'p'"))
        conn.execute(text("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public "
                          "TO app_nolabels"))  # fmt: skip
        conn.execute(text("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO app_nolabels"))
        conn.execute(text("REVOKE ALL ON mirage_decision_audits FROM app_nolabels"))
    engine.dispose()
    app_url = (
        make_url(postgres_url)
        .set(username="app_nolabels", password="p")
        .render_as_string(hide_password=False)
    )
    log = DecisionLog(app_url)
    assert not log.keeps_audits
    verdict = AuditVerdict(candidate_id="c0", label=Label.GROUNDED, confidence=0.9)
    source = AuditSource(model="m", prompt_version="p@1", mode="self_audit_separate")
    log.record(tenant="acme", scope=MemoryScope(user_id="u"), turns=TURNS,
               written=[_written(verdict, source)], request_id="r", writer_model="m")  # fmt: skip
    assert len(log.query("acme")) == 1
    log.close()


def test_a_self_audit_by_another_model_than_the_writer_is_refused(data_dir: Path) -> None:
    from mirage_guard.guard.errors import ConfigError

    settings = GuardSettings(data_dir=data_dir, audit_mode=AuditMode.SEPARATE, writer_model=WRITER)
    with pytest.raises(ConfigError, match="the self-audit calls 'mock/other', not the writer"):
        Guard(
            linker=EvidenceLinker(HashingEmbedder()),
            evidence_profile=make_profile(),
            auditor=SelfAuditor(FunctionLLM(_audit_answer, model="mock/other")),
            audit_mode=settings.audit_mode,
            writer_model=WRITER,
        )


def test_the_sync_twin_keeps_inline_labels_too(inline_settings: GuardSettings) -> None:
    guard = Guard.from_settings(inline_settings, embedder=HashingEmbedder())
    verdicts = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=0.9)
                for c in CANDIDATES]  # fmt: skip
    decisions = guard.tag(TURNS, CANDIDATES, audit=verdicts, audit_prompt=INLINE_PROMPT)
    assert {d.audit_source.mode for d in decisions if d.audit_source} == {"self_audit_inline"}
    guard.close()


def test_label_sample_says_an_older_log_has_no_labels_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIRAGE_DATABASE_URL", f"sqlite:///{_older_log(tmp_path)}")
    result = CliRunner().invoke(
        app,
        ["report", "label-sample", "--out", str(tmp_path / "s.jsonl"),
         "--verdicts-out", str(tmp_path / "v.jsonl")],
    )  # fmt: skip
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "1 made without a self-audit label the log kept: this log has no usable table" in said
    assert not (tmp_path / "s.jsonl").exists()


def test_an_existing_verdicts_file_is_never_replaced_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIRAGE_DATABASE_URL", f"sqlite:///{_older_log(tmp_path)}")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("kept\n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["report", "label-sample", "--out", str(tmp_path / "s.jsonl"),
         "--verdicts-out", str(verdicts)],
    )  # fmt: skip
    said = " ".join(result.output.split())
    assert result.exit_code != 0
    assert "(the verdicts in it would be lost): pass --overwrite or another --verdicts-out" in said
    assert verdicts.read_text(encoding="utf-8") == "kept\n"
    assert not (tmp_path / "s.jsonl").exists()


def test_calibrate_list_says_whose_held_out_figures_it_shows() -> None:
    """The guard's own on the dev split, else cross-validated; a profile fitted before those
    were recorded shows its model's AUROC and says so."""
    shown = _calibrate.held_out_figures
    guard = {"dev_guard_auroc": 0.81, "dev_guard_three_way": 0.7, "dev_auroc": 0.9}
    assert shown(guard) == "0.810 / 0.700 (dev, the guard)"
    cv = {"heldout_guard_three_way": 0.6, "heldout_combined_auroc": 1.0}  # AUROC: one class
    assert shown(cv) == "n/a / 0.600 (cross-validated, the guard)"
    assert shown({"dev_auroc": 0.9}) == "0.900 / - (dev, the profile)"
    assert shown({"heldout_combined_auroc": 0.95}) == "0.950 / - (cross-validated, the profile)"
    assert shown({"train_auroc": 1.0}) == "-"


def test_the_fit_reads_a_set_folder_and_the_profile_directorys_evidence_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--data` a set folder (the fit had hashed the folder and failed), and the guard of the
    held-out figures with the evidence profile fitted into `--profile-dir` for the linker's
    embedder (the shipped one is another embedder's: without it, no guard figure)."""
    monkeypatch.setattr(_calibrate, "_linker", lambda: EvidenceLinker(HashingEmbedder()))
    args = _three_users(tmp_path)
    folder = tmp_path / "set"
    folder.mkdir()
    data = Path(args[args.index("--data") + 1])
    data.rename(folder / "claims.jsonl")
    args[args.index("--data") + 1] = str(folder)
    ProfileStore(tmp_path / "p").save(make_profile())
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "could not all be computed" not in said
    # the user with every over-inference leaves the others' fold without one: left out
    assert "warning: the guard's held-out figures: fold " in said
    (profile,) = [p for p in ProfileStore(tmp_path / "p").all() if p.mode.uses_audit]
    assert profile.fitted_on.path == "claims.jsonl"
    assert profile.metrics["heldout_guard_n"] == 4.0
