"""MIRAGE_API_KEYS / MIRAGE_ADMIN_KEYS mistakes the sidecar started with silently (probe of
2026-12): a key listed for two tenants (the last one won), a key and tenant padded around ":"
(the key never authenticated), an admin key that is also a tenant's key (the tenant got the
admin routes), and a malformed list that was a traceback from `mirage serve`. Each is now a
ConfigError naming the variable (and the entry's position, never the key: it is a secret)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from mirage_guard.guard import GuardSettings
from mirage_guard.guard.errors import ConfigError
from tests.server.sidecar_setup import KEYS

SECRET = "sk-live-0123456789"
RELOAD = "/v1/admin/profiles/reload"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"MIRAGE_API_KEYS": f"{SECRET}:acme,{SECRET}:globex"},
            "MIRAGE_API_KEYS: entry 2 repeats the key of entry 1",
        ),
        (  # the same key once padded: the same key once stripped
            {"MIRAGE_API_KEYS": f"k2:x,{SECRET}:acme,, {SECRET} :globex"},
            "MIRAGE_API_KEYS: entry 4 repeats the key of entry 2",
        ),
        ({"MIRAGE_API_KEYS": f"k2:x,{SECRET}acme"}, "MIRAGE_API_KEYS: entry 2 is not key:tenant"),
        ({"MIRAGE_API_KEYS": f"{SECRET}: "}, "MIRAGE_API_KEYS: entry 1 is not key:tenant"),
        (
            {"MIRAGE_API_KEYS": f"{SECRET}:acme", "MIRAGE_ADMIN_KEYS": f"admin-1, {SECRET}"},
            "MIRAGE_ADMIN_KEYS: entry 2 is also a tenant's key in MIRAGE_API_KEYS",
        ),
    ],
)
def test_a_bad_key_list_is_a_config_error_naming_the_entry_never_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], message: str
) -> None:
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as caught:
        GuardSettings.from_env()
    assert str(caught.value).startswith(message)
    assert SECRET not in "".join(traceback.format_exception(caught.value))  # nor in its cause

    # `mirage serve` says it in the one line other bad settings get, and does not start
    started: list[bool] = []
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: started.append(True))
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 1
    assert result.output.startswith(f"error: {message}")
    assert len(result.output.strip().splitlines()) == 1
    assert SECRET not in result.output
    assert started == []


def test_key_and_tenant_padded_around_the_colon_are_stripped(
    make_client: Callable[..., TestClient],
) -> None:
    """A presented key is stripped, so a key kept as "k1 " could never match: now both sides of
    each pair are stripped when the list is read."""
    assert GuardSettings(api_keys=" k1 : acme ,k2:globex").tenant_keys() == {
        "k1": "acme",
        "k2": "globex",
    }
    client = make_client(api_keys="key-a : tenant-a")
    ping = client.get("/v1/ping/", headers={"Authorization": "Token key-a"})
    assert ping.status_code == 200, ping.text
    assert ping.json()["org_id"] == "tenant-a"


def test_the_admin_route_refuses_a_tenant_key_even_if_listed_as_an_admin_key(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """The settings refuse the overlap at start-up; the route refuses it too, should settings
    be changed after they were checked."""
    client = make_client(api_keys=KEYS, admin_keys="admin-1", profile_dir=tmp_path)
    client.app.state.sidecar.settings.admin_keys = SecretStr("admin-1,key-a")  # type: ignore[attr-defined]
    refused = client.post(RELOAD, headers={"Authorization": "Bearer key-a"})
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"]["type"] == "unauthorized"
    assert client.post(RELOAD, headers={"Authorization": "Bearer admin-1"}).status_code == 200
