"""The calibration jobs of deploy/ (Helm CronJob, compose one-shot service) agree with the CLI,
the settings and the sidecar: they run a real `mirage calibrate job` invocation, write where the
sidecar reads (MIRAGE_PROFILE_DIR) and reload it through the route the app serves.

Templates are parsed with contract.render_lite (every branch kept) and rendered by Helm's own
SDK (contract.render_chart).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

import pytest
import typer

from mirage_guard.adapters.cli import app as cli_app
from mirage_guard.adapters.cli._calibrate_job import RELOAD_PATH, job_problems
from mirage_guard.guard.settings import GuardSettings
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


def _cronjob() -> dict[str, Any]:
    return _render("calibration-cronjob.yaml")


def _job_pod() -> dict[str, Any]:
    pod: dict[str, Any] = _cronjob()["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return pod


def _job_container() -> dict[str, Any]:
    (container,) = _job_pod()["containers"]
    assert isinstance(container, dict)
    return container


def _sidecar() -> tuple[dict[str, Any], dict[str, Any]]:
    pod = _render("deployment.yaml")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    return pod, container


def _parse_cli(args: list[str]) -> tuple[str, dict[str, Any]]:
    """Parse ``mirage <args>`` with the real CLI (click), returning the command path and its
    parameters; an unknown command or option fails here."""
    group = typer.main.get_command(cli_app)
    ctx = group.make_context("mirage", list(args), resilient_parsing=False)
    path: list[str] = []
    command: Any = group
    rest = list(args)
    while hasattr(command, "get_command"):
        name, rest = rest[0], rest[1:]
        sub = command.get_command(ctx, name)
        assert sub is not None, f"`mirage {' '.join([*path, name])}` is no command"
        path.append(name)
        command = sub
    sub_ctx = command.make_context(" ".join(path), rest)
    return " ".join(path), dict(sub_ctx.params)


def _settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> GuardSettings:
    for key in contract.setting_env_names():
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        if key.startswith("MIRAGE_"):
            monkeypatch.setenv(key, value)
    return GuardSettings()


# --- Helm --------------------------------------------------------------------------------


def test_cronjob_is_off_by_default_and_forbids_overlapping_runs() -> None:
    values = _values()
    assert values["calibration"]["enabled"] is False
    job = _cronjob()
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "CronJob")
    assert job["spec"]["concurrencyPolicy"] == "Forbid"
    assert len(str(values["calibration"]["schedule"]).split()) == 5, "a five-field cron schedule"
    assert _job_pod()["restartPolicy"] in {"Never", "OnFailure"}
    template = (TEMPLATES / "calibration-cronjob.yaml").read_text()
    assert template.lstrip().startswith("{{- if .Values.calibration.enabled }}")
    pvc = (TEMPLATES / "profiles-pvc.yaml").read_text()
    assert pvc.lstrip().startswith("{{- if .Values.calibration.enabled }}")


def test_cronjob_runs_a_real_calibrate_job_invocation() -> None:
    container = _job_container()
    assert "command" not in container, "the image's ENTRYPOINT is `mirage`"
    entrypoint = [
        args for kw, args in contract.dockerfile_instructions(contract.DOCKERFILE.read_text())
    ]
    assert '["mirage"]' in entrypoint
    path, params = _parse_cli([str(a) for a in container["args"]])
    assert path == "calibrate job"
    values = _values()["calibration"]
    assert params["oi_objective"] == values["oiObjective"]
    assert params["stated_objective"] == values["statedObjective"]
    assert params["concurrency"] == values["concurrency"]
    assert params["max_tokens"] == values["maxTokens"]
    assert params["reload_url"]  # the sidecar's in-cluster URL (templated)
    assert params["reload_each_address"] is True  # every replica, not one behind the Service


def test_reload_url_reaches_every_sidecar_pod_through_the_route_they_serve() -> None:
    template = (TEMPLATES / "calibration-cronjob.yaml").read_text()
    (line,) = [x for x in template.splitlines() if "http://" in x]
    assert 'printf "http://%s-headless.%s.svc:%v" (include "mirage-guard.fullname" .)' in line
    assert ".Values.service.port" in line
    headless = _render("service-headless.yaml")
    assert headless["metadata"]["name"] == "TEMPLATED-headless"
    assert headless["spec"]["clusterIP"] == "None"
    (port,) = headless["spec"]["ports"]
    assert port["targetPort"] == _sidecar()[1]["ports"][0]["name"]
    assert headless["spec"]["selector"] == _render("service.yaml")["spec"]["selector"]

    from fastapi.testclient import TestClient

    from mirage_guard.adapters.server import create_app

    assert "post" in create_app(GuardSettings()).openapi()["paths"][RELOAD_PATH]
    # without the lifespan nothing is loaded: the route exists (no 404/405) and is not open
    client = TestClient(create_app(GuardSettings()), raise_server_exceptions=False)
    assert client.post(RELOAD_PATH).status_code not in {200, 404, 405}


def test_no_service_selects_the_job_pod() -> None:
    """The job's pod labels must not match the sidecar's selector (or its Services would send
    traffic, and the reload, to the job)."""
    selector_template = (TEMPLATES / "_helpers.tpl").read_text()
    assert 'define "mirage-guard.selectorLabels"' in selector_template
    labels = _cronjob()["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/name"] == "TEMPLATED-calibrate"
    template = (TEMPLATES / "calibration-cronjob.yaml").read_text()
    assert 'include "mirage-guard.selectorLabels"' not in template


def test_job_and_sidecar_share_the_profiles_volume_and_settings() -> None:
    values = _values()
    profile_dir = values["calibration"]["profileDir"]
    job_pod, job = _job_pod(), _job_container()
    sidecar_pod, sidecar = _sidecar()
    claim = "TEMPLATED-profiles"  # `{{ include "mirage-guard.fullname" . }}-profiles` in both
    assert _render("profiles-pvc.yaml")["metadata"]["name"] == claim
    for pod, container, read_only in ((job_pod, job, False), (sidecar_pod, sidecar, True)):
        (volume,) = [v for v in pod["volumes"] if v["name"] == "profiles"]
        assert volume["persistentVolumeClaim"]["claimName"] == claim
        (mount,) = [m for m in container["volumeMounts"] if m["name"] == "profiles"]
        assert mount["mountPath"] == profile_dir
        assert bool(mount.get("readOnly")) is read_only
    assert _render("configmap.yaml")["data"]["MIRAGE_PROFILE_DIR"] == profile_dir
    assert job["envFrom"] == sidecar["envFrom"], "the job reads the sidecar's configuration"
    assert job["securityContext"] == sidecar["securityContext"]
    assert _job_pod()["securityContext"] == sidecar_pod["securityContext"]
    assert "/tmp" in {m["mountPath"] for m in job["volumeMounts"]}  # read-only root filesystem


def test_job_refuses_a_configuration_it_cannot_calibrate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the chart's defaults (audit off, no writer model) the job stops with the reasons;
    with a writer model and audit mode 'separate' it has everything it needs."""
    config = {str(k): str(v) for k, v in _values()["config"].items()}
    config["MIRAGE_PROFILE_DIR"] = _render("configmap.yaml")["data"]["MIRAGE_PROFILE_DIR"]
    problems = job_problems(_settings(config, monkeypatch))
    assert any("MIRAGE_WRITER_MODEL" in p for p in problems)
    assert any("MIRAGE_AUDIT_MODE" in p for p in problems)
    ready = {
        **config,
        "MIRAGE_AUDIT_MODE": "separate",
        "MIRAGE_WRITER_MODEL": "hosted_vllm/Qwen/Qwen3-8B",
    }
    assert job_problems(_settings(ready, monkeypatch)) == []


def test_helm_renders_the_cronjob() -> None:
    docs = contract.render_chart(
        {"calibration": {"enabled": True}, "postgres": {"password": "pw"}},
        release="mg",
        namespace="default",
    )
    kinds = {d["kind"] for d in docs}
    assert {"CronJob", "PersistentVolumeClaim", "Deployment"} <= kinds
    (job,) = [d for d in docs if d["kind"] == "CronJob"]
    (container,) = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    path, params = _parse_cli(container["args"])
    assert path == "calibrate job"
    url = urlparse(params["reload_url"])
    assert url.hostname == "mg-mirage-guard-headless.default.svc"
    assert url.port == contract.default_port()
    (headless,) = [d for d in docs if d["metadata"]["name"] == "mg-mirage-guard-headless"]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert headless["spec"]["selector"].items() <= pod_labels.items()
    job_labels = job["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    assert not headless["spec"]["selector"].items() <= job_labels.items()


# --- compose -----------------------------------------------------------------------------


def _compose() -> dict[str, Any]:
    compose = contract.load_yaml(contract.COMPOSE)
    assert isinstance(compose, dict)
    return compose


def _env(service: dict[str, Any]) -> dict[str, str]:
    return {k: contract.interpolate_defaults(str(v)) for k, v in service["environment"].items()}


def test_compose_calibrate_is_a_one_shot_under_its_own_profile() -> None:
    services = _compose()["services"]
    calibrate = services["calibrate"]
    assert calibrate["profiles"] == ["calibrate"]  # `up` never starts it
    assert calibrate["restart"] == "no"
    assert calibrate["healthcheck"] == {"disable": True}
    path, params = _parse_cli([str(a) for a in calibrate["command"]])
    assert path == "calibrate job"
    url = urlparse(params["reload_url"])
    guard = services["mirage-guard-vllm"]
    assert url.hostname == "mirage-guard-vllm"
    assert str(url.port) == _env(guard)["MIRAGE_PORT"]
    assert "mirage-guard-vllm" in calibrate["depends_on"]


def test_compose_calibrate_writes_where_the_guard_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    compose = _compose()
    services = compose["services"]
    calibrate, guard = services["calibrate"], services["mirage-guard-vllm"]
    job_env, guard_env = _env(calibrate), _env(guard)
    for key in ("MIRAGE_WRITER_MODEL", "MIRAGE_WRITER_API_BASE", "MIRAGE_AUDIT_MODE"):
        assert job_env[key] == guard_env[key], key  # the model the guard audits with
    assert job_env["MIRAGE_PROFILE_DIR"] == guard_env["MIRAGE_PROFILE_DIR"]
    mounts = {
        name: (v.split(":")[0], v.split(":")[1], v.split(":")[2:])
        for name, svc in (("job", calibrate), ("guard", guard))
        for v in svc["volumes"]
        if v.split(":")[1] == job_env["MIRAGE_PROFILE_DIR"]
    }
    assert mounts["job"][0] == mounts["guard"][0], "the same named volume"
    assert mounts["job"][0] in compose["volumes"]
    assert mounts["guard"][2] == ["ro"]
    assert mounts["job"][2] == []
    assert job_problems(_settings(job_env, monkeypatch)) == []
