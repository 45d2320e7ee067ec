"""The decision log's database or the vector store's going away (a restart, a failover) is a
retryable 503, counted in ``mirage_guard_errors_total``: it was a 500 ``internal_error`` (a
write) or a 502 ``backend_error`` (a read), both ``retryable: false``, so a client that honours
the flag dropped the write, and no alert fired (found by an operator stopping PostgreSQL under
two replicas, 2026-12-07)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.exc import OperationalError

from mirage_guard.adapters._mem0 import _unreachable
from mirage_guard.guard.errors import BackendUnavailableError
from tests.fakes.mem0 import InMemoryStore

Client = Callable[..., TestClient]


def _down(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))


def test_a_write_while_the_database_is_down_is_a_retryable_503(
    make_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client()
    sidecar = client.app.state.sidecar  # type: ignore[attr-defined]
    monkeypatch.setattr(sidecar.decision_log, "_sessions", _down)  # every query of the log
    body = {"messages": [{"role": "user", "content": "I like tea."}], "user_id": "u",
            "infer": False}  # fmt: skip
    r = client.post("/memories", json=body)
    assert r.status_code == 503, r.text
    assert r.json()["error"] == {
        "type": "database_unavailable",
        "message": "the decision log's database is unavailable; retry later",
        "retryable": True,
    }
    assert r.headers["Retry-After"] == "1"
    metrics = client.get("/metrics").text
    assert 'mirage_guard_errors_total{kind="OperationalError",stage="database"} 1.0' in metrics


def test_the_sidecar_answers_503_when_the_log_fails_mid_write(
    make_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write whose decision rows failed was a 502 ``backend_error``, not retryable."""
    client = make_client()
    sidecar = client.app.state.sidecar  # type: ignore[attr-defined]
    monkeypatch.setattr(sidecar.decision_log, "_store_turns", _down)
    body = {
        "messages": [{"role": "user", "content": "I like tea."}],
        "user_id": "u",
        "infer": False,
    }
    r = client.post("/memories", json=body)
    assert r.status_code == 503, r.text
    assert r.json()["error"]["type"] == "database_unavailable"
    assert r.json()["error"]["retryable"] is True
    assert r.headers["Retry-After"] == "1"
    metrics = client.get("/metrics").text
    assert 'mirage_guard_errors_total{kind="OperationalError",stage="database"} 1.0' in metrics


class _PsycopgOperationalError(Exception):
    """Stands for psycopg.OperationalError (the driver is an extra): matched by module and name."""


_PsycopgOperationalError.__module__ = "psycopg"
_PsycopgOperationalError.__name__ = "OperationalError"


def test_a_store_connection_error_is_unavailable_not_a_backend_error() -> None:
    assert _unreachable(_PsycopgOperationalError("server closed the connection unexpectedly"))
    assert _unreachable(ConnectionRefusedError())
    assert not _unreachable(ValueError("a query the store refused"))


def test_a_read_from_an_unreachable_store_is_a_retryable_503(
    make_client: Client, store: InMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def gone(*args: Any, **kwargs: Any) -> Any:
        raise BackendUnavailableError("the vector store is unreachable: OperationalError")

    client = make_client()
    monkeypatch.setattr(store, "get_all", gone)
    r = client.get("/memories", params={"user_id": "u"})
    assert r.status_code == 503, r.text
    assert r.json()["error"]["retryable"] is True


@pytest.mark.slow
@pytest.mark.postgres
def test_a_postgresql_restart_under_the_sidecar(tmp_path: Path) -> None:
    """The operator's case, on a real PostgreSQL + pgvector: stopped under a running sidecar,
    writes and reads are 503 and retryable, nothing is half-written, and once it is back a
    retried write is stored."""
    import tempfile

    from mirage_guard.adapters import LocalPostgres
    from mirage_guard.adapters.server import create_app
    from mirage_guard.guard import GuardSettings
    from tests.server.sidecar_setup import echo_writer

    root = Path(tempfile.mkdtemp(prefix="mirage-pg-restart-"))  # not pytest's 0700 tmp
    pg = LocalPostgres(root=root, durable=False).start()
    try:
        url = pg.create_database("restart")
        settings = GuardSettings(data_dir=tmp_path / "data", database_url=url, vector_store_url=url)
        body = {"messages": [{"role": "user", "content": "I keep bees."}], "user_id": "u",
                "infer": False}  # fmt: skip
        with TestClient(create_app(settings, writer_llm=echo_writer()),
                        raise_server_exceptions=False) as client:  # fmt: skip
            assert client.post("/memories", json=body).status_code == 200
            pg.stop()
            for r in (
                client.post("/memories", json={**body, "user_id": "v"}),
                client.get("/memories", params={"user_id": "u"}),
            ):
                assert r.status_code == 503, r.text
                assert r.json()["error"]["retryable"] is True
            assert client.get("/readyz").status_code == 503
            pg.start()
            for _ in range(3):  # a pooled connection that died with the server: one retry
                again = client.post("/memories", json={**body, "user_id": "v"})
                if again.status_code != 503:
                    break
            assert again.status_code == 200, again.text
            listed = client.get("/memories", params={"user_id": "v"}).json()["results"]
            assert [m["memory"] for m in listed] == ["I keep bees."]
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_a_log_sqlite_cannot_use_is_a_502_not_a_retry(make_client: Client) -> None:
    """``GET /v1/decisions`` (the log's own route) on a log whose table is gone: SQLite's
    OperationalError was answered 503 ``database_unavailable``, retry later, which never helps."""
    import sqlite3

    client = make_client()
    sidecar = client.app.state.sidecar  # type: ignore[attr-defined]
    path = sidecar.decision_log.engine.url.database
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE mirage_decisions")
    r = client.get("/v1/decisions")
    assert r.status_code == 502, r.text
    error = r.json()["error"]
    assert error["type"] == "backend_error"
    assert error["retryable"] is False
    assert "no such table: mirage_decisions" in error["message"]
    body = {"messages": [{"role": "user", "content": "I like tea."}], "user_id": "u",
            "infer": False}  # fmt: skip
    w = client.post("/memories", json=body)  # a write, through the memory, the same
    assert w.status_code == 502, w.text
    assert w.json()["error"]["retryable"] is False
