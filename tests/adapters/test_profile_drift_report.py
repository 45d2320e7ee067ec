"""`mirage report pollution` says when a writer model's calibration profile went stale, from the
profile version each logged decision names; unknown is reported as unknown, never as 0."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import mirage_guard.adapters._decision_log as decision_log_module
from mirage_guard.adapters._decision_log import DecisionLog, MemoryScope, WrittenDecision
from mirage_guard.adapters._profile_drift import profile_drift
from mirage_guard.guard import (
    Action,
    Candidate,
    Decision,
    Provenance,
    Reason,
    ReasonCode,
    Role,
    Turn,
    reason,
)
from mirage_guard.guard.scoring import (
    CalibrationProfile,
    DriftStatus,
    ProfileMode,
    ProfileStore,
    rolling_psi,
    score_distribution,
)
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile

MODEL = "mock/writer-a"
T0 = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
RNG = np.random.default_rng(11)
FITTED = RNG.beta(2.0, 6.0, 3000)
HEALTHY = RNG.beta(2.0, 6.0, 120)  # like the fit data
SHIFTED = RNG.beta(6.0, 2.0, 80)  # the writer changed: mostly high P(OI)


def _profile(with_distribution: bool = True) -> CalibrationProfile:
    p = make_profile(
        ProfileMode.SELF_AUDIT_SEPARATE,
        writer_model=MODEL,
        prompt_version=load_prompt("self_audit").ref,
        audit_weight=8.0,
    )
    return p.model_copy(
        update={"score_distribution": score_distribution(FITTED) if with_distribution else None}
    )


@dataclass(frozen=True)
class Row:
    """A decision-log row as the report reads it (adapters._pollution.DecisionRecord)."""

    score: float | None
    created_at: datetime
    reasons: Sequence[Reason]
    writer_model: str | None = MODEL
    tenant: str = "t"
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    candidate_text: str = "x"
    source_turn_id: str | None = None
    provenance: Provenance = Provenance.GENERATED
    action: Action = Action.QUARANTINE
    calibrated: bool = True
    extra: dict[str, str] = field(default_factory=dict)


def _scored(profile: CalibrationProfile) -> Reason:
    return reason(
        ReasonCode.SCORED_WITH_PROFILE,
        profile_id=profile.profile_id,
        profile_hash=profile.content_hash,
    )


def _rows(profile: CalibrationProfile, scores: Sequence[float] | np.ndarray) -> list[Row]:
    return [
        Row(score=float(s), created_at=T0 + timedelta(minutes=i), reasons=[_scored(profile)])
        for i, s in enumerate(scores)
    ]


def test_stale_since_is_when_the_first_window_of_the_last_stale_run_closed() -> None:
    profile = _profile()
    scores = [*HEALTHY, *SHIFTED]
    rows = _rows(profile, scores)
    (line,) = profile_drift(list(reversed(rows)), [profile], window=50, threshold=0.25)
    assert line.status is DriftStatus.STALE
    series = rolling_psi(profile.score_distribution, scores, 50)  # type: ignore[arg-type]
    assert line.psi == pytest.approx(series[-1])
    first_stale = max(i for i, v in enumerate(series) if v <= 0.25) + 1
    assert line.stale_since == rows[first_stale + 49].created_at
    assert rows[len(HEALTHY)].created_at <= line.stale_since  # not before the shift began
    sentence = line.sentence()
    assert sentence.startswith(f"profile for {MODEL} is stale since ")
    assert line.stale_since.strftime("%Y-%m-%d %H:%M:%S UTC") in sentence
    assert profile.content_hash in sentence


def test_a_profile_that_still_fits_is_ok() -> None:
    profile = _profile()
    (line,) = profile_drift(_rows(profile, HEALTHY), [profile], window=50)
    assert line.status is DriftStatus.OK
    assert line.stale_since is None
    assert line.psi is not None
    assert line.psi <= 0.25
    assert "still fits" in line.sentence()


def test_unknown_is_unknown_not_zero() -> None:
    old = _profile(with_distribution=False)
    (line,) = profile_drift(_rows(old, SHIFTED), [old], window=50)
    assert (line.status, line.psi) == (DriftStatus.UNKNOWN, None)
    assert "no fitted score distribution" in line.sentence()

    profile = _profile()
    (missing,) = profile_drift(_rows(profile, SHIFTED), [], window=50)  # not installed here
    assert missing.status is DriftStatus.UNKNOWN
    assert "--profile-dir" in missing.sentence()

    (few,) = profile_drift(_rows(profile, SHIFTED[:5]), [profile], window=50)
    assert few.status is DriftStatus.UNKNOWN
    assert few.scores == 5


def test_only_the_latest_profile_version_is_judged() -> None:
    first = _profile()
    refit = first.model_copy(update={"score_distribution": score_distribution(SHIFTED)})
    rows = _rows(first, [*HEALTHY, *SHIFTED])  # the old version went stale ...
    later = T0 + timedelta(days=1)
    rows += [  # ... then the refit scores the same kind of traffic it was fitted on
        Row(score=float(s), created_at=later + timedelta(minutes=i), reasons=[_scored(refit)])
        for i, s in enumerate(RNG.beta(6.0, 2.0, 60))
    ]
    (line,) = profile_drift(rows, [first, refit], window=50)
    assert (line.profile_hash, line.scores, line.status) == (refit.content_hash, 60, DriftStatus.OK)


class _Clock(datetime):
    current = T0

    @classmethod
    def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
        return cls.current


def test_mirage_report_pollution_prints_the_stale_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mirage_guard.adapters.cli import app

    profile = _profile()
    profile_dir = tmp_path / "profiles"
    ProfileStore(profile_dir).save(profile)
    url = f"sqlite:///{tmp_path / 'decisions.db'}"
    log = DecisionLog(url)
    monkeypatch.setattr(decision_log_module, "datetime", _Clock)
    turn = Turn(id="t0", role=Role.USER, content="I like tea.")
    for i, s in enumerate([*HEALTHY, *SHIFTED]):
        _Clock.current = T0 + timedelta(minutes=i)
        decision = Decision(
            candidate=Candidate(id=f"c{i}", text="Likes coffee"),
            provenance=Provenance.GENERATED,
            action=Action.QUARANTINE,
            source_turn_id=None,
            similarity=0.1,
            evidence_span=None,
            score=float(s),
            threshold=profile.oi_threshold,
            profile_id=profile.profile_id,
            calibrated=True,
            reasons=[_scored(profile)],
        )
        log.record(
            tenant="acme",
            scope=MemoryScope(user_id="u1"),
            turns=[turn],
            written=[WrittenDecision(decision=decision)],
            request_id=f"r{i}",
            writer_model=MODEL,
        )
    log.close()
    monkeypatch.undo()
    out = tmp_path / "report" / "pollution.html"
    args = ["report", "pollution", "--database-url", url, "--out", str(out)]
    args += ["--profile-dir", str(profile_dir), "--drift-window", "50"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    markdown = out.with_suffix(".md").read_text()
    assert "## Calibration drift" in markdown
    assert f"- profile for {MODEL} is stale since 2026-11-20 " in markdown
    assert f"profile for {MODEL} is stale since" in out.read_text()
    (drift,) = json.loads(out.with_suffix(".json").read_text())["profile_drift"]
    assert drift["status"] == "stale"
    assert drift["profile_hash"] == profile.content_hash
