"""deploy/Dockerfile and deploy/compose.yaml agree with the code and with each other."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.deploy import contract

TORCH = "torch==2.13.0"


def _instructions() -> list[tuple[str, str]]:
    return contract.dockerfile_instructions(contract.DOCKERFILE.read_text())


def _args(keyword: str) -> list[str]:
    return [args for kw, args in _instructions() if kw == keyword]


def _exec_form(args: str) -> list[str]:
    parsed = json.loads(args)
    assert isinstance(parsed, list), f"use the exec form (JSON array): {args}"
    return [str(a) for a in parsed]


def _dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in _args("ENV"):
        for pair in shlex.split(args):
            key, sep, value = pair.partition("=")
            assert sep, f"ENV {pair}: use KEY=value"
            env[key] = value
    return env


def _compose() -> dict[str, Any]:
    compose = contract.load_yaml(contract.COMPOSE)
    assert isinstance(compose, dict)
    return compose


def _service_env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    assert isinstance(env, dict), "write environment as a mapping"
    return {k: contract.interpolate_defaults(str(v)) for k, v in env.items()}


def _container_ports(service: dict[str, Any]) -> set[int]:
    return {int(str(p).rsplit(":", 1)[-1].split("/")[0]) for p in service.get("ports", [])}


def _guards() -> dict[str, dict[str, Any]]:
    """The sidecars of compose.yaml (one-shot jobs of the same image, like `calibrate`, are no
    sidecar: tests/deploy/test_calibration_jobs.py checks them)."""
    return {
        name: service
        for name, service in _compose()["services"].items()
        if service.get("image", "").startswith("mirage-guard") and service.get("restart") != "no"
    }


# --- Dockerfile --------------------------------------------------------------------------


def test_base_image_is_python_311_slim() -> None:
    assert _instructions()[0] == ("FROM", "python:3.11-slim")


def test_torch_cpu_is_installed_before_the_project() -> None:
    runs = _args("RUN")
    torch = [i for i, r in enumerate(runs) if re.search(r"pip install\s+torch==", r)]
    project = [i for i, r in enumerate(runs) if "pip install '.[all]'" in r]
    assert torch, "no RUN pip install torch==..."
    assert project, "no RUN pip install '.[all]'"
    assert TORCH in runs[torch[0]].split()
    assert torch[0] < project[0]
    # the pin matches the one pyproject.toml documents for the embed extra
    assert TORCH in (contract.REPO / "pyproject.toml").read_text()


def test_image_copies_every_wheel_package_and_the_readme() -> None:
    meta = contract.pyproject()
    hook = meta["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["path"]
    packages = [*contract.wheel_packages(), str(Path(hook).parent)]
    copied = {args.split()[0] for args in _args("COPY")} | {
        src for args in _args("COPY") for src in args.split()[:-1]
    }
    for needed in [*packages, "pyproject.toml", meta["project"]["readme"]]:
        assert needed in copied, f"the image does not COPY {needed}"
    ignore = (contract.DEPLOY / "Dockerfile.dockerignore").read_text().split()
    for needed in packages:
        assert f"!{needed}/**" in ignore, f"Dockerfile.dockerignore excludes {needed}"


def test_runs_as_non_root_user() -> None:
    users = _args("USER")
    assert users, "no USER instruction"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    last_user = max(i for i, (kw, _) in enumerate(_instructions()) if kw == "USER")
    assert all(kw != "RUN" for kw, _ in _instructions()[last_user:]), "RUN after USER runs as it"


def test_port_exposed_and_configured_is_the_settings_default() -> None:
    port = contract.default_port()
    assert _args("EXPOSE") == [str(port)]
    env = _dockerfile_env()
    assert env["MIRAGE_PORT"] == str(port)
    assert env["MIRAGE_HOST"] == "0.0.0.0", "the container must listen on all interfaces"


def test_healthcheck_probes_healthz_on_the_configured_port() -> None:
    (healthcheck,) = _args("HEALTHCHECK")
    options, _, command = healthcheck.partition("CMD ")
    assert "--interval=" in options
    argv = _exec_form(command)
    probe = " ".join(argv)
    assert contract.HEALTH_PATH in probe
    assert "MIRAGE_PORT" in probe
    assert f"'{contract.default_port()}'" in probe


def test_entrypoint_is_mirage_serve() -> None:
    (entrypoint,) = _args("ENTRYPOINT")
    (cmd,) = _args("CMD")
    assert [*_exec_form(entrypoint), *_exec_form(cmd)] == ["mirage", "serve"]
    assert "mirage" in contract.pyproject()["project"]["scripts"]


def test_dockerfile_env_is_a_valid_guard_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_valid_settings(_dockerfile_env(), monkeypatch)


def _assert_valid_settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mirage_guard.guard.settings import GuardSettings

    mirage = {k: v for k, v in env.items() if k.startswith("MIRAGE_")}
    assert mirage
    for key, value in mirage.items():
        monkeypatch.setenv(key, value)
    settings = GuardSettings()
    prefix = GuardSettings.model_config.get("env_prefix", "")
    for key in mirage:
        assert key.removeprefix(prefix).lower() in settings.model_fields_set, key


# --- compose ------------------------------------------------------------------------------


def test_compose_has_the_sidecar_prometheus_grafana_and_a_vllm_profile() -> None:
    services = _compose()["services"]
    assert {"mirage-guard", "prometheus", "grafana", "vllm"} <= services.keys()
    assert "profiles" not in services["mirage-guard"]
    assert services["vllm"]["profiles"] == ["vllm"]
    image = contract.interpolate_defaults(services["vllm"]["image"])
    assert image.split(":")[0] == "vllm/vllm-openai"


def test_compose_builds_the_dockerfile() -> None:
    for name, guard in _guards().items():
        build = guard["build"]
        assert (contract.DEPLOY / build["context"] / build["dockerfile"]).resolve() == (
            contract.DOCKERFILE
        ), name


def test_compose_guards_listen_on_the_settings_port(monkeypatch: pytest.MonkeyPatch) -> None:
    port = contract.default_port()
    assert _guards()
    for name, guard in _guards().items():
        env = _service_env(guard)
        assert env["MIRAGE_PORT"] == str(port), name
        assert _container_ports(guard) == {port}, name
        _assert_valid_settings(env, monkeypatch)


def test_vllm_profile_guard_writes_through_the_vllm_server() -> None:
    services = _compose()["services"]
    vllm_guards = [g for g in _guards().values() if "vllm" in g.get("profiles", [])]
    assert vllm_guards, "no guard in the vllm profile"
    command = [contract.interpolate_defaults(str(a)) for a in services["vllm"]["command"]]
    served = command[command.index("--served-model-name") + 1]
    vllm_port = command[command.index("--port") + 1]
    for guard in vllm_guards:
        env = _service_env(guard)
        assert env["MIRAGE_WRITER_MODEL"] == f"hosted_vllm/{served}"
        assert env["MIRAGE_WRITER_API_BASE"] == f"http://vllm:{vllm_port}/v1"
        assert guard["depends_on"]["vllm"]["condition"] == "service_healthy"


def test_prometheus_in_compose_loads_the_deploy_config_and_rules() -> None:
    prometheus = _compose()["services"]["prometheus"]
    mounts = dict(reversed(v.split(":")[:2]) for v in prometheus["volumes"])
    config_arg = next(a for a in prometheus["command"] if a.startswith("--config.file="))
    config_in_container = config_arg.partition("=")[2]
    assert (contract.DEPLOY / mounts[config_in_container]).resolve() == contract.PROMETHEUS_CONFIG
    config = contract.load_yaml(contract.PROMETHEUS_CONFIG)
    container_dir = config_in_container.rsplit("/", 1)[0]
    for rule_file in config["rule_files"]:
        assert (contract.DEPLOY / mounts[f"{container_dir}/{rule_file}"]).resolve() == (
            contract.RULES
        )
    # every name Prometheus discovers is a compose service
    names = {
        n
        for job in config["scrape_configs"]
        for sd in job.get("dns_sd_configs", [])
        for n in sd["names"]
    }
    assert names <= _compose()["services"].keys()


def test_compose_images_name_no_registry_host() -> None:
    for name, service in _compose()["services"].items():
        image = contract.interpolate_defaults(service["image"])
        first = image.split("/")[0]
        assert "/" not in image or not re.search(r"[.:]", first) or first == "localhost", (
            f"{name}: {image} names a registry host"
        )
