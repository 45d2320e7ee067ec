"""MIRAGE_SUPPORT_DIR / --support-dir: a retrained claim-support model used without copying it
into the installed package, checked like the shipped one, with the profile fitted for it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from mirage_guard.calibration import build_eval_guard
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import ProfileMismatchError, SupportModelError
from mirage_guard.guard.evidence import (
    WEIGHTS,
    CrossSupportModel,
    cross_model_dir,
    shared_cross_model,
    shared_minilm,
)

pytestmark = pytest.mark.slow


def _copy_of_shipped(tmp_path: Path, name: str = "mine") -> Path:
    out = tmp_path / name
    out.mkdir()
    for f in ("manifest.json", WEIGHTS):
        shutil.copy(cross_model_dir() / f, out / f)
    return out


def _retrained(tmp_path: Path) -> Path:
    """Other weights with a manifest that vouches for them (as `train-support` writes): one
    fp16 value of the head changed, so the file loads and its sha256 differs."""
    out = _copy_of_shipped(tmp_path, "retrained")
    from safetensors.torch import load_file, save_file

    state = load_file(str(out / WEIGHTS))
    state["classifier.bias"] = state["classifier.bias"] + 0.5
    save_file(state, str(out / WEIGHTS))
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    manifest["sha256"] = hashlib.sha256((out / WEIGHTS).read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    return out


def _support_path(guard: Guard) -> Path:
    model = guard.linker.support.model
    assert isinstance(model, CrossSupportModel)
    return model.path


def test_the_setting_points_the_guard_at_another_model_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = _copy_of_shipped(tmp_path)
    monkeypatch.setenv("MIRAGE_SUPPORT_DIR", str(mine))
    guard = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        assert _support_path(guard) == mine.resolve()
        # the same weights as the shipped ones, so the shipped profile is accepted and reads
        # them as it would the shipped folder's
        assert guard.linker.support_sha256 == shared_cross_model().sha256
    finally:
        guard.close()
    monkeypatch.delenv("MIRAGE_SUPPORT_DIR")
    shipped = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        assert _support_path(shipped) == cross_model_dir().resolve()
    finally:
        shipped.close()


def test_one_shared_model_per_folder(tmp_path: Path) -> None:
    mine = _copy_of_shipped(tmp_path)
    assert shared_cross_model(path=mine) is shared_cross_model(path=mine)
    assert shared_cross_model(path=mine) is not shared_cross_model()
    assert shared_cross_model(path=cross_model_dir()) is shared_cross_model()


def test_other_weights_without_their_profile_are_refused_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed: the shipped profile was fitted on the shipped model's outputs."""
    monkeypatch.setenv("MIRAGE_SUPPORT_DIR", str(_retrained(tmp_path)))
    with pytest.raises(ProfileMismatchError) as info:
        Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    assert info.value.field == "support model"
    with pytest.raises(ProfileMismatchError):  # the evaluation commands refuse it the same way
        build_eval_guard(
            profile_dir=None, writer_model=None, verdicts=None, verdict_model=None,
            verdict_prompt=None,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("missing", "is missing"),
        ("not-json", "is not JSON"),
        ("list", "is not a JSON object"),
        ("other-sha", "the manifest says"),
    ],
)
def test_a_broken_model_folder_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breakage: str, message: str
) -> None:
    folder = _copy_of_shipped(tmp_path)
    manifest = folder / "manifest.json"
    if breakage == "missing":
        (folder / WEIGHTS).unlink()
    elif breakage == "not-json":
        manifest.write_text("{not json", "utf-8")
    elif breakage == "list":
        manifest.write_text("[]", "utf-8")
    else:
        manifest.write_text(json.dumps({"sha256": "0" * 64}), "utf-8")
    monkeypatch.setenv("MIRAGE_SUPPORT_DIR", str(folder))
    with pytest.raises(SupportModelError, match=message):
        Guard.from_settings(GuardSettings(), embedder=shared_minilm())


def test_fit_evidence_and_eval_take_the_folder(tmp_path: Path) -> None:
    """The profile fitted with --support-dir records that model; eval with both scores."""
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app

    retrained = _retrained(tmp_path)
    claims = tmp_path / "claims.jsonl"
    packaged = Path(__file__).parents[2] / "benchmark" / "data" / "claims.jsonl"
    rows = [json.loads(line) for line in packaged.read_text("utf-8").splitlines()]
    personas = sorted({r["persona_id"] for r in rows})[:24]
    kept = [r for r in rows if r["persona_id"] in personas]
    claims.write_text("".join(json.dumps({**r, "split": "dev"}) + "\n" for r in kept), "utf-8")
    profiles = tmp_path / "profiles"
    runner = CliRunner()
    fitted = runner.invoke(
        app,
        ["calibrate", "fit-evidence", "--data", str(claims), "--split", "dev",
         "--eval-split", "dev", "--out", str(profiles / "evidence-only.json"),
         "--support-dir", str(retrained)],
    )  # fmt: skip
    assert fitted.exit_code == 0, fitted.output
    profile = json.loads((profiles / "evidence-only.json").read_text("utf-8"))
    manifest = json.loads((retrained / "manifest.json").read_text("utf-8"))
    assert profile["support_model"] == manifest["sha256"] != shared_cross_model().sha256
    scored = runner.invoke(
        app,
        ["guard", "eval", "--data", str(claims), "--profile-dir", str(profiles),
         "--support-dir", str(retrained), "--json"],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["n"] == len(kept)
    # the profile with the shipped model: refused, nothing scored
    refused = runner.invoke(
        app, ["guard", "eval", "--data", str(claims), "--profile-dir", str(profiles)]
    )
    assert refused.exit_code == 1
    assert "fit-evidence --support-dir" in " ".join(refused.output.split())
    broken = runner.invoke(
        app,
        ["calibrate", "fit-evidence", "--data", str(claims), "--split", "dev",
         "--out", str(tmp_path / "never.json"), "--support-dir", str(tmp_path / "nowhere")],
    )  # fmt: skip
    assert broken.exit_code == 1
    assert "is missing" in " ".join(broken.output.split())
    assert not (tmp_path / "never.json").exists()
