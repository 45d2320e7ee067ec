"""deploy/helm/mirage-guard: probes, port and env agree with the sidecar and GuardSettings.

No helm binary here: templates are checked structurally (contract.render_lite) and every
``.Values`` reference must resolve in values.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.deploy import contract

TEMPLATES = contract.CHART / "templates"


def _values() -> dict[str, Any]:
    values = contract.load_yaml(contract.CHART / "values.yaml")
    assert isinstance(values, dict)
    return values


def _render(name: str) -> dict[str, Any]:
    rendered = contract.render_lite((TEMPLATES / name).read_text(), _values())
    assert isinstance(rendered, dict), name
    return rendered


def _container() -> dict[str, Any]:
    deployment = _render("deployment.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def test_chart_metadata() -> None:
    chart = contract.load_yaml(contract.CHART / "Chart.yaml")
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == contract.CHART.name
    assert chart["appVersion"] == contract.pyproject()["project"]["version"]


@pytest.mark.parametrize(
    "template",
    sorted(p.name for p in TEMPLATES.glob("*.yaml")),
)
def test_template_parses_and_has_a_kind(template: str) -> None:
    rendered = _render(template)
    assert rendered["apiVersion"]
    assert rendered["kind"]
    assert rendered["metadata"]["name"]


@pytest.mark.parametrize(
    "path", sorted(TEMPLATES.iterdir()), ids=lambda p: p.name if isinstance(p, Path) else p
)
def test_every_values_reference_exists(path: Path) -> None:
    values = _values()
    for ref in contract._VALUES_REF.findall(path.read_text()):
        contract.values_lookup(values, ref)


def test_service_and_container_port_are_the_settings_port() -> None:
    port = contract.default_port()
    assert _values()["service"]["port"] == port
    (container_port,) = _container()["ports"]
    assert container_port["containerPort"] == port
    service = _render("service.yaml")
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] == container_port["name"]
    assert _render("configmap.yaml")["data"]["MIRAGE_PORT"] == str(port)


def test_probes_hit_the_sidecar_health_routes() -> None:
    container = _container()
    port_name = container["ports"][0]["name"]
    expected = {
        "livenessProbe": contract.HEALTH_PATH,
        "readinessProbe": contract.READY_PATH,
        "startupProbe": contract.HEALTH_PATH,
    }
    for probe, path in expected.items():
        assert container[probe]["httpGet"]["path"] == path, probe
        assert container[probe]["httpGet"]["port"] == port_name, probe


def test_env_comes_from_configmap_and_secret() -> None:
    env_from = _container()["envFrom"]
    assert {next(iter(source)) for source in env_from} == {"configMapRef", "secretRef"}
    assert _render("secret.yaml")["kind"] == "Secret"


def test_config_values_are_a_valid_guard_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from mirage_guard.guard.settings import GuardSettings

    config = {str(k): str(v) for k, v in _values()["config"].items()}
    config["MIRAGE_PORT"] = str(_values()["service"]["port"])
    assert config["MIRAGE_HOST"] == "0.0.0.0"
    for key, value in config.items():
        assert key in contract.setting_env_names(), f"{key} is not a GuardSettings field"
        monkeypatch.setenv(key, value)
    settings = GuardSettings()
    assert settings.port == contract.default_port()


def test_secret_settings_stay_out_of_the_configmap() -> None:
    from pydantic import SecretStr

    from mirage_guard.guard.settings import GuardSettings

    secret_fields = {
        f"MIRAGE_{name.upper()}"
        for name, info in GuardSettings.model_fields.items()
        if info.annotation is not None and SecretStr in getattr(info.annotation, "__args__", ())
    }
    assert "MIRAGE_API_KEYS" in secret_fields
    assert not secret_fields & _values()["config"].keys()


def test_service_monitor_scrapes_metrics_on_the_http_port() -> None:
    monitor = _render("servicemonitor.yaml")
    assert monitor["kind"] == "ServiceMonitor"
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == contract.METRICS_PATH
    assert endpoint["port"] == _container()["ports"][0]["name"]
    assert _values()["serviceMonitor"]["enabled"] is False, "optional: off by default"


def test_service_monitor_selects_one_service_so_each_pod_is_scraped_once() -> None:
    """Both Services carried the selector labels and a port named http: each pod became two
    targets, and every `sum by (model)` rate of the alert rules doubled. (render_lite drops
    the shared `include`d labels; what is left tells the two apart.)"""
    wanted = _render("servicemonitor.yaml")["spec"]["selector"]["matchLabels"]
    assert wanted
    selected = [
        name
        for name in ("service.yaml", "service-headless.yaml")
        if wanted.items() <= (_render(name)["metadata"]["labels"] or {}).items()
    ]
    assert selected == ["service.yaml"]


def test_pod_runs_as_the_image_user_without_privileges() -> None:
    values = _values()
    assert values["podSecurityContext"]["runAsNonRoot"] is True
    image_user = contract.dockerfile_instructions(contract.DOCKERFILE.read_text())
    (user,) = [args for kw, args in image_user if kw == "USER"]
    assert str(values["podSecurityContext"]["runAsUser"]) == user.split(":")[0]
    assert values["securityContext"]["allowPrivilegeEscalation"] is False
