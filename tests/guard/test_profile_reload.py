"""Swapping a guard's profiles at run time: atomic, checked like at construction, recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mirage_guard.guard import AuditMode, AuditVerdict, Guard, Label, ReasonCode
from mirage_guard.guard.errors import ProfileError, ProfileMismatchError
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode, ProfileStore
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile
from tests.guard.paper import PAPER_TURNS, STATED, STEREOTYPE, WRITER_A, WRITER_B

INLINE_REF = load_prompt("extract_candidates").ref


def _inline_profile(writer: str = WRITER_A, weight: float = 8.0) -> CalibrationProfile:
    return make_profile(
        ProfileMode.SELF_AUDIT_INLINE,
        writer_model=writer,
        prompt_version=INLINE_REF,
        audit_weight=weight,
    )


def _verdicts(label: Label = Label.GROUNDED) -> list[AuditVerdict]:
    return [
        AuditVerdict(candidate_id=c.id, label=label, confidence=0.9, source_turn_id="u1")
        for c in (STATED, STEREOTYPE)
    ]


def _guard(make_guard: Callable[..., Guard], **kwargs: object) -> Guard:
    return make_guard(audit_mode=AuditMode.INLINE, writer_model=WRITER_A, **kwargs)


def test_reload_picks_up_a_new_profile_and_decisions_record_its_hash(
    make_guard: Callable[..., Guard], tmp_path: Path
) -> None:
    guard = _guard(make_guard)
    before = guard.tag(PAPER_TURNS, [STATED, STEREOTYPE], audit=_verdicts())
    assert not any(d.calibrated for d in before)  # no profile for WRITER_A yet

    profile = _inline_profile()
    ProfileStore(tmp_path).save(profile)
    active = guard.reload_profiles(ProfileStore(tmp_path))
    assert active.audit == profile
    assert guard.profiles == active

    after = guard.tag(PAPER_TURNS, [STATED, STEREOTYPE], audit=_verdicts())
    assert all(d.calibrated and d.profile_id == profile.profile_id for d in after)
    for d in after:
        (scored,) = [r for r in d.reasons if r.code is ReasonCode.SCORED_WITH_PROFILE]
        assert scored.params == {
            "profile_id": profile.profile_id,
            "profile_hash": profile.content_hash,
        }


def test_a_refit_keeps_the_id_and_changes_the_recorded_hash(
    make_guard: Callable[..., Guard],
) -> None:
    first, refit = _inline_profile(weight=8.0), _inline_profile(weight=2.0)
    guard = _guard(make_guard, audit_profile=first)
    guard.use_profiles(guard.evidence_profile, refit)
    (d, _) = guard.tag(PAPER_TURNS, [STATED, STEREOTYPE], audit=_verdicts())
    hashes = {r.params.get("profile_hash") for r in d.reasons}
    assert refit.content_hash in hashes
    assert first.content_hash not in hashes
    assert first.profile_id == refit.profile_id


def test_another_models_profile_is_refused_and_the_old_one_stays(
    make_guard: Callable[..., Guard],
) -> None:
    mine = _inline_profile()
    guard = _guard(make_guard, audit_profile=mine)
    before = guard.profiles
    with pytest.raises(ProfileMismatchError) as info:
        guard.use_profiles(guard.evidence_profile, _inline_profile(WRITER_B))
    assert info.value.field == "writer_model"
    assert guard.profiles is before
    with pytest.raises(ProfileMismatchError):  # an audit profile offered as the evidence one
        guard.use_profiles(mine, None)
    assert guard.profiles is before


def test_a_store_with_only_another_models_profile_leaves_the_writer_uncalibrated(
    make_guard: Callable[..., Guard], tmp_path: Path
) -> None:
    guard = _guard(make_guard, audit_profile=_inline_profile())
    ProfileStore(tmp_path).save(_inline_profile(WRITER_B))
    active = guard.reload_profiles(ProfileStore(tmp_path))
    assert active.audit is None  # never WRITER_B's
    decisions = guard.tag(PAPER_TURNS, [STATED, STEREOTYPE], audit=_verdicts())
    assert not any(d.calibrated for d in decisions)


def test_a_bad_profile_file_fails_loading_before_the_guard_is_touched(
    make_guard: Callable[..., Guard], tmp_path: Path
) -> None:
    guard = _guard(make_guard, audit_profile=_inline_profile())
    before = guard.profiles
    broken = json.loads(_inline_profile().model_dump_json())
    broken["oi_threshold"] = 7.5
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ProfileError, match=r"broken\.json"):
        guard.reload_profiles(ProfileStore(tmp_path))
    assert guard.profiles is before


def test_save_writes_the_file_in_one_step(tmp_path: Path) -> None:
    profile = _inline_profile()
    path = ProfileStore(tmp_path).save(profile)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    assert ProfileStore(tmp_path).get(profile.profile_id) == profile
