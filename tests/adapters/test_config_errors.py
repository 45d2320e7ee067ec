"""What a production engineer gets wrong in the configuration is a ConfigError naming the
setting, raised when the memory is built, never a raw pydantic, SQLAlchemy, Qdrant or OS error.

Found by an engineer integrating the library on 2026-12-07 (each case below raised one of those
before)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters import Mem0Backend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters.cli import app
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import ConfigError, MemoryNotFoundError
from tests.fakes.embedder import HashingEmbedder


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("MIRAGE_STATED_MIN", "nan"),
        ("MIRAGE_STATED_MIN", "-0.1"),
        ("MIRAGE_AUDIT_TIMEOUT_S", "inf"),
        ("MIRAGE_AUDIT_MODE", "sometimes"),
        ("MIRAGE_SUPPORT_PRECISION", "fp16"),
    ],
)
def test_a_bad_environment_value_is_a_config_error_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError, match=f"^{var}: "):
        GuardSettings.from_env()
    with pytest.raises(ConfigError, match=f"^{var}: "):
        Guard.from_settings(embedder=HashingEmbedder())


def test_a_profile_dir_that_is_a_file_is_refused_and_a_missing_one_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a_file = tmp_path / "profiles"
    a_file.write_text("x")
    with pytest.raises(ConfigError, match="MIRAGE_PROFILE_DIR"):
        Guard.from_settings(GuardSettings(profile_dir=a_file), embedder=HashingEmbedder())
    with caplog.at_level(logging.WARNING, logger="mirage.guard"):
        Guard.from_settings(
            GuardSettings(profile_dir=tmp_path / "typo"), embedder=HashingEmbedder()
        ).close()
    assert "does not exist: only the shipped profiles are used" in caplog.text


def test_the_cli_refuses_a_profile_dir_that_does_not_exist(tmp_path: Path) -> None:
    for args in (["calibrate", "list"], ["guard", "eval"], ["calibrate", "stated-floor"]):
        result = CliRunner().invoke(app, [*args, "--profile-dir", str(tmp_path / "typo")])
        assert result.exit_code == 2, args
        assert "does not exist" in " ".join(result.output.replace("│", " ").split())


async def test_an_unusable_data_dir_or_one_in_use_is_a_config_error(tmp_path: Path) -> None:
    embedder = HashingEmbedder(384)  # the store's size
    a_file = tmp_path / "data"
    a_file.write_text("x")
    for where in (a_file, a_file / "below"):
        with pytest.raises(ConfigError, match="MIRAGE_DATA_DIR"):
            Mem0Backend.embedded(where, embedder=embedder)
    first = Mem0Backend.embedded(tmp_path / "store", embedder=embedder)
    try:
        with pytest.raises(ConfigError, match="open in another guarded memory"):
            Mem0Backend.embedded(tmp_path / "store", embedder=embedder)
    finally:
        await first.aclose()


@pytest.mark.parametrize("url", ["notaurl", "nosuchdb://x"])
def test_a_database_url_sqlalchemy_cannot_open_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="MIRAGE_DATABASE_URL"):
        DecisionLog.from_settings(GuardSettings(database_url=url))


def test_an_unknown_memory_is_also_the_value_error_mem0_raises() -> None:
    with pytest.raises(ValueError, match="not found"):
        raise MemoryNotFoundError("m1")
