"""Reloading calibration profiles in a running sidecar: admin route and SIGHUP, atomic, recorded
in every decision, refused for a bad file or a profile the guard may not use."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from mirage_guard.adapters.server import create_app
from mirage_guard.guard import Guard, GuardSettings, ReasonCode
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode, ProfileStore
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import CONVERSATION, InMemoryStore
from tests.server.sidecar_setup import KEYS, A, echo_writer

WRITER = "mock/echo-writer"
ADMIN = {"Authorization": "Bearer admin-secret"}
RELOAD = "/v1/admin/profiles/reload"


def _profile(
    writer: str = WRITER, *, weight: float = 8.0, embedder: str | None = None
) -> CalibrationProfile:
    profile = make_profile(
        ProfileMode.SELF_AUDIT_INLINE,
        writer_model=writer,
        prompt_version=load_prompt("extract_candidates").ref,
        audit_weight=weight,
    )
    return profile.model_copy(update={"embedder": embedder}) if embedder else profile


@pytest.fixture
def client(make_client: Callable[..., TestClient], tmp_path: Path) -> TestClient:
    return make_client(
        audit_mode="inline",
        writer_model=WRITER,
        profile_dir=tmp_path / "profiles",
        admin_keys="admin-secret,second-admin",
    )


def _add(client: TestClient, **headers: str) -> list[dict[str, Any]]:
    r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"}, headers=headers)
    assert r.status_code == 200, r.text
    rows: list[dict[str, Any]] = client.get("/v1/decisions", headers=headers).json()["results"]
    return rows


def _scored_with(row: dict[str, Any]) -> dict[str, Any]:
    (scored,) = [r for r in row["reasons"] if r["code"] == ReasonCode.SCORED_WITH_PROFILE.value]
    params: dict[str, Any] = scored["params"]
    return params


def _save(tmp_path: Path, profile: CalibrationProfile) -> None:
    ProfileStore(tmp_path / "profiles").save(profile)


def test_reload_needs_an_admin_key(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    client = make_client(api_keys=KEYS, admin_keys="admin-secret", profile_dir=tmp_path)
    assert client.post(RELOAD).status_code == 401
    assert client.post(RELOAD, headers=A).status_code == 401  # a tenant key is no admin key
    wrong = client.post(RELOAD, headers={"Authorization": "Bearer admin-secreT"})
    assert wrong.status_code == 401
    assert wrong.json()["error"]["type"] == "unauthorized"
    assert client.post(RELOAD, headers=ADMIN).status_code == 200

    off = make_client(profile_dir=tmp_path)  # no MIRAGE_ADMIN_KEYS: the route is off
    r = off.post(RELOAD, headers=ADMIN)
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "forbidden"
    assert "MIRAGE_ADMIN_KEYS" in r.json()["detail"]


def test_reload_swaps_in_a_new_profile_and_each_decision_records_it(
    client: TestClient, tmp_path: Path
) -> None:
    before = _add(client)
    assert before
    assert not any(row["calibrated"] for row in before)

    profile = _profile()
    _save(tmp_path, profile)
    r = client.post(RELOAD, headers={"Authorization": "Bearer second-admin"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["changed"] is True
    assert body["trigger"] == "admin route"
    assert body["previous_audit_profile"] is None
    assert body["audit_profile"] == {
        "profile_id": profile.profile_id,
        "profile_hash": profile.content_hash,
    }
    listed = client.get("/v1/profiles").json()
    assert listed["guard"]["audit_profile"] == profile.profile_id
    (summary,) = [p for p in listed["profiles"] if p["profile_id"] == profile.profile_id]
    assert summary["profile_hash"] == profile.content_hash
    assert summary["fitted_score_distribution"] is False
    assert listed["drift"]["profile_hash"] == profile.content_hash
    assert listed["drift"]["status"] == "unknown"

    after = [row for row in _add(client) if row["id"] not in {b["id"] for b in before}]
    assert after
    for row in after:
        assert row["calibrated"] is True
        assert row["profile_id"] == profile.profile_id
        assert _scored_with(row)["profile_hash"] == profile.content_hash

    # a refit under the same id: the next decisions name the new version
    refit = _profile(weight=2.0)
    _save(tmp_path, refit)
    again = client.post(RELOAD, headers=ADMIN).json()
    assert again["previous_audit_profile"]["profile_hash"] == profile.content_hash
    assert again["audit_profile"]["profile_hash"] == refit.content_hash
    newest = _add(client)[0]
    assert _scored_with(newest)["profile_hash"] == refit.content_hash


def test_a_reload_that_changes_nothing_says_so(client: TestClient, tmp_path: Path) -> None:
    _save(tmp_path, _profile())
    assert client.post(RELOAD, headers=ADMIN).json()["changed"] is True
    assert client.post(RELOAD, headers=ADMIN).json()["changed"] is False


def test_a_bad_profile_file_is_refused_and_the_old_profile_stays(
    client: TestClient, tmp_path: Path
) -> None:
    good = _profile()
    _save(tmp_path, good)
    assert client.post(RELOAD, headers=ADMIN).status_code == 200
    (tmp_path / "profiles" / "half-written.json").write_text('{"profile_id": "x", ', "utf-8")
    r = client.post(RELOAD, headers=ADMIN)
    assert r.status_code == 409
    assert r.json()["error"]["type"] == "profile_error"
    assert "half-written.json" in r.json()["detail"]
    row = _add(client)[0]
    assert row["profile_id"] == good.profile_id
    assert _scored_with(row)["profile_hash"] == good.content_hash


def test_a_profile_the_guard_may_not_use_is_refused_and_the_old_one_stays(
    client: TestClient, tmp_path: Path
) -> None:
    good = _profile()
    _save(tmp_path, good)
    client.post(RELOAD, headers=ADMIN)
    # this model's key, but features of another embedder: never applied
    _save(tmp_path, _profile(embedder="other/embedder-768"))
    r = client.post(RELOAD, headers=ADMIN)
    assert r.status_code == 409
    assert "embedder" in r.json()["detail"]
    assert _scored_with(_add(client)[0])["profile_hash"] == good.content_hash


def test_another_models_profile_is_never_picked(client: TestClient, tmp_path: Path) -> None:
    _save(tmp_path, _profile("mock/another-writer"))
    body = client.post(RELOAD, headers=ADMIN).json()
    assert body["audit_profile"] is None
    assert body["profiles_loaded"] >= 2  # the shipped evidence-only one and the other model's
    assert not any(row["calibrated"] for row in _add(client))


def test_drift_gauge_is_unknown_for_a_profile_without_a_fitted_distribution(
    client: TestClient, tmp_path: Path
) -> None:
    _save(tmp_path, _profile())
    body = client.post(RELOAD, headers=ADMIN).json()
    assert body["drift"]["status"] == "unknown"
    _add(client)
    metrics = client.get("/metrics").text
    (line,) = [
        x
        for x in metrics.splitlines()
        if x.startswith(f'mirage_guard_profile_drift{{model="{WRITER}"')
    ]
    assert math.isnan(float(line.rsplit(" ", 1)[1]))  # unknown, never 0


async def test_sighup_reloads_the_profiles(
    data_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`mirage serve` passes reload_on_sighup=True; the handler runs on the app's event loop."""
    settings = GuardSettings(
        data_dir=data_dir,
        audit_mode="inline",
        writer_model=WRITER,
        profile_dir=tmp_path / "profiles",
    )
    app = create_app(
        settings,
        guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
        backend=InMemoryStore(),
        writer_llm=echo_writer(),
        reload_on_sighup=True,
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sidecar") as http:

            async def audit_profile() -> Any:
                return (await http.get("/v1/profiles")).json()["guard"]["audit_profile"]

            assert await audit_profile() is None
            profile = _profile()
            _save(tmp_path, profile)
            os.kill(os.getpid(), signal.SIGHUP)
            for _ in range(200):
                if await audit_profile() == profile.profile_id:
                    break
                await asyncio.sleep(0.02)
            assert await audit_profile() == profile.profile_id

            # a bad file on SIGHUP: logged and refused, the profile in use stays
            (tmp_path / "profiles" / "broken.json").write_text(json.dumps({"x": 1}), "utf-8")
            caplog.set_level("ERROR", logger="mirage.server")
            os.kill(os.getpid(), signal.SIGHUP)
            for _ in range(200):
                if any("refused" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.02)
            (refused,) = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
            assert "SIGHUP" in refused
            assert "broken.json" in refused
            assert await audit_profile() == profile.profile_id


def test_a_reload_that_leaves_the_audit_uncalibrated_says_why(
    client: TestClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A reload answered 200, `audit_profile: null`, and said nothing of the writer's audit now
    scored by no profile (a profile file replaced by another model's, a directory emptied)."""
    import logging

    with caplog.at_level(logging.WARNING, logger="mirage.server"):
        r = client.post(RELOAD, headers=ADMIN)
    assert r.status_code == 200, r.text
    said = r.json()["uncalibrated"]
    assert f"no calibration profile for the writer model {WRITER!r}" in said
    assert "self_audit_inline" in said
    assert any("after the profile reload" in rec.getMessage() for rec in caplog.records)
    _save(tmp_path, _profile())
    assert client.post(RELOAD, headers=ADMIN).json()["uncalibrated"] is None
