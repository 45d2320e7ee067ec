"""deploy/prometheus refers only to what adapters/_prometheus.py exposes, and promtool agrees."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.deploy import contract

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.prometheus


def _promtool(*args: str, cwd: Path) -> None:
    assert PROMTOOL, "needs promtool (Debian package `prometheus`; deselect: -m 'not prometheus')"
    result = subprocess.run(
        [PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"promtool {' '.join(args)}:\n{result.stdout}\n{result.stderr}"


@needs_promtool
def test_promtool_check_config() -> None:
    _promtool(
        "check", "config", contract.PROMETHEUS_CONFIG.name, cwd=contract.PROMETHEUS_CONFIG.parent
    )


@needs_promtool
def test_promtool_check_rules() -> None:
    _promtool("check", "rules", contract.RULES.name, cwd=contract.RULES.parent)


@needs_promtool
def test_promtool_test_rules() -> None:
    _promtool("test", "rules", contract.RULES_TEST.name, cwd=contract.RULES_TEST.parent)


@pytest.mark.parametrize("record", sorted(contract.recording_rules()))
def test_recording_rule_refers_to_real_metrics_and_labels(record: str) -> None:
    expr = contract.recording_rules()[record]
    refs = contract.check_expr(expr, record)
    _level, metric, operation = record.split(":")
    assert metric.startswith("mirage_guard_"), record
    assert operation, record
    # the level names exactly the labels the result keeps
    inherited = set().union(
        *(contract.level_labels(s.metric) for s in refs.selectors if ":" in s.metric)
    )
    missing = contract.level_labels(record) - (refs.grouping_labels | inherited)
    assert not missing, f"{record}: level names {sorted(missing)} but the expr keeps none"


@pytest.mark.parametrize("alert", sorted(contract.alert_rules()))
def test_alert_refers_to_real_metrics_and_labels(alert: str) -> None:
    rule = contract.alert_rules()[alert]
    contract.check_expr(rule["expr"], alert)
    assert rule["labels"]["severity"] in {"info", "warning", "critical"}
    assert {"summary", "description"} <= rule["annotations"].keys()


def test_every_guard_metric_feeds_a_rule() -> None:
    """Counters and histograms feed a recording rule; a gauge (already a level) an alert."""
    recorded = set().union(
        *(contract.promql_refs(e).metrics for e in contract.recording_rules().values())
    )
    alerted = set().union(
        *(contract.promql_refs(r["expr"]).metrics for r in contract.alert_rules().values())
    )
    for family, kind in contract.metric_families().items():
        names = contract.series_names(family, kind)
        used = recorded | alerted if kind == "gauge" else recorded
        assert used & names, f"{family} ({kind}) is used by no rule"


def test_profile_drift_alert_uses_the_guard_threshold() -> None:
    from mirage_guard.guard.scoring import PSI_STALE

    rule = contract.alert_rules()["MirageProfileDrift"]
    assert rule["expr"].strip().endswith(f"> {PSI_STALE}")
    assert "mirage_guard_profile_drift" in contract.promql_refs(rule["expr"]).metrics


def test_required_pollution_rules_and_alerts_exist() -> None:
    records = contract.recording_rules()
    for required in (
        "model_provenance:mirage_guard_decisions:share5m",
        "model_action:mirage_guard_decisions:share5m",
        "model:mirage_guard_generated_decisions:share5m",
        "model:mirage_guard_hypothesis_decisions:share5m",
        "model:mirage_guard_quarantine_decisions:share5m",
        "model:mirage_guard_uncalibrated_decisions:share5m",
        "stage:mirage_guard_stage_seconds:p95_5m",
    ):
        assert required in records
    assert {
        "MirageMemoryPollutionSpike",
        "MirageAuditErrors",
        "MirageUncalibratedDecisions",
        "MirageProfileDrift",
    } <= contract.alert_rules().keys()


def test_rules_test_covers_every_rule() -> None:
    """Each recording rule is checked by value and each alert fires in rules_test.yml."""
    suite = contract.load_yaml(contract.RULES_TEST)
    assert suite["rule_files"] == [contract.RULES.name]
    tested_exprs = " ".join(
        case["expr"] for test in suite["tests"] for case in test.get("promql_expr_test", [])
    )
    for record in contract.recording_rules():
        assert record in tested_exprs, f"{record} has no promql_expr_test"
    fired = {
        case["alertname"]
        for test in suite["tests"]
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    assert fired == contract.alert_rules().keys()


def test_prometheus_config_scrapes_the_sidecar() -> None:
    config = contract.load_yaml(contract.PROMETHEUS_CONFIG)
    assert config["rule_files"] == [contract.RULES.name]
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "mirage-guard")
    assert job.get("metrics_path", "/metrics") == contract.METRICS_PATH
    ports = [sd["port"] for sd in job.get("dns_sd_configs", [])]
    targets = [t for sc in job.get("static_configs", []) for t in sc["targets"]]
    ports += [int(t.rsplit(":", 1)[1]) for t in targets]
    assert ports, "the mirage-guard job has no target"
    assert set(ports) == {contract.default_port()}
    # the alert that watches the sidecar matches this job's name
    assert "mirage-guard" in contract.alert_rules()["MirageGuardDown"]["expr"]
