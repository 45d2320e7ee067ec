"""Checks over every file in deploy/: env vars, hosts, parseability, the README's paths."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.deploy import contract

ENV_NAME = re.compile(r"\bMIRAGE_[A-Z0-9_]+\b")
# hosts a deploy file may name: loopback, compose services, in-cluster service names
LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0"}


def _relative(path: Path) -> str:
    return str(path.relative_to(contract.DEPLOY))


@pytest.mark.parametrize("path", contract.deploy_files(), ids=_relative)
def test_every_mirage_env_var_is_a_guard_setting(path: Path) -> None:
    settings = contract.setting_env_names()
    for name in set(ENV_NAME.findall(path.read_text())):
        if name in contract.NON_SETTING_ENV:
            assert name in contract.NON_SETTING_ENV[name].read_text()
            continue
        assert name in settings, f"{_relative(path)}: {name} is not a GuardSettings field"


def test_deploy_files_mention_env_vars_at_all() -> None:
    """Guards the test above against passing because the regex stopped matching."""
    mentioned = {
        name for path in contract.deploy_files() for name in ENV_NAME.findall(path.read_text())
    }
    assert {"MIRAGE_PORT", "MIRAGE_WRITER_MODEL", "MIRAGE_WRITER_API_BASE"} <= mentioned


@pytest.mark.parametrize("path", contract.deploy_files(), ids=_relative)
def test_urls_name_only_local_or_in_cluster_hosts(path: Path) -> None:
    """No download or registry host in deploy/: indexes are the builder's configuration."""
    services = set(contract.load_yaml(contract.COMPOSE)["services"])
    for host in contract.url_hosts(path.read_text()):
        assert host in LOCAL_HOSTS | services or host.endswith((".svc", ".svc.cluster.local")), (
            f"{_relative(path)} names host {host!r}"
        )


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in contract.deploy_files()
        if p.suffix in {".yml", ".yaml", ".json"} and "templates" not in p.parts  # test_helm.py
    ],
    ids=_relative,
)
def test_data_files_parse(path: Path) -> None:
    if path.suffix == ".json":
        assert json.loads(path.read_text())
    else:
        assert yaml.safe_load(path.read_text())


def test_readme_paths_exist_and_recipes_are_documented() -> None:
    readme = (contract.DEPLOY / "README.md").read_text()
    paths = set(re.findall(r"\bdeploy/[\w./-]+\w", readme))
    assert paths
    for path in paths:
        assert (contract.REPO / path).exists(), f"README mentions missing {path}"
    for recipe in (
        "docker build",
        "docker compose",
        "--profile vllm",
        "helm install",
        "promtool test rules",
        "pytest tests/deploy",
    ):
        assert recipe in readme, f"README does not show `{recipe}`"
    assert f":{contract.default_port()}" in readme


def test_sidecar_serves_the_paths_deploy_probes_and_scrapes(tmp_path: Path) -> None:
    """The probe and scrape paths used throughout deploy/ are routes of the real app.

    Without the lifespan nothing is loaded, so /readyz and /metrics may answer with an error;
    what matters is that the route exists (no 404/405).
    """
    from fastapi.testclient import TestClient

    from mirage_guard.adapters.server import create_app
    from mirage_guard.guard.settings import GuardSettings

    client = TestClient(create_app(GuardSettings(data_dir=tmp_path)), raise_server_exceptions=False)
    status = {path: client.get(path).status_code for path in sorted(contract.SIDECAR_PATHS)}
    assert status[contract.HEALTH_PATH] == 200
    missing = {path: code for path, code in status.items() if code in {404, 405}}
    assert not missing, f"the sidecar does not serve GET {missing}"
    assert client.get("/no-such-route").status_code == 404  # the check above can fail


def test_image_entrypoint_is_a_cli_command() -> None:
    """`mirage serve` (the image's ENTRYPOINT + CMD) is a command of the `mirage` CLI."""
    import typer

    from mirage_guard.adapters.cli import app

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert "serve" in commands
    assert contract.pyproject()["project"]["scripts"]["mirage"] == "mirage_guard.adapters.cli:app"
