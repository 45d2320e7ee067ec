"""Memory-pollution report: hand-computed figures on a real decision log, privacy, time windows,
the empty case (an explicit "No decisions" page, exit code 0) and a headless-chromium render."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer import Typer
from typer.testing import CliRunner

import mirage_guard.adapters._decision_log as decision_log_module
from mirage_guard.adapters._decision_log import (
    DecisionLog,
    LoggedDecision,
    MemoryScope,
    WrittenDecision,
)
from mirage_guard.adapters._pollution import (
    Granularity,
    PollutionSummary,
    summarize,
)
from mirage_guard.adapters._pollution_report import (
    Regenerate,
    load_decisions,
    mask_url,
    parse_when,
    regenerate_commands,
    render_html,
    write_report,
)
from mirage_guard.guard import (
    Action,
    Candidate,
    Decision,
    Provenance,
    Reason,
    ReasonCode,
    Role,
    Turn,
    describe_reason_code,
    reason,
)
from mirage_guard.guard.errors import ConfigError, InputError

T0 = datetime(2026, 11, 2, 9, 15, tzinfo=UTC)
T1 = datetime(2026, 11, 2, 10, 40, tzinfo=UTC)
T2 = datetime(2026, 11, 2, 12, 5, tzinfo=UTC)
PROFILE = reason(ReasonCode.SCORED_WITH_PROFILE, profile_id="evidence-v1")
UNCAL = reason(ReasonCode.UNCALIBRATED_WRITER, writer_model="mock/writer-b")
UNDECIDABLE = reason(ReasonCode.SCORE_UNDECIDABLE)


def _stated(p: float) -> Reason:
    return reason(ReasonCode.STATED_SCORE, p_stated=p, threshold=0.7)


def _oi(p: float) -> Reason:
    return reason(ReasonCode.OVER_INFERENCE_SCORE, p_oi=p, threshold=0.6)


def _linked(turn_id: str) -> Reason:
    return reason(ReasonCode.LINKED_NOT_RESTATEMENT, turn_id=turn_id)


USER_IDS = ("user-alice-7731", "user-bob-2200", "user-carol-9001")
TENANTS = ("acme-corp", "globex-industries")
TURN_TEXT = "I went rock climbing last weekend with my sister in Boulder."


@dataclass(frozen=True)
class Spec:
    """One decision to log: provenance, action, score, calibrated, extra reasons, memory text."""

    provenance: Provenance
    action: Action
    score: float | None
    calibrated: bool
    reasons: tuple[Reason | str, ...]
    text: str


# (tenant, user id, writer model, time, decisions)
KNOWN: tuple[tuple[str, str, str, datetime, tuple[Spec, ...]], ...] = (
    (
        TENANTS[0],
        USER_IDS[0],
        "mock/writer-a",
        T0,
        (
            Spec(Provenance.STATED, Action.STORE, 0.05, True, (_stated(0.912),),
                 "Works as a pediatric nurse in Denver"),
            Spec(Provenance.STATED, Action.STORE, 0.15, True, (_stated(0.801),),
                 "Went rock climbing last weekend"),
            Spec(Provenance.INFERRED, Action.STORE_AS_HYPOTHESIS, 0.35, True,
                 (_linked("u2"),), "Probably enjoys outdoor sports"),
            Spec(Provenance.GENERATED, Action.QUARANTINE, 0.85, True,
                 (_oi(0.85),), "Has two older sisters in Boston"),
        ),
    ),
    (
        TENANTS[0],
        USER_IDS[1],
        "mock/writer-b",
        T1,
        (
            Spec(Provenance.INFERRED, Action.STORE_AS_HYPOTHESIS, 0.45, False,
                 (UNCAL, _linked("bob-turn-9")), "May be a night owl"),
            Spec(Provenance.GENERATED, Action.QUARANTINE, 0.95, False,
                 (UNCAL, _oi(0.95)), "Votes progressive"),
            Spec(Provenance.GENERATED, Action.BLOCK, None, False,
                 (UNCAL, UNDECIDABLE), "Drives an electric hatchback"),
        ),
    ),
    (
        TENANTS[1],
        USER_IDS[2],
        "mock/writer-b",
        T2,
        (
            Spec(Provenance.STATED, Action.STORE, 0.25, False,
                 (UNCAL, _stated(0.75)), "Owns a cat named Pixel"),
            # a hostile reason quoting the memory text and the user id: both must be scrubbed
            Spec(Provenance.GENERATED, Action.QUARANTINE, 1.0, False,
                 (UNCAL, _oi(1.0),
                  "note: Is looking for an adventure partner said by user-carol-9001"),
                 "Is looking for an adventure partner"),
        ),
    ),
)  # fmt: skip
MEMORY_TEXTS = tuple(s.text for *_, specs in KNOWN for s in specs)


class _Clock(datetime):
    """``datetime`` whose ``now`` is set by the test (the decision log stamps rows with it)."""

    current = T0

    @classmethod
    def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
        return cls.current


def _decision(i: int, spec: Spec, turn_id: str) -> Decision:
    return Decision(
        candidate=Candidate(id=f"cand-{i}", text=spec.text),
        provenance=spec.provenance,
        action=spec.action,
        source_turn_id=None if spec.provenance is Provenance.GENERATED else turn_id,
        similarity=0.5,
        evidence_span=None,
        score=spec.score,
        threshold=0.6,
        profile_id="evidence-v1",
        calibrated=spec.calibrated,
        reasons=[PROFILE, *spec.reasons],
    )


def _record(
    log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
    writes: tuple[tuple[str, str, str, datetime, tuple[Spec, ...]], ...],
) -> None:
    i = 0
    with monkeypatch.context() as mp:
        mp.setattr(decision_log_module, "datetime", _Clock)
        for n, (tenant, user_id, model, at, specs) in enumerate(writes):
            turn = Turn(id=f"t{n}", role=Role.USER, content=TURN_TEXT)
            written = []
            for spec in specs:
                i += 1
                decision = _decision(i, spec, turn.id)
                written.append(WrittenDecision(decision=decision, memory_id=None))
            _Clock.current = at
            log.record(
                tenant=tenant,
                scope=MemoryScope(user_id=user_id, agent_id=f"agent-of-{user_id}"),
                turns=[turn],
                written=written,
                request_id=f"req-{n}",
                writer_model=model,
            )


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'decisions.db'}"
    log = DecisionLog(url)
    _record(log, monkeypatch, KNOWN)
    log.close()
    return url


@pytest.fixture
def rows(db_url: str) -> list[LoggedDecision]:
    return load_decisions(db_url)


@pytest.fixture
def summary(rows: list[LoggedDecision]) -> PollutionSummary:
    return summarize(rows)


REGEN = Regenerate("mirage report pollution --out pollution.html", None)


# -- hand-computed figures --------------------------------------------------------------------


def test_totals_and_shares_by_provenance_and_action(summary: PollutionSummary) -> None:
    assert summary.decisions == 9
    assert summary.by_provenance == {
        Provenance.STATED: 3,
        Provenance.INFERRED: 2,
        Provenance.GENERATED: 4,
    }
    assert summary.provenance_share[Provenance.GENERATED] == pytest.approx(4 / 9)
    assert summary.provenance_share[Provenance.STATED] == pytest.approx(3 / 9)
    assert summary.by_action == {
        Action.STORE: 3,
        Action.STORE_AS_HYPOTHESIS: 2,
        Action.QUARANTINE: 3,
        Action.BLOCK: 1,
    }
    assert summary.action_share[Action.BLOCK] == pytest.approx(1 / 9)
    assert summary.generated_share == pytest.approx(4 / 9)


def test_memory_pollution_hypotheses_quarantine_block_uncalibrated(
    summary: PollutionSummary,
) -> None:
    # written = 3 facts + 2 hypotheses + 3 quarantined; the blocked one is not written
    assert summary.written == 8
    assert summary.memory_pollution == pytest.approx(3 / 8)
    assert summary.visible_pollution == 0.0  # generated never reaches facts or hypotheses
    assert summary.facts == 3
    assert summary.facts_not_stated_share == 0.0
    assert all(c.ok for c in summary.invariants)
    assert summary.hypotheses == 2
    assert summary.hypothesis_share == pytest.approx(2 / 8)
    assert (summary.quarantined, summary.blocked) == (3, 1)
    assert summary.uncalibrated == 5
    assert summary.uncalibrated_share == pytest.approx(5 / 9)


def test_per_writer_model(summary: PollutionSummary) -> None:
    b, a = summary.by_model  # most decisions first
    assert (b.label, b.decisions, b.stated, b.inferred, b.generated) == (
        "mock/writer-b",
        5,
        1,
        1,
        3,
    )
    assert (b.written, b.quarantined, b.blocked, b.hypotheses) == (4, 2, 1, 1)
    assert b.memory_pollution == pytest.approx(2 / 4)
    assert b.generated_share == pytest.approx(3 / 5)
    assert b.uncalibrated_share == 1.0
    assert (a.label, a.decisions, a.stated, a.inferred, a.generated) == (
        "mock/writer-a",
        4,
        2,
        1,
        1,
    )
    assert a.memory_pollution == pytest.approx(1 / 4)
    assert a.uncalibrated_share == 0.0


def test_per_tenant_is_opaque_and_only_with_more_than_one(
    summary: PollutionSummary, rows: list[LoggedDecision]
) -> None:
    assert summary.tenants == 2
    t1, t2 = summary.by_tenant
    assert (t1.label, t1.decisions, t1.generated, t1.written) == ("tenant 1", 7, 3, 6)
    assert t1.memory_pollution == pytest.approx(2 / 6)
    assert (t2.label, t2.decisions, t2.generated, t2.written) == ("tenant 2", 2, 1, 2)
    assert t2.memory_pollution == pytest.approx(1 / 2)
    one_tenant = summarize([r for r in rows if r.tenant == TENANTS[0]])
    assert one_tenant.tenants == 1
    assert one_tenant.by_tenant == []


def test_score_histograms_by_provenance(summary: PollutionSummary) -> None:
    hist = {h.provenance: h for h in summary.score_histograms}
    assert hist[Provenance.STATED].edges[0] == 0.0
    assert hist[Provenance.STATED].edges[-1] == 1.0
    assert hist[Provenance.STATED].counts == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    assert hist[Provenance.INFERRED].counts == [0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    # 0.95 and 1.0 share the last bin; the undecidable one is counted apart
    assert hist[Provenance.GENERATED].counts == [0, 0, 0, 0, 0, 0, 0, 0, 1, 2]
    assert hist[Provenance.GENERATED].unscored == 1
    assert hist[Provenance.STATED].mean == pytest.approx(0.15)
    assert hist[Provenance.GENERATED].mean == pytest.approx((0.85 + 0.95 + 1.0) / 3)


def test_hourly_time_series_fills_empty_hours(summary: PollutionSummary) -> None:
    assert summary.granularity is Granularity.HOUR
    got = [
        (b.start.hour, b.decisions, b.generated, b.generated_share, b.written, b.memory_pollution)
        for b in summary.time_series
    ]
    assert got[0][:5] == (9, 4, 1, 0.25, 4)
    assert got[1][:3] == (10, 3, 2)
    assert got[1][3] == pytest.approx(2 / 3)
    assert got[1][4:] == (2, 0.5)  # block is not written: hypothesis + quarantined
    assert got[2] == (11, 0, 0, None, 0, None)
    assert got[3] == (12, 2, 1, 0.5, 2, 0.5)
    assert [b.start.tzinfo for b in summary.time_series] == [UTC] * 4


def test_daily_time_series_beyond_three_days(rows: list[LoggedDecision]) -> None:
    late = rows[0].model_copy(update={"created_at": T0 + timedelta(days=4)})
    s = summarize([*rows, late])
    assert s.granularity is Granularity.DAY
    assert [(b.start.day, b.decisions) for b in s.time_series] == [(2, 9), (3, 0), (4, 0), (5, 0),
                                                                  (6, 1)]  # fmt: skip


def test_top_reasons_are_counted_by_code(summary: PollutionSummary) -> None:
    got = [(r.code, r.decisions) for r in summary.top_reasons]
    assert got == [
        (ReasonCode.SCORED_WITH_PROFILE, 9),
        (ReasonCode.UNCALIBRATED_WRITER, 5),
        (ReasonCode.OVER_INFERENCE_SCORE, 3),
        (ReasonCode.STATED_SCORE, 3),
        (ReasonCode.LINKED_NOT_RESTATEMENT, 2),
        (ReasonCode.NOTE, 1),
        (ReasonCode.SCORE_UNDECIDABLE, 1),
    ]
    assert summary.top_reasons[1].share == pytest.approx(5 / 9)
    # what a code means, never its parameters (turn ids, scores, a caller's free text)
    assert [r.reason for r in summary.top_reasons] == [
        describe_reason_code(code) for code, _ in got
    ]


@dataclass(frozen=True)
class _Row:
    """An 'equivalent row' that LoggedDecision's validators would not stop: a non-stated fact."""

    provenance: Provenance = Provenance.INFERRED
    action: Action = Action.STORE
    tenant: str = "t"
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    candidate_text: str = "x"
    source_turn_id: str | None = None
    score: float | None = 1.0
    calibrated: bool = True
    reasons: list[str] = field(default_factory=list)
    writer_model: str | None = None
    created_at: datetime = T0


def test_invariant_violations_are_reported_not_hidden(rows: list[LoggedDecision]) -> None:
    s = summarize([*rows, _Row()])
    assert s.facts == 4
    assert s.facts_not_stated_share == pytest.approx(1 / 4)
    checks = {c.name: c.violations for c in s.invariants}
    assert checks == {"facts_not_stated": 1, "inferred_without_link": 1}
    assert s.by_model[-1].label == "(none)"
    page = render_html(s, REGEN, "sqlite://")
    assert "VIOLATED" in page
    assert "VIOLATED" not in render_html(summarize(rows), REGEN, "sqlite://")


# -- time windows -----------------------------------------------------------------------------


def test_time_window_in_the_database_query(db_url: str) -> None:
    got = load_decisions(db_url, since=T1, until=T1)  # bounds inclusive
    assert [r.candidate_id for r in got] == ["cand-5", "cand-6", "cand-7"]
    assert len(load_decisions(db_url, since=T1 + timedelta(seconds=1))) == 2
    assert len(load_decisions(db_url, until=T1 - timedelta(seconds=1))) == 4


def test_time_window_in_summarize(rows: list[LoggedDecision]) -> None:
    s = summarize(rows, since=T1, until=T2 - timedelta(minutes=1))
    assert s.decisions == 3
    assert s.memory_pollution == 0.5
    assert s.since == T1
    assert (s.first_decision_at, s.last_decision_at) == (T1, T1)
    # an offset-aware bound is converted to UTC, not read as UTC wall time
    east = summarize(rows, since=datetime.fromisoformat("2026-11-02T13:00:00+02:00"))
    assert east.decisions == 2  # 11:00 UTC; read as 13:00 UTC it would be 0


def test_parse_when() -> None:
    now = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    assert parse_when("24h", now) == now - timedelta(hours=24)
    assert parse_when("7d", now) == now - timedelta(days=7)
    assert parse_when("2026-11-02", now) == datetime(2026, 11, 2, tzinfo=UTC)
    end = parse_when("2026-11-02", now, end_of_day=True)
    assert (end.date().day, end.hour, end.minute) == (2, 23, 59)
    assert parse_when("2026-11-02T11:40:00+01:00", now) == T1
    assert parse_when("2026-11-02T10:40:00", now) == T1  # no offset: UTC
    with pytest.raises(InputError, match="not an ISO date/time"):
        parse_when("last tuesday", now)


def _cli() -> Typer:
    """``mirage report pollution`` as a user types it (the report app has more than one command)."""
    from mirage_guard.adapters.cli import app

    return app


def test_cli_window_writes_html_markdown_json(db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r" / "pollution.html"
    args = ["--database-url", db_url, "--out", str(out)]
    window = ["--since", "2026-11-02T10:00:00", "--until", "2026-11-02T11:00:00"]
    result = CliRunner().invoke(_cli(), ["report", "pollution", *args, *window])
    assert result.exit_code == 0, result.output
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["decisions"] == 3
    assert data["memory_pollution"] == 0.5
    page = out.read_text()
    assert "mirage report pollution --database-url" in page
    assert "--since 2026-11-02T10:00:00 --until 2026-11-02T11:00:00" in page
    md = out.with_suffix(".md").read_text()
    assert "| memory pollution (generated / written) | 50.0 % |" in md


def test_cli_open_window_prints_a_pinned_command(db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "pollution.html"
    result = CliRunner().invoke(
        _cli(), ["report", "pollution", "--database-url", db_url, "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert f"--until {T2.isoformat()}" in page  # the last decision this run saw
    assert json.loads(out.with_suffix(".json").read_text())["decisions"] == 9


# -- empty log and errors ---------------------------------------------------------------------


def test_empty_window_renders_an_explicit_no_decisions_page(db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "empty.html"
    result = CliRunner().invoke(
        _cli(),
        [
            "report",
            "pollution",
            "--database-url",
            db_url,
            "--out",
            str(out),
            "--since",
            "2027-01-01",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "no decisions in this window" in result.output
    page = out.read_text()
    assert "No decisions in this window." in page
    assert "<svg" not in page
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["decisions"] == 0
    assert data["memory_pollution"] is None
    assert data["time_series"] == []


def test_empty_summary_has_no_shares() -> None:
    s = summarize([])
    assert s.is_empty
    assert (s.memory_pollution, s.facts_not_stated_share, s.hypothesis_share) == (None,) * 3
    assert s.by_model == []
    assert s.top_reasons == []
    assert s.tenants == 0
    assert "No decisions in this window." in render_html(s, REGEN, "sqlite://")


def test_missing_sqlite_file_is_an_error_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "decisions.db"
    with pytest.raises(ConfigError, match="no decision log"):
        load_decisions(f"sqlite:///{missing}")
    result = CliRunner().invoke(
        _cli(),
        [
            "report",
            "pollution",
            "--database-url",
            f"sqlite:///{missing}",
            "--out",
            str(tmp_path / "x.html"),
        ],
    )
    assert result.exit_code == 2
    assert not missing.exists()
    assert not (tmp_path / "x.html").exists()


def test_since_after_until_is_refused(db_url: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        _cli(),
        ["report", "pollution", "--database-url", db_url, "--out", str(tmp_path / "x.html"),
         "--since", "2026-11-03", "--until", "2026-11-02"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "is after --until" in result.output


# -- privacy ----------------------------------------------------------------------------------


def test_no_memory_text_user_ids_or_tenant_names_in_any_output(
    summary: PollutionSummary, tmp_path: Path
) -> None:
    files = write_report(summary, tmp_path / "pollution.html", REGEN, "sqlite:///x.db")
    outputs = {p.suffix: p.read_text() for p in files}
    assert set(outputs) == {".html", ".md", ".json"}
    forbidden = [*MEMORY_TEXTS, *USER_IDS, *TENANTS, TURN_TEXT, "agent-of-", "bob-turn-9"]
    for suffix, text in outputs.items():
        leaked = [f for f in forbidden if f.lower() in text.lower()]
        assert leaked == [], f"{suffix} leaks {leaked}"
    assert "mock/writer-b" in outputs[".html"]  # models are shown: low-cardinality labels


def test_database_password_is_masked(tmp_path: Path) -> None:
    url = "postgresql://guard:s3cret-pw@db.invalid/decisions"
    assert mask_url(url) == "postgresql://guard:***@db.invalid/decisions"
    regen = regenerate_commands(
        database_url=url,
        out=Path("p.html"),
        since_arg="7d",
        until_arg=None,
        since=T0,
        until=None,
        last_decision_at=T2,
    )
    assert regen.command == (
        "mirage report pollution --database-url 'postgresql://guard:***@db.invalid/decisions' "
        "--out p.html --since 7d"
    )
    assert regen.pinned is not None
    assert regen.pinned.endswith(f"--since {T0.isoformat()} --until {T2.isoformat()}")
    assert "s3cret-pw" not in regen.pinned


def test_page_is_self_contained(summary: PollutionSummary) -> None:
    page = render_html(summary, REGEN, "sqlite:///x.db")
    assert page.count("<svg") == 6  # models, actions, time series, three histograms
    for external in ("<script", "<link", "@import", "src=", "url("):
        assert external not in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page


# -- browser ----------------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"


@pytest.mark.browser
def test_chromium_renders_the_page(summary: PollutionSummary, tmp_path: Path) -> None:
    assert shutil.which(CHROMIUM), f"needs Debian chromium at {CHROMIUM} (-m 'not browser')"
    files = write_report(summary, tmp_path / "pollution.html", REGEN, "sqlite:///x.db")
    png = tmp_path / "pollution.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--window-size=1280,2000", f"--screenshot={png}", files.html.as_uri()],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    assert png.exists()
    assert png.stat().st_size > 10_000
    from PIL import Image  # Pillow comes with matplotlib (the `bench` extra)

    with Image.open(png) as im:
        rgb = im.convert("RGB")
        assert rgb.size == (1280, 2000)
        colours = rgb.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50  # not a blank or single-colour page
    by_colour = {c: n for n, c in colours}
    assert by_colour.get((0xF6, 0xF8, 0xFA), 0) > 10_000  # the page background
    assert by_colour.get((0xD5, 0x5E, 0x00), 0) > 500  # generated bars were drawn
    assert by_colour.get((0x00, 0x9E, 0x73), 0) > 500  # stated bars were drawn


def test_mirage_report_pollution_is_wired_into_the_cli(db_url: str, tmp_path: Path) -> None:
    from mirage_guard.adapters.cli import app

    out = tmp_path / "via-mirage.html"
    result = CliRunner().invoke(
        app, ["report", "pollution", "--database-url", db_url, "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.with_suffix(".json").read_text())["decisions"] == 9
