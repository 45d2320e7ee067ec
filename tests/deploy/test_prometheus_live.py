"""A real Prometheus, with deploy/'s config and rules, scrapes a real GuardMetrics exporter.

The recording rules must turn the decisions the test makes into the expected memory-pollution
shares. Everything on loopback; the Prometheus process is always killed.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client import start_http_server

from mirage_guard.adapters._prometheus import GuardMetrics
from tests.deploy import contract

PROMETHEUS = shutil.which("prometheus")
DEADLINE_S = 60.0

pytestmark = [pytest.mark.slow, pytest.mark.prometheus]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert isinstance(port, int)
        return port


@contextmanager
def _exporter(metrics: GuardMetrics) -> Iterator[str]:
    server, thread = start_http_server(0, addr="127.0.0.1", registry=metrics.registry)
    try:
        yield f"127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _config(tmp_path: Path, target: str) -> Path:
    """deploy/'s prometheus.yml and rules.yml, pointed at the exporter and sped up."""
    config = contract.load_yaml(contract.PROMETHEUS_CONFIG)
    config["global"].update(scrape_interval="1s", scrape_timeout="1s", evaluation_interval="1s")
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "mirage-guard"]
    job.pop("dns_sd_configs", None)
    job["static_configs"] = [{"targets": [target]}]
    config["scrape_configs"] = [job]

    rules = contract.load_yaml(contract.RULES)
    for group in rules["groups"]:
        group.pop("interval", None)  # evaluate every second, like the global interval
    (tmp_path / contract.RULES.name).write_text(yaml.safe_dump(rules))
    config["rule_files"] = [str(tmp_path / name) for name in config["rule_files"]]
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


@contextmanager
def _prometheus(config: Path, tmp_path: Path) -> Iterator[str]:
    assert PROMETHEUS, "needs prometheus (Debian package `prometheus`; -m 'not prometheus')"
    port = _free_port()
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(timeout=30)
        log.close()


def _poll(what: str, probe: Callable[[], Any], done: Callable[[Any], bool], log: Path) -> Any:
    """Call ``probe`` until ``done(result)``; bounded by DEADLINE_S (a bound, not an assertion)."""
    deadline = time.monotonic() + DEADLINE_S
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except httpx.HTTPError as exc:  # not listening yet, or 503 while starting up
            last = exc
        else:
            if done(last):
                return last
        time.sleep(0.5)
    tail = log.read_text()[-3000:] if log.exists() else ""
    pytest.fail(f"gave up waiting for {what}; last: {last!r}\nprometheus log:\n{tail}")


def _query(client: httpx.Client, promql: str) -> dict[str, float]:
    """Instant query -> {model label (or ''): value}."""
    response = client.get("/api/v1/query", params={"query": promql})
    response.raise_for_status()
    body = response.json()
    assert body["status"] == "success", body
    return {r["metric"].get("model", ""): float(r["value"][1]) for r in body["data"]["result"]}


def test_recording_rules_compute_memory_pollution_from_a_live_exporter(tmp_path: Path) -> None:
    metrics = GuardMetrics()
    # writer-a: 5 stated, 3 inferred, 2 generated; 4 of its 10 decisions uncalibrated.
    # writer-b: 4 stated, nothing else (its generated share must be 0, not absent).
    plan = {
        ("writer-a", "stated", "store"): 5,
        ("writer-a", "inferred", "store_as_hypothesis"): 3,
        ("writer-a", "generated", "quarantine"): 2,
        ("writer-b", "stated", "store"): 4,
    }
    uncalibrated = {"writer-a": 4, "writer-b": 0}
    # Every series exists at 0 before the first scrape, so rate() sees the whole increase.
    decisions = {key: metrics.decisions.labels(*key) for key in plan}
    uncal = {model: metrics.uncalibrated.labels(model) for model in uncalibrated}

    log = tmp_path / "prometheus.log"
    with (
        _exporter(metrics) as target,
        _prometheus(_config(tmp_path, target), tmp_path) as url,
        httpx.Client(base_url=url, timeout=5) as client,
    ):
        _poll(
            "Prometheus to be ready",
            lambda: client.get("/-/ready").status_code,
            lambda status: status == 200,
            log,
        )
        _poll(
            "the first scrape of the exporter",
            lambda: _query(client, 'up{job="mirage-guard"}'),
            lambda r: r.get("") == 1.0,
            log,
        )
        _poll(
            "the zero-valued series to be stored",
            lambda: _query(client, "mirage_guard_decisions_total"),
            lambda r: len(r) == 2,
            log,
        )
        for key, n in plan.items():
            decisions[key].inc(n)
        for model, n in uncalibrated.items():
            uncal[model].inc(n)

        expected = {
            "model:mirage_guard_generated_decisions:share5m": {"writer-a": 0.2, "writer-b": 0},
            "model:mirage_guard_hypothesis_decisions:share5m": {
                "writer-a": 0.3,
                "writer-b": 0,
            },
            "model:mirage_guard_quarantine_decisions:share5m": {
                "writer-a": 0.2,
                "writer-b": 0,
            },
            "model:mirage_guard_uncalibrated_decisions:share5m": {
                "writer-a": 0.4,
                "writer-b": 0,
            },
        }

        def matches(got: dict[str, dict[str, float]]) -> bool:
            return all(
                got[rule].keys() == want.keys()
                and all(got[rule][m] == pytest.approx(v, abs=1e-9) for m, v in want.items())
                for rule, want in expected.items()
            )

        _poll(
            "the recording rules to reach the expected shares",
            lambda: {rule: _query(client, rule) for rule in expected},
            matches,
            log,
        )
