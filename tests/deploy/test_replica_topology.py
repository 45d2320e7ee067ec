"""compose.yaml and the Helm chart run the guard as >= 2 replicas on PostgreSQL + pgvector.

The settings the replicas get (``MIRAGE_DATABASE_URL``, ``MIRAGE_VECTOR_STORE_URL``) must name
the PostgreSQL service of the same file, its port, user and database, and load as GuardSettings.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.deploy import contract

SHARED = ("MIRAGE_DATABASE_URL", "MIRAGE_VECTOR_STORE_URL")
TEMPLATES = contract.CHART / "templates"


def _compose() -> dict[str, Any]:
    compose = contract.load_yaml(contract.COMPOSE)
    assert isinstance(compose, dict)
    return compose


def _env(service: dict[str, Any]) -> dict[str, str]:
    return {k: contract.interpolate_defaults(str(v)) for k, v in service["environment"].items()}


def _values() -> dict[str, Any]:
    values = contract.load_yaml(contract.CHART / "values.yaml")
    assert isinstance(values, dict)
    return values


def _render(name: str) -> dict[str, Any]:
    rendered = contract.render_lite((TEMPLATES / name).read_text(), _values())
    assert isinstance(rendered, dict), name
    return rendered


def _valid_settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    from mirage_guard.guard.settings import GuardSettings

    for key in list(os.environ):
        if key.startswith("MIRAGE_"):
            monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith("MIRAGE_"):
            assert key in contract.setting_env_names(), key
            monkeypatch.setenv(key, value)
    return GuardSettings()


# --- compose ------------------------------------------------------------------------------


def test_compose_runs_two_guard_replicas_on_the_postgres_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services = _compose()["services"]
    guard, postgres = services["mirage-guard"], services["postgres"]
    assert guard["deploy"]["replicas"] >= 2
    assert contract.interpolate_defaults(postgres["image"]).startswith("pgvector/pgvector:")
    assert guard["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    pg_env = _env(postgres)
    env = _env(guard)
    for name in SHARED:
        url = urlsplit(env[name])
        assert url.scheme == "postgresql"
        assert url.hostname == "postgres"  # the compose service
        assert (url.port or 5432) == 5432
        assert url.username == pg_env["POSTGRES_USER"]
        assert url.password == pg_env["POSTGRES_PASSWORD"]
        assert url.path.lstrip("/") == pg_env["POSTGRES_DB"]
    settings = _valid_settings(env, monkeypatch)
    assert settings.database_url == settings.vector_store_url == env["MIRAGE_DATABASE_URL"]


def test_compose_gives_each_replica_its_own_host_port_and_data_dir() -> None:
    guard = _compose()["services"]["mirage-guard"]
    (mapping,) = guard["ports"]
    host, container = str(mapping).rsplit(":", 1)
    low, _, high = host.partition("-")
    assert int(high or low) - int(low) + 1 >= guard["deploy"]["replicas"]
    assert int(container) == contract.default_port()
    # a named volume would be one /data (Mem0's home, scratch) shared by every replica
    named = set(_compose()["volumes"])
    assert not [v for v in guard.get("volumes", []) if str(v).split(":")[0] in named]


def test_compose_postgres_keeps_its_data_in_a_volume() -> None:
    postgres = _compose()["services"]["postgres"]
    mounts = dict(reversed(v.split(":")[:2]) for v in postgres["volumes"])
    assert mounts["/var/lib/postgresql/data"] in _compose()["volumes"]


# --- Helm ---------------------------------------------------------------------------------


def test_chart_runs_two_replicas_with_postgres_by_default() -> None:
    values = _values()
    assert values["replicaCount"] >= 2
    assert values["postgres"]["enabled"] is True
    assert values["postgres"]["image"].startswith("pgvector/pgvector:")
    assert not values["postgres"]["password"], "no default password: helm install must set one"


def test_chart_postgres_service_and_statefulset_agree() -> None:
    service = _render("postgres-service.yaml")
    statefulset = _render("postgres-statefulset.yaml")
    assert (service["kind"], statefulset["kind"]) == ("Service", "StatefulSet")
    assert service["metadata"]["name"] == statefulset["metadata"]["name"]
    assert statefulset["spec"]["serviceName"] == service["metadata"]["name"]
    (port,) = service["spec"]["ports"]
    (container,) = statefulset["spec"]["template"]["spec"]["containers"]
    (container_port,) = container["ports"]
    assert port["port"] == container_port["containerPort"] == _values()["postgres"]["port"]
    assert port["targetPort"] == container_port["name"]
    pod_labels = statefulset["spec"]["template"]["metadata"]["labels"]
    assert (
        service["spec"]["selector"]["app.kubernetes.io/component"]
        == pod_labels["app.kubernetes.io/component"]
    )
    env = {e["name"]: e for e in container["env"]}
    secret = _render("postgres-secret.yaml")
    ref = env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == secret["metadata"]["name"]
    assert ref["key"] in secret["stringData"]
    assert env["POSTGRES_USER"]["value"] == _values()["postgres"]["user"]
    assert env["POSTGRES_DB"]["value"] == _values()["postgres"]["database"]


def test_chart_sidecar_reads_the_shared_store_urls_from_the_postgres_secret() -> None:
    secret = _render("postgres-secret.yaml")
    assert set(SHARED) <= set(secret["stringData"])
    deployment = _render("deployment.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    refs = [s["secretRef"]["name"] for s in container["envFrom"] if "secretRef" in s]
    assert secret["metadata"]["name"] in refs
    # the URL is built in the template: user, password, <fullname>-postgres (the Service),
    # the namespace's service domain, port and database, in that order
    text = (TEMPLATES / "postgres-secret.yaml").read_text()
    (fmt, args) = re.search(r'\$url := printf "([^"]+)" (.+?) \}\}', text).groups()  # type: ignore[union-attr]
    assert fmt == "postgresql://%s:%s@%s.%s.svc:%v/%s"
    assert args.split() == [
        ".Values.postgres.user", "$password", "$host", ".Release.Namespace",
        ".Values.postgres.port", ".Values.postgres.database",
    ]  # fmt: skip
    service_name = (TEMPLATES / "postgres-service.yaml").read_text()
    assert '{{ include "mirage-guard.fullname" . }}-postgres' in service_name
    assert '$host := printf "%s-postgres" (include "mirage-guard.fullname" .)' in text
