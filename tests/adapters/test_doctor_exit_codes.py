"""``mirage doctor``'s exit status tells a finding from trouble: 0 no problem, 1 problems remain,
2 it cannot check (as grep and diff); every other command keeps 1 for an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import Result
from typer.testing import CliRunner

from mirage_guard.adapters import TENANT_KEY
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._mem0 import Mem0Backend
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.adapters.cli import app as root
from mirage_guard.adapters.cli._doctor import app as doctor
from mirage_guard.guard.errors import BackendUnavailableError
from tests.fakes.mem0 import InMemoryStore

# the command as a user types it (through the root group and its error handler), and the
# sub-app alone (no root handler to fall back on)
ENTRIES = {"root": (root, ["doctor"]), "sub-app": (doctor, [])}


@pytest.fixture(params=sorted(ENTRIES))
def run_doctor(request: pytest.FixtureRequest) -> Callable[..., Result]:
    app, prefix = ENTRIES[request.param]

    def run(*args: str) -> Result:
        return CliRunner().invoke(app, [*prefix, *args])

    return run


def _cannot_check(result: Result, fragment: str) -> None:
    """Exit status 2 and one line ``error: ...`` on stderr, no traceback, no report."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines
    assert fragment in lines[0], lines[0]


def _log(data_dir: Path) -> None:
    """A deployment that ran: its decision log and its embedded store's folder."""
    DecisionLog(f"sqlite:///{data_dir / 'decisions.db'}").close()
    (data_dir / "qdrant").mkdir()


def _store(monkeypatch: pytest.MonkeyPatch, *, orphan: bool) -> None:
    store = InMemoryStore()
    if orphan:  # a memory the guard wrote (it carries a tenant) that no decision row explains
        anyio.run(_add_orphan, store)
    monkeypatch.setattr(Mem0Backend, "from_settings", staticmethod(lambda *a, **k: store))


async def _add_orphan(store: InMemoryStore) -> None:
    await store.add(
        [{"role": "user", "content": "unexplained"}],
        scope=MemoryScope(user_id="alice"),
        metadata={TENANT_KEY: "tenant-a", "status": "fact"},
    )


def test_no_decision_log_is_status_2_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_doctor: Callable[..., Result]
) -> None:
    typo = tmp_path / "typo"
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(typo))
    _cannot_check(run_doctor(), f"no decision log at {typo / 'decisions.db'}")
    _cannot_check(run_doctor("--json"), "no decision log at")
    _cannot_check(run_doctor("--repair"), "no decision log at")
    assert not typo.exists()


def test_a_log_it_cannot_read_is_status_2(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, run_doctor: Callable[..., Result]
) -> None:
    (data_dir / "decisions.db").write_bytes(b"not a database at all" * 100)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    _cannot_check(run_doctor(), "cannot read the decision log at sqlite:///")


def test_a_store_it_cannot_reach_is_status_2(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, run_doctor: Callable[..., Result]
) -> None:
    _log(data_dir)

    def down(*args: Any, **kwargs: Any) -> InMemoryStore:
        raise BackendUnavailableError("the Qdrant server at localhost:6333 does not answer")

    monkeypatch.setattr(Mem0Backend, "from_settings", staticmethod(down))
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    _cannot_check(run_doctor(), "the Qdrant server at localhost:6333 does not answer")


def test_a_usage_error_is_status_2_too(run_doctor: Callable[..., Result]) -> None:
    result = run_doctor("--older-than", "soon")
    assert result.exit_code == 2, result.output


@pytest.mark.parametrize(
    ("orphan", "status", "said"), [(True, 1, "1 problem(s) remain"), (False, 0, "no problems")]
)
def test_problems_remaining_is_status_1_and_none_0(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_doctor: Callable[..., Result],
    orphan: bool,
    status: int,
    said: str,
) -> None:
    _log(data_dir)
    _store(monkeypatch, orphan=orphan)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    result = run_doctor()
    assert result.exit_code == status, result.output
    assert said in result.stdout
    assert result.stderr == ""


def test_the_help_says_which_status_is_which(run_doctor: Callable[..., Result]) -> None:
    result = run_doctor("--help")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "Exit status: 0 when there is no problem; 1 while any problem remains" in text
    assert "2 when it cannot check" in text


def test_another_commands_error_through_the_root_handler_stays_status_1(tmp_path: Path) -> None:
    """Only doctor says 2, for its own cases: the root group's handler still answers 1."""
    log = f"sqlite:///{tmp_path / 'decisions.db'}"
    DecisionLog(log).close()
    folder = tmp_path / "reports"
    folder.mkdir()
    args = ["report", "pollution", "--database-url", log, "--out", str(folder)]
    result = CliRunner().invoke(root, args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {folder} is a directory"), result.stderr


@pytest.mark.parametrize("command", [["doctor"], ["doctor", "--repair"], ["adopt", "--dry-run"]])
def test_no_store_is_created_where_none_was(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """A log with no embedded store beside it (a mistyped MIRAGE_DATA_DIR, or a Job that left out
    MIRAGE_VECTOR_STORE_URL) is status 2, and no empty store is opened: one was, every memory
    read as gone, and `--repair` recorded them all as lost."""
    _log(data_dir)
    (data_dir / "qdrant").rmdir()
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    result = CliRunner().invoke(root, command)
    assert result.exit_code == 2, result.output
    assert "no embedded store under MIRAGE_DATA_DIR" in result.output
    assert not (data_dir / "qdrant").exists()


def test_a_shared_log_without_a_shared_store_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRAGE_DATABASE_URL", "postgresql://mirage:secret@db.internal/mirage")
    result = CliRunner().invoke(root, ["doctor"])
    assert result.exit_code == 2, result.output
    assert "set MIRAGE_VECTOR_STORE_URL" in result.output
    assert "secret" not in result.output


def test_adopt_into_a_tenant_no_api_key_has_is_refused(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With MIRAGE_API_KEYS naming acme and globex, `--tenant default` (the default) adopted
    memories no client could read."""
    _log(data_dir)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("MIRAGE_API_KEYS", "key-a:acme,key-b:globex")
    result = CliRunner().invoke(root, ["adopt", "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "tenant 'default' is no API key's" in result.output
    assert "key-a" not in result.output
