"""`mirage calibrate job` end to end: a scripted writer model self-audits labelled claims, the
profile is fitted (with its score distribution) into a running sidecar's MIRAGE_PROFILE_DIR, and
the sidecar, reached over real HTTP on loopback, reloads it and scores with it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app as cli_app
from mirage_guard.adapters.server import create_app
from mirage_guard.calibration import packaged
from mirage_guard.guard import Guard, GuardSettings, Label
from mirage_guard.guard.scoring import CalibrationProfile
from mirage_guard.prompts import load_prompt
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import labelling_llm
from tests.fakes.mem0 import InMemoryStore

pytestmark = pytest.mark.slow  # the fit featurises claims with the shipped MiniLM linker

WRITER = "mock/calibrated-writer"
AUDITOR = "mock/independent-auditor"
ADMIN_KEY = "job-admin-key"


def _subset_claims(out: Path, train: int = 2, dev: int = 1) -> Path:
    rows = [json.loads(x) for x in packaged("claims.jsonl").read_text().splitlines() if x]
    by_persona: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_persona.setdefault(str(row["persona_id"]), []).append(row)
    picked: list[dict[str, Any]] = []
    for split, n in (("train", train), ("dev", dev)):
        for p in sorted(p for p, rs in by_persona.items() if rs[0]["split"] == split)[:n]:
            picked.extend(by_persona[p])
    out.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(params=["self-audit", "independent auditor"])
def settings(
    request: pytest.FixtureRequest, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> GuardSettings:
    env = {
        "MIRAGE_DATA_DIR": str(data_dir),
        "MIRAGE_WRITER_MODEL": WRITER,
        "MIRAGE_AUDIT_MODE": "separate",
        "MIRAGE_PROFILE_DIR": str(tmp_path / "profiles"),
        "MIRAGE_ADMIN_KEYS": ADMIN_KEY,
    }
    if request.param == "independent auditor":
        env["MIRAGE_AUDITOR_MODEL"] = AUDITOR
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # what the job reads, like the sidecar
    return GuardSettings()


@pytest.fixture
def sidecar_url(settings: GuardSettings) -> Iterator[str]:
    writer = labelling_llm(Label.GROUNDED, model=WRITER)
    auditor = labelling_llm(Label.GROUNDED, model=AUDITOR) if settings.auditor_model else None
    guard = Guard.from_settings(
        settings, writer_llm=writer, auditor_llm=auditor, embedder=HashingEmbedder()
    )
    app = create_app(
        settings,
        guard=guard,
        backend=InMemoryStore(),
        writer_llm=writer,
    )
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline, "the sidecar did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_job_fits_the_writers_profile_and_the_running_sidecar_reloads_it(
    settings: GuardSettings, sidecar_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the model whose labels the guard scores: the writer, or the independent auditor
    labeller = settings.auditor_model or WRITER

    def scripted(model: str, **_: Any) -> Any:
        assert model == labeller  # the configured model, nothing else
        return labelling_llm(lambda cid: Label.GROUNDED, model=model)

    monkeypatch.setattr("mirage_guard.adapters.cli._calibrate.create_llm", scripted)
    before = httpx.get(f"{sidecar_url}/v1/profiles").json()["guard"]
    assert before["audit_profile"] is None  # uncalibrated until the job has run

    claims = _subset_claims(tmp_path / "claims.jsonl")
    args = ["calibrate", "job", "--reload-url", sidecar_url, "--data", str(claims)]
    args += ["--work-dir", str(tmp_path / "work"), "--concurrency", "2", "--reload-each-address"]
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code == 0, result.output
    assert f"sidecar reloaded ({sidecar_url})" in result.output  # 127.0.0.1: one address

    assert settings.profile_dir is not None
    (path,) = settings.profile_dir.glob("*.json")
    profile = CalibrationProfile.model_validate_json(path.read_text())
    assert profile.writer_model == labeller
    # asked as the guard will ask it: an auditor is told another model wrote the entries
    prompt = "audit_independent" if settings.auditor_model else "self_audit"
    assert profile.prompt_version == load_prompt(prompt).ref
    assert profile.score_distribution is not None  # drift can be measured against it
    assert profile.score_distribution.n == profile.fitted_on.n_examples
    # the dev claims decided by the guard with the new profile, as `guard eval` shows them
    assert profile.metrics["dev_guard_n"] == profile.metrics["dev_n"]
    assert "guard eval on claims.jsonl [dev]" in " ".join(result.output.split())

    listed = httpx.get(f"{sidecar_url}/v1/profiles").json()
    after = listed["guard"]
    assert after["audit_profile"] == profile.profile_id
    (summary,) = [p for p in listed["profiles"] if p["profile_id"] == profile.profile_id]
    assert summary["guard_held_out"] == {
        k: v for k, v in profile.metrics.items() if k.startswith("dev_guard_")
    }
    assert summary["guard_held_out"]["dev_guard_n"] == profile.metrics["dev_n"]
    assert after["auditor_model"] == settings.auditor_model
    metrics = httpx.get(f"{sidecar_url}/metrics").text
    assert f'mirage_guard_profile_drift{{model="{WRITER}"}} NaN' in metrics  # no live score yet


def test_job_refuses_a_guard_it_cannot_calibrate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRAGE_AUDIT_MODE", "inline")
    monkeypatch.delenv("MIRAGE_WRITER_MODEL", raising=False)
    result = CliRunner().invoke(cli_app, ["calibrate", "job"])
    assert result.exit_code == 2
    assert "MIRAGE_WRITER_MODEL" in result.output
    assert "MIRAGE_AUDIT_MODE" in result.output


def test_each_address_lists_the_url_once_per_resolved_address() -> None:
    from mirage_guard.adapters.cli._calibrate_job import each_address

    urls = each_address("http://localhost:8765")
    assert "http://127.0.0.1:8765" in urls
    assert all(u in {"http://127.0.0.1:8765", "http://[::1]:8765"} for u in urls)
    assert each_address("http://127.0.0.1:9/base") == ["http://127.0.0.1:9/base"]


def test_a_fit_without_dev_claims_records_no_held_out_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With verdicts of train claims only, `calibrate fit` scored the train claims again and
    recorded them as the dev figures (`dev_auroc 1.000`, shown by `calibrate list`). It records
    cross-validated ones instead, by conversation."""
    monkeypatch.setattr(
        "mirage_guard.adapters.cli._calibrate.create_llm",
        lambda model, **_: labelling_llm(lambda cid: Label.GROUNDED, model=model),
    )
    claims = _subset_claims(tmp_path / "claims.jsonl", train=2, dev=0)
    verdicts, profiles = tmp_path / "v.jsonl", tmp_path / "profiles"
    runner = CliRunner()
    audited = runner.invoke(
        cli_app,
        ["calibrate", "audit", "--model", WRITER, "--data", str(claims), "--out", str(verdicts)],
    )
    assert audited.exit_code == 0, audited.output
    args = ["calibrate", "fit", "--verdicts", str(verdicts), "--data", str(claims)]
    fitted = runner.invoke(cli_app, [*args, "--profile-dir", str(profiles)])
    assert fitted.exit_code == 0, fitted.output
    said = " ".join(fitted.output.split())
    assert "no claim of a dev split has a verdict: held-out figures by 2-fold" in said
    (path,) = profiles.glob("*.json")
    profile = CalibrationProfile.model_validate_json(path.read_text())
    assert not [k for k in profile.metrics if k.startswith("dev_")]
    # held out instead by cross-validation over the conversations, each fold fitted on the other
    assert (profile.metrics["heldout_folds"], profile.metrics["heldout_personas"]) == (2.0, 2.0)
    assert profile.metrics["heldout_guard_n"] == profile.fitted_on.n_examples  # every claim
    listed = runner.invoke(cli_app, ["calibrate", "list", "--profile-dir", str(profiles)])
    assert listed.exit_code == 0, listed.output
    assert "1.000" not in listed.output
