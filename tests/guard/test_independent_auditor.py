"""An independent auditor (MIRAGE_AUDITOR_MODEL): a model other than the writer labels every
write's candidates, and the guard scores its labels with the auditor's own profile, never the
writer's (and the writer's never for the auditor)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from mirage_guard.guard import (
    Action,
    AuditFailure,
    AuditMode,
    AuditVerdict,
    Guard,
    GuardSettings,
    Label,
    Provenance,
    Reason,
    ReasonCode,
    SelfAuditor,
    render_reason,
)
from mirage_guard.guard.errors import ConfigError, LLMOutputError, ProfileMismatchError
from mirage_guard.guard.llm import FunctionLLM, Message
from mirage_guard.guard.scoring import CalibrationProfile
from mirage_guard.prompts import load_prompt
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import labelling_llm
from tests.guard.paper import (
    PAPER_TURNS,
    STATED,
    STEREOTYPE,
    UNSUPPORTED,
    WRITER_A,
    WRITER_B,
    audit_profile,
    store_with,
)

AUDITOR = "mock/auditor"
CANDS = [STATED, UNSUPPORTED, STEREOTYPE]
INDEPENDENT_REF = load_prompt("audit_independent").ref


def auditor_profile(model: str = AUDITOR) -> CalibrationProfile:
    """A model's profile as an independent auditor (fitted with `calibrate audit --as-auditor`:
    the auditor's prompt version)."""
    return audit_profile(model, prompt_version=INDEPENDENT_REF)


def _separate(tmp_path: Path, **over: object) -> GuardSettings:
    return GuardSettings(audit_mode=AuditMode.SEPARATE, profile_dir=tmp_path, **over)  # type: ignore[arg-type]


def test_the_auditor_labels_and_its_own_profile_scores(tmp_path: Path) -> None:
    store = store_with(tmp_path, audit_profile(WRITER_A), auditor_profile())
    writer = labelling_llm(Label.FABRICATED, model=WRITER_A)
    auditor = labelling_llm(Label.GROUNDED, model=AUDITOR, source_turn_id="u1")
    guard = Guard.from_settings(
        _separate(tmp_path),
        writer_llm=writer,
        auditor_llm=auditor,
        embedder=HashingEmbedder(),
        profiles=store,
    )
    assert guard.audit_profile == auditor_profile()
    assert (guard.writer_model, guard.auditor_model, guard.labeller_model) == (
        WRITER_A,
        AUDITOR,
        AUDITOR,
    )
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert len(auditor.calls) == 1  # one call labels the whole write
    assert writer.calls == []  # the writer is never asked about its own memories
    assert all(d.profile_id == auditor_profile().profile_id for d in decisions)
    assert all(d.calibrated for d in decisions)
    assert all(d.audit is not None and d.audit.label is Label.GROUNDED for d in decisions)
    assert guard.describe()["auditor_model"] == AUDITOR


def test_the_writer_audits_itself_when_no_auditor_is_set(tmp_path: Path) -> None:
    store = store_with(tmp_path, audit_profile(WRITER_A), auditor_profile())
    writer = labelling_llm(Label.GROUNDED, model=WRITER_A, source_turn_id="u1")
    guard = Guard.from_settings(
        _separate(tmp_path), writer_llm=writer, embedder=HashingEmbedder(), profiles=store
    )
    assert guard.audit_profile == audit_profile(WRITER_A)
    assert guard.auditor_model is None
    assert guard.describe()["auditor_model"] is None
    guard.tag(PAPER_TURNS, CANDS)
    assert len(writer.calls) == 1


def test_an_auditor_never_borrows_the_writers_profile(tmp_path: Path) -> None:
    store = store_with(tmp_path, audit_profile(WRITER_A))
    auditor = labelling_llm(Label.GROUNDED, model=AUDITOR, confidence=1.0, source_turn_id="u1")
    guard = Guard.from_settings(
        _separate(tmp_path, writer_model=WRITER_A),
        auditor_llm=auditor,
        embedder=HashingEmbedder(),
        profiles=store,
    )
    assert guard.audit_profile is None
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert all(d.profile_id == "evidence-only" and not d.calibrated for d in decisions)
    uncalibrated = Reason(code=ReasonCode.UNCALIBRATED_WRITER, params={"writer_model": AUDITOR})
    assert all(uncalibrated in d.reasons for d in decisions)
    assert f"no self-audit profile for model {AUDITOR!r}" in render_reason(uncalibrated)
    # the auditor's confident word alone makes no unlinked candidate a fact
    assert decisions[1].provenance is Provenance.GENERATED
    assert decisions[1].action is not Action.STORE


def test_the_writers_profile_is_refused_for_an_auditor(make_guard: Callable[..., Guard]) -> None:
    auditor = SelfAuditor.independent(labelling_llm(Label.GROUNDED, model=AUDITOR))
    with pytest.raises(ProfileMismatchError) as info:
        make_guard(
            auditor=auditor,
            audit_mode=AuditMode.SEPARATE,
            audit_profile=audit_profile(WRITER_A),
            writer_model=WRITER_A,
            auditor_model=AUDITOR,
        )
    assert (info.value.field, info.value.expected, info.value.actual) == (
        "writer_model",
        AUDITOR,
        WRITER_A,
    )
    guard = make_guard(
        auditor=auditor,
        audit_mode=AuditMode.SEPARATE,
        audit_profile=auditor_profile(),
        writer_model=WRITER_A,
        auditor_model=AUDITOR,
    )
    with pytest.raises(ProfileMismatchError):  # nor swapped in later (a reload)
        guard.use_profiles(guard.evidence_profile, audit_profile(WRITER_A))
    assert guard.audit_profile == auditor_profile()


def test_the_auditors_profile_scores_every_writers_claims(make_guard: Callable[..., Guard]) -> None:
    """A writer's self-audit profile covers that writer's claims only; an auditor's profile
    covers the claims it labels, whoever wrote them (a write names its own writer_model)."""
    guard = make_guard(
        auditor=SelfAuditor.independent(
            labelling_llm(Label.GROUNDED, model=AUDITOR, source_turn_id="u1")
        ),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=auditor_profile(),
        writer_model=WRITER_A,
        auditor_model=AUDITOR,
    )
    for writer in (WRITER_A, WRITER_B, None):
        decisions = guard.tag(PAPER_TURNS, CANDS, writer_model=writer)
        assert all(d.profile_id == auditor_profile().profile_id for d in decisions), writer
        assert all(d.calibrated for d in decisions), writer


def test_a_failing_auditor_fails_closed_and_is_named(make_guard: Callable[..., Guard]) -> None:
    def broken(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        raise RuntimeError("the auditor's server went away")

    llm = FunctionLLM(broken, model=AUDITOR)
    kwargs = dict(
        auditor=SelfAuditor.independent(llm),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=auditor_profile(),
        writer_model=WRITER_A,
        auditor_model=AUDITOR,
    )
    decisions = make_guard(**kwargs).tag(PAPER_TURNS, CANDS)
    assert all(d.provenance is not Provenance.STATED for d in decisions)
    assert all(d.action is not Action.STORE for d in decisions)
    assert all(ReasonCode.SELF_AUDIT_FAILED in {r.code for r in d.reasons} for d in decisions)
    refusing = make_guard(**kwargs, on_audit_failure=AuditFailure.ERROR)
    with pytest.raises(LLMOutputError) as info:
        refusing.tag(PAPER_TURNS, CANDS)
    assert info.value.model == AUDITOR  # the model that failed, not the writer


@pytest.mark.parametrize("mode", ["off", "inline"])
def test_an_auditor_needs_the_separate_mode(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRAGE_AUDIT_MODE", mode)
    monkeypatch.setenv("MIRAGE_AUDITOR_MODEL", AUDITOR)
    with pytest.raises(ConfigError) as info:
        GuardSettings.from_env()
    assert "MIRAGE_AUDITOR_MODEL" in str(info.value)
    assert "separate" in str(info.value)


def test_an_auditor_api_base_needs_an_auditor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRAGE_AUDIT_MODE", "separate")
    monkeypatch.setenv("MIRAGE_AUDITOR_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("MIRAGE_AUDITOR_MODEL", raising=False)
    with pytest.raises(ConfigError, match=r"MIRAGE_AUDITOR_API_BASE.*MIRAGE_AUDITOR_MODEL"):
        GuardSettings.from_env()
    monkeypatch.setenv("MIRAGE_AUDITOR_MODEL", "  ")
    with pytest.raises(ConfigError, match="MIRAGE_AUDITOR_MODEL"):
        GuardSettings.from_env()


def test_the_labeller_is_the_auditor_when_there_is_one() -> None:
    writer_only = GuardSettings(writer_model=WRITER_A, writer_api_base="http://w/v1")
    assert writer_only.audit_labeller() == (WRITER_A, "http://w/v1")
    both = GuardSettings(
        audit_mode=AuditMode.SEPARATE,
        writer_model=WRITER_A,
        writer_api_base="http://w/v1",
        auditor_model=AUDITOR,
        auditor_api_base="http://a/v1",
    )
    assert both.audit_labeller() == (AUDITOR, "http://a/v1")
    assert GuardSettings().audit_labeller() == (None, None)


def test_an_auditor_given_in_code_also_needs_the_separate_mode(
    make_guard: Callable[..., Guard], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="separate"):
        make_guard(audit_mode=AuditMode.OFF, auditor_model=AUDITOR)
    with pytest.raises(ConfigError, match="separate"):
        Guard.from_settings(
            GuardSettings(audit_mode=AuditMode.INLINE, profile_dir=tmp_path),
            auditor_llm=labelling_llm(Label.GROUNDED, model=AUDITOR),
            embedder=HashingEmbedder(),
        )


def test_verdicts_a_caller_passes_are_never_scored_with_the_auditors_profile(
    make_guard: Callable[..., Guard],
) -> None:
    """``audit=`` (``POST /v1/guard/tag``, ``remember(audit=...)``) are someone else's labels,
    the writer's or anyone's: the auditor's profile would make them calibrated, and a trusted
    quote could make a decision less cautious than the evidence alone (found in review)."""
    auditor = labelling_llm(Label.FABRICATED, model=AUDITOR)
    guard = make_guard(
        auditor=SelfAuditor.independent(auditor),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=auditor_profile(),
        writer_model=WRITER_A,
        auditor_model=AUDITOR,
    )
    given = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=1.0) for c in CANDS]
    decisions = guard.tag(PAPER_TURNS, CANDS, writer_model=WRITER_B, audit=given)
    assert auditor.calls == []  # the caller's verdicts are taken as given ...
    assert all(d.profile_id == "evidence-only" for d in decisions)  # ... but not calibrated
    assert all(not d.calibrated for d in decisions)
    uncalibrated = Reason(code=ReasonCode.UNCALIBRATED_WRITER, params={"writer_model": WRITER_B})
    assert all(uncalibrated in d.reasons for d in decisions)  # whose labels they are
    assert decisions[1].action is not Action.STORE


def test_the_auditor_is_told_another_model_wrote_the_entries(tmp_path: Path) -> None:
    writer = labelling_llm(Label.GROUNDED, model=WRITER_A, source_turn_id="u1")
    auditor = labelling_llm(Label.GROUNDED, model=AUDITOR, source_turn_id="u1")
    with_auditor = Guard.from_settings(
        _separate(tmp_path), writer_llm=writer, auditor_llm=auditor, embedder=HashingEmbedder()
    )
    self_audit = Guard.from_settings(
        _separate(tmp_path), writer_llm=writer, embedder=HashingEmbedder()
    )
    with_auditor.tag(PAPER_TURNS, CANDS)
    self_audit.tag(PAPER_TURNS, CANDS)
    [auditor_call], [writer_call] = auditor.calls, writer.calls
    assert auditor_call.messages[0].content.startswith("Another assistant wrote the memory entries")
    assert writer_call.messages[0].content.startswith("You wrote the memory entries")
    assert with_auditor.auditor is not None
    assert with_auditor.auditor.prompt_version == INDEPENDENT_REF


def test_a_models_self_audit_profile_is_not_its_auditor_profile(tmp_path: Path) -> None:
    """Fitted with the self-audit prompt (`calibrate audit` without --as-auditor), the profile
    calibrates the model's labels of entries it was told it wrote: not what it is asked as an
    auditor."""
    store = store_with(tmp_path, audit_profile(AUDITOR))  # the self-audit prompt's version
    guard = Guard.from_settings(
        _separate(tmp_path),
        auditor_llm=labelling_llm(Label.GROUNDED, model=AUDITOR),
        embedder=HashingEmbedder(),
        profiles=store,
    )
    assert guard.audit_profile is None
    with pytest.raises(ProfileMismatchError) as info:
        guard.use_profiles(guard.evidence_profile, audit_profile(AUDITOR))
    assert info.value.field == "prompt_version"


def test_an_auditor_that_calls_another_model_is_refused(make_guard: Callable[..., Guard]) -> None:
    with pytest.raises(ConfigError, match="not the auditor_model"):
        make_guard(
            auditor=SelfAuditor.independent(labelling_llm(Label.GROUNDED, model=WRITER_B)),
            audit_mode=AuditMode.SEPARATE,
            auditor_model=AUDITOR,
        )


def test_an_auditor_model_is_read_without_its_spaces() -> None:
    settings = GuardSettings(audit_mode=AuditMode.SEPARATE, auditor_model=f"  {AUDITOR} ")
    assert settings.auditor_model == AUDITOR


class _Seen:
    """A GuardObserver that keeps the model each write's decisions were counted under."""

    def __init__(self) -> None:
        self.models: list[str | None] = []

    def on_decisions(self, decisions: object, *, writer_model: str | None) -> None:
        self.models.append(writer_model)

    def on_stage(self, stage: str, seconds: float) -> None:
        pass

    def on_error(self, stage: str, error: BaseException) -> None:
        pass


def test_metrics_follow_the_auditor_when_no_writer_is_configured(
    make_guard: Callable[..., Guard],
) -> None:
    """An auditor-only guard (``remember`` / ``/v1/guard/tag`` with no writer) counted its
    uncalibrated decisions under the model "none", which the alert rules leave out."""
    seen = _Seen()
    guard = make_guard(
        auditor=SelfAuditor.independent(labelling_llm(Label.GROUNDED, model=AUDITOR)),
        audit_mode=AuditMode.SEPARATE,
        auditor_model=AUDITOR,
        metrics=seen,
    )
    guard.tag(PAPER_TURNS, CANDS)
    guard.tag(PAPER_TURNS, CANDS, writer_model=WRITER_B)
    assert seen.models == [AUDITOR, WRITER_B]  # a write's own writer still names its series


def test_an_eval_asks_the_model_it_names_not_the_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`mirage guard eval --writer-model W` evaluated MIRAGE_AUDITOR_MODEL when it was exported,
    and the default (evidence-only) eval called the environment's writer under
    MIRAGE_AUDIT_MODE=separate."""
    from mirage_guard.calibration._evaluate import build_eval_guard

    monkeypatch.setenv("MIRAGE_AUDIT_MODE", "separate")
    monkeypatch.setenv("MIRAGE_WRITER_MODEL", "mock/from-the-environment")
    monkeypatch.setenv("MIRAGE_AUDITOR_MODEL", AUDITOR)
    plain = build_eval_guard(profile_dir=None)
    assert (plain.audit_mode, plain.auditor, plain.auditor_model) == (AuditMode.OFF, None, None)
    named = build_eval_guard(profile_dir=None, writer_model=WRITER_A)
    assert named.auditor is not None
    assert named.auditor.llm.model == WRITER_A
    assert named.auditor_model is None
    plain.close()
    named.close()


def test_drift_is_watched_for_an_auditor_only_guard(make_guard: Callable[..., Guard]) -> None:
    from prometheus_client import CollectorRegistry

    from mirage_guard.adapters._prometheus import GuardMetrics

    guard = make_guard(
        auditor=SelfAuditor.independent(labelling_llm(Label.GROUNDED, model=AUDITOR)),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=auditor_profile(),
        auditor_model=AUDITOR,
    )
    metrics = GuardMetrics(CollectorRegistry(), models={AUDITOR})
    metrics.track_guard(guard)
    assert metrics.drift.reading(AUDITOR) is not None  # it returned None: no writer model


def test_verdicts_passed_in_without_a_writer_are_uncalibrated_too(
    make_guard: Callable[..., Guard],
) -> None:
    """No writer configured or named: the caller's verdicts came out `calibrated: true`."""
    guard = make_guard(
        auditor=SelfAuditor.independent(labelling_llm(Label.GROUNDED, model=AUDITOR)),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=auditor_profile(),
        auditor_model=AUDITOR,
    )
    given = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=1.0) for c in CANDS]
    decisions = guard.tag(PAPER_TURNS, CANDS, audit=given)
    assert all(d.profile_id == "evidence-only" and not d.calibrated for d in decisions)
    assert all(ReasonCode.UNCALIBRATED_WRITER in {r.code for r in d.reasons} for d in decisions)


async def test_an_audit_cut_at_the_token_cap_says_so() -> None:
    """A new user's `calibrate audit --max-tokens 400` on a whole persona failed with "output is
    not JSON: Unterminated string" and no hint that the answer had been cut."""
    from mirage_guard.guard.llm import Completion, ScriptedLLM

    cut = Completion(text='{"verdicts": [{"id": "c-', model=AUDITOR, finish_reason="length")
    auditor = SelfAuditor.independent(ScriptedLLM([cut], model=AUDITOR))
    with pytest.raises(LLMOutputError, match=r"cut at the token cap \(finish_reason=length"):
        await auditor.audit(PAPER_TURNS, CANDS)
    stopped = Completion(text='{"verdicts": [{"id": "c-', model=AUDITOR, finish_reason="stop")
    with pytest.raises(LLMOutputError) as raised:
        await SelfAuditor.independent(ScriptedLLM([stopped], model=AUDITOR)).audit(
            PAPER_TURNS, CANDS
        )
    assert "token cap" not in str(raised.value)
