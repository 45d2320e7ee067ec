"""The Guard refuses another model's profile and is explicit when it has none."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mirage_guard.guard import (
    Action,
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
from mirage_guard.guard.errors import ProfileMismatchError
from mirage_guard.guard.scoring import ProfileMode
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import labelling_llm
from tests.guard.paper import (
    PAPER_TURNS,
    SELF_AUDIT_REF,
    STATED,
    STEREOTYPE,
    UNSUPPORTED,
    WRITER_A,
    WRITER_B,
    audit_profile,
    store_with,
)

CANDS = [STATED, UNSUPPORTED, STEREOTYPE]


def test_profile_for_model_a_is_refused_for_writer_b(make_guard: Callable[..., Guard]) -> None:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_B)
    with pytest.raises(ProfileMismatchError) as info:
        make_guard(
            auditor=SelfAuditor(llm),
            audit_mode=AuditMode.SEPARATE,
            audit_profile=audit_profile(WRITER_A),
            writer_model=WRITER_B,
        )
    err = info.value
    assert err.field == "writer_model"
    assert (err.expected, err.actual) == (WRITER_B, WRITER_A)
    assert err.profile_id == audit_profile(WRITER_A).profile_id


def test_profile_for_another_prompt_version_is_refused(make_guard: Callable[..., Guard]) -> None:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A)
    with pytest.raises(ProfileMismatchError) as info:
        make_guard(
            auditor=SelfAuditor(llm),
            audit_mode=AuditMode.SEPARATE,
            audit_profile=audit_profile(WRITER_A, prompt_version="self_audit@000000000000"),
            writer_model=WRITER_A,
        )
    assert info.value.field == "prompt_version"
    assert info.value.expected == SELF_AUDIT_REF


def test_profile_for_another_mode_is_refused(make_guard: Callable[..., Guard]) -> None:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A)
    with pytest.raises(ProfileMismatchError) as info:
        make_guard(
            auditor=SelfAuditor(llm),
            audit_mode=AuditMode.SEPARATE,
            audit_profile=audit_profile(WRITER_A, mode=ProfileMode.SELF_AUDIT_INLINE),
            writer_model=WRITER_A,
        )
    assert info.value.field == "mode"
    assert info.value.expected == ProfileMode.SELF_AUDIT_SEPARATE.value


def test_a_self_audit_profile_is_refused_as_the_evidence_profile(linker: object) -> None:
    with pytest.raises(ProfileMismatchError):
        Guard(linker=linker, evidence_profile=audit_profile(WRITER_A))  # type: ignore[arg-type]


def test_matching_profile_is_accepted_and_used(make_guard: Callable[..., Guard]) -> None:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A, source_turn_id="u1")
    profile = audit_profile(WRITER_A)
    guard = make_guard(
        auditor=SelfAuditor(llm),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=profile,
        writer_model=WRITER_A,
    )
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert all(d.profile_id == profile.profile_id for d in decisions)
    assert all(d.calibrated for d in decisions)
    assert all(d.audit is not None and d.audit.label is Label.GROUNDED for d in decisions)
    assert len(llm.calls) == 1


def test_per_write_writer_model_other_than_the_profile_is_uncalibrated(
    make_guard: Callable[..., Guard],
) -> None:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A, source_turn_id="u1")
    guard = make_guard(
        auditor=SelfAuditor(llm),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=audit_profile(WRITER_A),
        writer_model=WRITER_A,
    )
    decisions = guard.tag(PAPER_TURNS, CANDS, writer_model=WRITER_B)
    assert all(d.profile_id == "evidence-only" for d in decisions)
    assert all(not d.calibrated for d in decisions)
    uncalibrated = Reason(code=ReasonCode.UNCALIBRATED_WRITER, params={"writer_model": WRITER_B})
    assert all(uncalibrated in d.reasons for d in decisions)
    assert WRITER_B in render_reason(uncalibrated)
    assert "uncalibrated" in render_reason(uncalibrated)


def test_missing_per_model_profile_is_explicit_and_never_trusts_the_audit(
    make_guard: Callable[..., Guard],
) -> None:
    # the writer swears every candidate is GROUNDED in u1, with full confidence
    llm = labelling_llm(Label.GROUNDED, model=WRITER_B, confidence=1.0, source_turn_id="u1")
    guard = make_guard(
        auditor=SelfAuditor(llm), audit_mode=AuditMode.SEPARATE, writer_model=WRITER_B
    )
    decisions = guard.tag(PAPER_TURNS, CANDS)
    for d in decisions:
        assert d.calibrated is False
        assert d.profile_id == "evidence-only"
        assert Reason(code=ReasonCode.UNCALIBRATED_WRITER, params={"writer_model": WRITER_B}) in (
            d.reasons
        )
    stated, unsupported, stereotype = decisions
    assert stated.action is Action.STORE  # the evidence supports it on its own
    # the audit's word alone does not make an unlinked candidate a fact
    assert unsupported.provenance is Provenance.GENERATED
    assert stereotype.provenance is Provenance.GENERATED
    assert unsupported.action is not Action.STORE
    assert stereotype.action is not Action.STORE


def test_uncalibrated_audit_may_only_make_a_decision_more_cautious(
    make_guard: Callable[..., Guard],
) -> None:
    llm = labelling_llm(Label.FABRICATED, model=WRITER_B)
    guard = make_guard(
        auditor=SelfAuditor(llm), audit_mode=AuditMode.SEPARATE, writer_model=WRITER_B
    )
    [d] = guard.tag(PAPER_TURNS, [STATED])
    assert d.provenance is Provenance.GENERATED
    assert d.action is Action.QUARANTINE
    assert ReasonCode.SELF_AUDIT_DOWNGRADE in {r.code for r in d.reasons}


def test_evidence_only_without_writer_model_is_calibrated(make_guard: Callable[..., Guard]) -> None:
    decisions = make_guard().tag(PAPER_TURNS, CANDS)
    assert all(d.calibrated for d in decisions)
    assert [d.action for d in decisions] == [Action.STORE, Action.QUARANTINE, Action.QUARANTINE]


def test_from_settings_picks_the_writers_own_profile(tmp_path: Path) -> None:
    store = store_with(tmp_path, audit_profile(WRITER_A))
    settings = GuardSettings(audit_mode=AuditMode.SEPARATE, profile_dir=tmp_path)
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A, source_turn_id="u1")
    guard = Guard.from_settings(
        settings, writer_llm=llm, embedder=HashingEmbedder(), profiles=store
    )
    assert guard.audit_profile == audit_profile(WRITER_A)
    assert guard.writer_model == WRITER_A


def test_from_settings_never_borrows_another_models_profile(tmp_path: Path) -> None:
    store = store_with(tmp_path, audit_profile(WRITER_A))
    settings = GuardSettings(audit_mode=AuditMode.SEPARATE, profile_dir=tmp_path)
    llm = labelling_llm(Label.GROUNDED, model=WRITER_B, confidence=1.0, source_turn_id="u1")
    guard = Guard.from_settings(
        settings, writer_llm=llm, embedder=HashingEmbedder(), profiles=store
    )
    assert guard.audit_profile is None
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert all(not d.calibrated for d in decisions)
    assert all(d.profile_id == "evidence-only" for d in decisions)
    assert decisions[1].action is not Action.STORE


def test_inline_profile_for_another_extraction_prompt_is_refused(
    make_guard: Callable[..., Guard],
) -> None:
    stale = audit_profile(
        WRITER_A,
        mode=ProfileMode.SELF_AUDIT_INLINE,
        prompt_version="extract_candidates@000000000000",
    )
    with pytest.raises(ProfileMismatchError):
        make_guard(audit_mode=AuditMode.INLINE, audit_profile=stale, writer_model=WRITER_A)


def test_inline_profile_for_the_current_extraction_prompt_is_accepted(
    make_guard: Callable[..., Guard],
) -> None:
    current = audit_profile(
        WRITER_A,
        mode=ProfileMode.SELF_AUDIT_INLINE,
        prompt_version=load_prompt("extract_candidates").ref,
    )
    guard = make_guard(audit_mode=AuditMode.INLINE, audit_profile=current, writer_model=WRITER_A)
    inline = [AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=0.9) for c in CANDS]
    decisions = guard.tag(PAPER_TURNS, CANDS, audit=inline)
    assert all(d.profile_id == current.profile_id for d in decisions)
    assert all(d.calibrated for d in decisions)
    # partial inline verdicts cannot use the audit profile: evidence-only, uncalibrated
    partial = guard.tag(PAPER_TURNS, CANDS, audit=inline[:1])
    assert all(d.profile_id == "evidence-only" for d in partial)
    assert all(not d.calibrated for d in partial)


class _PairModel:
    """A claim-support model known only by its weights' hash."""

    def __init__(self, sha256: str) -> None:
        self.sha256 = sha256

    def predict_text(self, premises: object, claims: object) -> object:
        raise AssertionError("not called: the guard refuses the profile before any write")


def test_a_profile_fitted_with_another_support_model_is_refused() -> None:
    """Features of another claim-support model do not mean what the profile's weights and
    thresholds assume (a student or a retrain copied in without `mirage calibrate
    fit-evidence`)."""
    from mirage_guard.guard.evidence import ClaimSupport, EvidenceLinker

    linker = EvidenceLinker(HashingEmbedder(), support=ClaimSupport(_PairModel("b" * 64)))
    fitted_with_a = make_profile().model_copy(update={"support_model": "a" * 64})
    with pytest.raises(ProfileMismatchError) as info:
        Guard(linker=linker, evidence_profile=fitted_with_a)
    assert (info.value.field, info.value.expected, info.value.actual) == (
        "support model",
        "b" * 12,
        "a" * 12,
    )
    # the same model, or a profile that never recorded one (fitted before it was): accepted
    Guard(
        linker=linker, evidence_profile=fitted_with_a.model_copy(update={"support_model": "b" * 64})
    ).close()
    Guard(linker=linker, evidence_profile=make_profile()).close()


def test_a_profile_that_reads_a_feature_the_guard_never_computes_is_refused_at_start(
    linker: object, make_guard: Callable[..., Guard]
) -> None:
    """Such a profile (another version's, or edited by hand) used to load, then fail every
    write with a bare KeyError."""
    base = make_profile()
    renamed = base.oi_model.model_copy(
        update={"features": ["no_such_feature", *base.oi_model.features[1:]]}
    )
    edited = base.model_copy(update={"oi_model": renamed})
    with pytest.raises(ProfileMismatchError) as info:
        Guard(linker=linker, evidence_profile=edited)  # type: ignore[arg-type]
    assert (info.value.field, info.value.actual) == ("features", "no_such_feature")
    # a self-audit profile may read the audit's features, and nothing else new
    audit = audit_profile(WRITER_A)
    stated = audit.stated_model.model_copy(
        update={"features": [*audit.stated_model.features[:-1], "audit_vibes"]}
    )
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A)
    with pytest.raises(ProfileMismatchError) as info:
        make_guard(
            auditor=SelfAuditor(llm),
            audit_mode=AuditMode.SEPARATE,
            audit_profile=audit.model_copy(update={"stated_model": stated}),
            writer_model=WRITER_A,
        )
    assert (info.value.field, info.value.actual) == ("features", "audit_vibes")
