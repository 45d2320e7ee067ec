"""Calibration profiles: keys, validation, JSON round trip, the store, the shipped profile."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from sklearn.linear_model import LogisticRegression

from mirage_guard.calibration._data import (
    TrainHalf,
    file_sha256,
    load_examples,
    packaged,
    train_half,
)
from mirage_guard.guard import AuditVerdict, Label
from mirage_guard.guard.errors import ProfileError, ProfileMismatchError, ProfileNotFoundError
from mirage_guard.guard.evidence import PROFILE_FEATURES, TOPIC_FEATURES
from mirage_guard.guard.scoring import (
    CalibrationProfile,
    LogisticModel,
    ProfileMode,
    ProfileStore,
    audit_features,
    feature_version,
    make_profile_id,
)
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile

A, B = "openai/gpt-4o-mini", "hosted_vllm/Qwen/Qwen3-8B"
REF = load_prompt("self_audit").ref
SEP = ProfileMode.SELF_AUDIT_SEPARATE


def audit(model: str, mode: ProfileMode = SEP, ref: str = REF) -> CalibrationProfile:
    return make_profile(mode, writer_model=model, prompt_version=ref, audit_weight=3.0)


def test_json_round_trip_is_lossless() -> None:
    for profile in (make_profile(), audit(A)):
        again = CalibrationProfile.model_validate_json(profile.model_dump_json())
        assert again == profile
        rows = [{"sim_max": 0.3, "lex_containment": 0.9, "audit_oi": 1.0, "audit_grounded": 0.0}]
        x = profile.oi_model.matrix(rows)
        assert np.array_equal(profile.oi_model.predict_proba(x), again.oi_model.predict_proba(x))


def test_store_saves_and_reloads(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    path = store.save(audit(A))
    assert path == tmp_path / f"{audit(A).profile_id}.json"
    assert json.loads(path.read_text())["writer_model"] == A
    reloaded = ProfileStore(tmp_path)
    assert reloaded.get(audit(A).profile_id) == audit(A)
    assert reloaded.for_writer(A, SEP, REF) == audit(A)


def test_for_writer_never_returns_another_models_profile(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    store.save(audit(A))
    with pytest.raises(ProfileNotFoundError, match=re.escape(B)):
        store.for_writer(B, SEP, REF)
    with pytest.raises(ProfileNotFoundError):
        store.for_writer(A, ProfileMode.SELF_AUDIT_INLINE, REF)
    with pytest.raises(ProfileNotFoundError):
        store.for_writer(A, SEP, "self_audit@000000000000")
    store.save(audit(B))
    assert store.for_writer(B, SEP, REF).writer_model == B
    assert store.for_writer(A, SEP, REF).writer_model == A


def test_profile_ids_do_not_collide_across_models_and_modes() -> None:
    ids = {
        make_profile_id(SEP, A, REF),
        make_profile_id(SEP, B, REF),
        make_profile_id(ProfileMode.SELF_AUDIT_INLINE, A, REF),
        make_profile_id(SEP, A, "self_audit@ffffffffffff"),
        make_profile_id(ProfileMode.EVIDENCE, None, None),
    }
    assert len(ids) == 5
    assert all("/" not in i for i in ids)  # usable as a file name


def test_two_models_whose_ids_share_a_file_name_never_replace_each_other(tmp_path: Path) -> None:
    """ "/" becomes "__" in an id: "org/m__x" and "org__m/x" share one. The second save used to
    replace the first model's profile; it is refused now, and a refit of the same key is not."""
    first, second = audit("org/m__x"), audit("org__m/x")
    assert first.profile_id == second.profile_id
    store = ProfileStore(tmp_path)
    path = store.save(first)
    with pytest.raises(ProfileError, match="refusing to replace it"):
        store.save(second)
    assert ProfileStore(tmp_path).for_writer("org/m__x", SEP, REF) == first
    assert store.save(first.model_copy(update={"oi_threshold": 0.4})) == path  # a refit


def test_the_missing_profile_message_names_commands_that_exist(tmp_path: Path) -> None:
    with pytest.raises(ProfileNotFoundError) as info:
        ProfileStore(tmp_path).for_writer(B, SEP, REF)
    assert f"mirage calibrate audit --writer-model {B}" in str(info.value)
    assert "calibrate fit --verdicts" in str(info.value)


def test_unknown_id_and_missing_evidence_profile(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    with pytest.raises(ProfileNotFoundError):
        store.get("nope")
    store._profiles.clear()  # no shipped profile at all
    with pytest.raises(ProfileNotFoundError, match="evidence-only"):
        store.evidence_only()


def test_invalid_profile_file_is_a_profile_error(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"profile_id": "x"}')
    with pytest.raises(ProfileError, match=r"broken\.json"):
        ProfileStore(tmp_path)


def test_save_without_a_directory_is_refused() -> None:
    with pytest.raises(ProfileError, match="MIRAGE_PROFILE_DIR"):
        ProfileStore(None).save(audit(A))


def test_a_self_audit_profile_must_name_model_and_prompt() -> None:
    with pytest.raises(ValidationError, match="writer model and prompt version"):
        make_profile(SEP, writer_model=None, prompt_version=REF)
    with pytest.raises(ValidationError, match="writer model and prompt version"):
        make_profile(SEP, writer_model=A, prompt_version=None)
    with pytest.raises(ValidationError, match="not tied to a writer model"):
        make_profile(ProfileMode.EVIDENCE, writer_model=A)


@pytest.mark.parametrize(
    ("mode", "model", "ref", "field"),
    [
        (SEP, B, REF, "writer_model"),
        (SEP, None, REF, "writer_model"),
        (SEP, A, "self_audit@000000000000", "prompt_version"),
        (ProfileMode.SELF_AUDIT_INLINE, A, REF, "mode"),
        (ProfileMode.EVIDENCE, None, None, "mode"),
    ],
)
def test_check_applicable_refuses_any_other_key(
    mode: ProfileMode, model: str | None, ref: str | None, field: str
) -> None:
    with pytest.raises(ProfileMismatchError) as info:
        audit(A).check_applicable(mode=mode, writer_model=model, prompt_version=ref)
    assert info.value.field == field
    assert "mirage calibrate fit" in str(info.value)


def test_check_applicable_accepts_its_own_key() -> None:
    audit(A).check_applicable(mode=SEP, writer_model=A, prompt_version=REF)
    # an evidence-only profile is valid for any writer
    make_profile().check_applicable(mode=ProfileMode.EVIDENCE, writer_model=B, prompt_version="x")


def test_logistic_model_matches_sklearn() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    y = (x @ np.array([1.5, -2.0, 0.5]) + rng.normal(scale=0.5, size=200) > 0).astype(int)
    clf = LogisticRegression().fit(x, y)
    model = LogisticModel(
        features=["a", "b", "c"],
        mean=[0.0] * 3,
        scale=[1.0] * 3,
        coef=[float(v) for v in clf.coef_[0]],
        intercept=float(clf.intercept_[0]),
    )
    rows = [dict(zip("abc", map(float, r), strict=True)) for r in x]
    assert np.allclose(model.predict_proba(model.matrix(rows)), clf.predict_proba(x)[:, 1])


def test_logistic_model_shapes_and_missing_features() -> None:
    with pytest.raises(ValidationError, match="same length"):
        LogisticModel(features=["a", "b"], mean=[0.0], scale=[1.0], coef=[1.0], intercept=0.0)
    model = LogisticModel(features=["a"], mean=[0.0], scale=[1.0], coef=[1.0], intercept=0.0)
    with pytest.raises(KeyError, match="a"):
        model.matrix([{"b": 1.0}])
    extreme = model.predict_proba(np.array([[1e6], [-1e6]]))
    assert np.all(np.isfinite(extreme))


@pytest.mark.parametrize(
    ("label", "confidence", "expected"),
    [
        (Label.FABRICATED, 0.9, {"audit_oi": 1.0, "audit_conf_oi": 0.9}),
        (Label.INFERRED_STEREOTYPE, 0.6, {"audit_oi": 1.0, "audit_conf_oi": 0.6}),
        (Label.GROUNDED, 0.9, {"audit_oi": 0.0, "audit_conf_oi": 0.1, "audit_grounded": 1.0}),
        (Label.INFERRED_REASONABLE, 0.7, {"audit_reasonable": 1.0, "audit_grounded": 0.0}),
    ],
)
def test_audit_features_put_confidence_on_one_oi_axis(
    label: Label, confidence: float, expected: dict[str, float]
) -> None:
    feats = audit_features(AuditVerdict(candidate_id="c", label=label, confidence=confidence))
    for key, value in expected.items():
        assert feats[key] == pytest.approx(value), key


# ----------------------------------------------------------------- the shipped profile


def test_shipped_evidence_profile_is_loadable_and_current() -> None:
    profile = ProfileStore().evidence_only()
    assert profile.profile_id == "evidence-only"
    assert profile.mode is ProfileMode.EVIDENCE
    assert profile.writer_model is None
    assert profile.embedder == "sentence-transformers/all-MiniLM-L6-v2"
    # fitted on the features the linker computes today, in this order, but the claim's topic
    assert profile.feature_version == feature_version(PROFILE_FEATURES)
    assert profile.oi_model.features == list(PROFILE_FEATURES)
    assert profile.stated_model.features == list(PROFILE_FEATURES)
    assert not set(TOPIC_FEATURES) & set(profile.oi_model.features)
    assert 0.0 < profile.oi_threshold < 1.0
    assert 0.0 < profile.stated_threshold < 1.0


def test_shipped_profile_cites_the_data_it_was_fitted_on() -> None:
    profile = ProfileStore().evidence_only()
    assert profile.fitted_on.path == "claims.jsonl"
    assert profile.fitted_on.split == "train"
    assert profile.fitted_on.sha256 == file_sha256(packaged("claims.jsonl"))
    train = [
        line
        for line in packaged("claims.jsonl").read_text("utf-8").splitlines()
        if line.strip() and json.loads(line).get("split") == "train"
    ]
    # the profile half of the train split (the claim-support model learned from the other half)
    half = train_half(load_examples(packaged("claims.jsonl"), split="train"), TrainHalf.PROFILE)
    assert profile.fitted_on.n_examples == len(half)
    assert 0.3 * len(train) < len(half) < 0.7 * len(train)
