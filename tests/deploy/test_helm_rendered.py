"""deploy/helm/mirage-guard rendered by Helm itself (Helm's Go SDK through ``helm-python-sdk``).

``test_helm.py`` reads the templates structurally, without Helm: it cannot see what an
``include`` expands to, so it could not see that every Service and the sidecar Deployment
selected the chart's PostgreSQL pod as well (their selector was only the chart's name and
release, which the PostgreSQL pod also carries). Here the chart is rendered as ``helm install``
renders it, for each shape an operator can ask for, and every selector is checked against the
pods each workload creates.
"""

from __future__ import annotations

from typing import Any

import helm_python as helm
import pytest

from tests.deploy import contract

RELEASE = "rel"
# the shapes an operator installs: the default (PostgreSQL in the release), with the calibration
# CronJob and the ServiceMonitor, and on a PostgreSQL of their own
SHAPES: dict[str, dict[str, Any]] = {
    "default": {"postgres": {"password": "pw"}},
    "calibration+monitor": {
        "postgres": {"password": "pw"},
        "calibration": {"enabled": True},
        "serviceMonitor": {"enabled": True},
    },
    "own-postgres": {
        "postgres": {"enabled": False},
        "replicaCount": 1,
        "persistence": {"enabled": True},
        "calibration": {"enabled": True},
    },
}
_WORKLOADS = {"Deployment", "StatefulSet", "CronJob"}


def _render(values: dict[str, Any]) -> list[dict[str, Any]]:
    return contract.render_chart(values, release=RELEASE)


@pytest.fixture(scope="module", params=sorted(SHAPES))
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return _render(SHAPES[request.param])


def _pod_template(workload: dict[str, Any]) -> dict[str, Any]:
    spec = workload["spec"]
    if workload["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    template = spec["template"]
    assert isinstance(template, dict)
    return template


def _pods(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each workload's pod template, by "Kind/name"."""
    return {f"{d['kind']}/{d['metadata']['name']}": _pod_template(d)
            for d in docs if d["kind"] in _WORKLOADS}  # fmt: skip


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def test_helm_lints_the_chart_without_warnings() -> None:
    result = helm.lint(str(contract.CHART), values=SHAPES["default"])
    assert result["errors"] == []
    # severities: 1 info ("icon is recommended"), 2 warning, 3 error
    assert [m for m in result["messages"] if m["severity"] >= 2] == []


def test_every_shape_renders_with_a_name_and_a_kind(rendered: list[dict[str, Any]]) -> None:
    assert rendered
    for doc in rendered:
        assert doc["apiVersion"]
        assert doc["kind"]
        assert doc["metadata"]["name"]


def test_each_workload_selects_its_own_pods_only(rendered: list[dict[str, Any]]) -> None:
    pods = _pods(rendered)
    for doc in rendered:
        if doc["kind"] not in {"Deployment", "StatefulSet"}:
            continue
        own = f"{doc['kind']}/{doc['metadata']['name']}"
        selector = doc["spec"]["selector"]["matchLabels"]
        assert _matches(selector, pods[own]["metadata"]["labels"]), own
        others = [
            w for w, t in pods.items() if w != own and _matches(selector, t["metadata"]["labels"])
        ]
        assert others == [], f"{own}'s selector also matches the pods of {others}"


def test_each_service_sends_traffic_to_one_workload_with_its_port(
    rendered: list[dict[str, Any]],
) -> None:
    pods = _pods(rendered)
    for service in _of_kind(rendered, "Service"):
        name = service["metadata"]["name"]
        selector = service["spec"]["selector"]
        chosen = [w for w, t in pods.items() if _matches(selector, t["metadata"]["labels"])]
        assert len(chosen) == 1, f"Service {name} selects the pods of {chosen}"
        (containers,) = [pods[chosen[0]]["spec"]["containers"]]
        port_names = {p.get("name") for c in containers for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in port_names, (name, port)


def test_the_sidecar_services_select_the_sidecar_and_postgres_its_own(
    rendered: list[dict[str, Any]],
) -> None:
    pods = _pods(rendered)
    sidecar = f"Deployment/{RELEASE}-mirage-guard"
    wanted = {
        f"{RELEASE}-mirage-guard": sidecar,
        f"{RELEASE}-mirage-guard-headless": sidecar,
        f"{RELEASE}-mirage-guard-postgres": f"StatefulSet/{RELEASE}-mirage-guard-postgres",
    }
    for service in _of_kind(rendered, "Service"):
        name = service["metadata"]["name"]
        selector = service["spec"]["selector"]
        chosen = [w for w, t in pods.items() if _matches(selector, t["metadata"]["labels"])]
        assert chosen == [wanted[name]], name


def test_the_calibration_job_is_behind_no_service(rendered: list[dict[str, Any]]) -> None:
    jobs = [d for d in rendered if d["kind"] == "CronJob"]
    for job in jobs:
        labels = _pod_template(job)["metadata"]["labels"]
        for service in _of_kind(rendered, "Service"):
            assert not _matches(service["spec"]["selector"], labels), service["metadata"]["name"]


def test_the_service_monitor_selects_exactly_the_sidecar_service() -> None:
    docs = _render(SHAPES["calibration+monitor"])
    (monitor,) = _of_kind(docs, "ServiceMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    chosen = [s["metadata"]["name"] for s in _of_kind(docs, "Service")
              if _matches(selector, s["metadata"]["labels"])]  # fmt: skip
    assert chosen == [f"{RELEASE}-mirage-guard"]


def test_the_sidecar_points_at_the_release_postgres_service() -> None:
    docs = _render(SHAPES["default"])
    (secret,) = [
        d
        for d in _of_kind(docs, "Secret")
        if d["metadata"]["name"] == f"{RELEASE}-mirage-guard-postgres"
    ]
    urls = [v for k, v in secret.get("stringData", {}).items() if k.endswith("_URL")]
    assert urls, secret
    services = {s["metadata"]["name"] for s in _of_kind(docs, "Service")}
    for url in urls:
        host = url.split("@", 1)[1].split(":", 1)[0]
        assert host == f"{RELEASE}-mirage-guard-postgres.ns.svc"
        assert host.split(".")[0] in services


def test_an_install_without_a_postgres_password_is_refused() -> None:
    with pytest.raises(helm.HelmError, match=r"postgres\.password is required"):
        _render({})
