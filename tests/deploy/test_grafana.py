"""deploy/grafana: a valid dashboard whose queries select real metrics and recording rules."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mirage_guard.guard._domain import Provenance
from tests.deploy import contract

PROVISIONING = contract.DEPLOY / "grafana" / "provisioning"
PANEL_TYPES = {"row", "timeseries", "stat", "heatmap", "gauge", "bargauge", "table", "text"}


def _dashboard() -> dict[str, Any]:
    data = json.loads(contract.DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def _panels() -> list[dict[str, Any]]:
    panels: list[dict[str, Any]] = []
    for panel in _dashboard()["panels"]:
        panels.append(panel)
        panels.extend(panel.get("panels", []))  # panels of collapsed rows
    return panels


def _targets() -> list[tuple[str, dict[str, Any]]]:
    return [(p["title"], t) for p in _panels() for t in p.get("targets", [])]


def _datasource_uid() -> str:
    datasources = contract.load_yaml(PROVISIONING / "datasources" / "prometheus.yml")
    (prometheus,) = [d for d in datasources["datasources"] if d["type"] == "prometheus"]
    uid = prometheus["uid"]
    assert isinstance(uid, str)
    return uid


def test_dashboard_is_grafana_json() -> None:
    dash = _dashboard()
    assert isinstance(dash["schemaVersion"], int)
    assert dash["schemaVersion"] >= 36
    assert dash["uid"]
    assert dash["title"]
    assert dash["panels"]
    ids = [p["id"] for p in _panels()]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in _panels():
        assert panel["type"] in PANEL_TYPES, panel["title"]
        grid = panel["gridPos"]
        assert {"h", "w", "x", "y"} <= grid.keys()
        assert grid["x"] + grid["w"] <= 24, f"{panel['title']} overflows the 24-column grid"


def test_panels_do_not_overlap() -> None:
    cells: dict[tuple[int, int], str] = {}
    for panel in _dashboard()["panels"]:
        g = panel["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps {cells[(x, y)]}"
                cells[(x, y)] = panel["title"]


def test_every_data_panel_has_queries_with_unique_ref_ids() -> None:
    for panel in _panels():
        if panel["type"] in {"row", "text"}:
            continue
        targets = panel.get("targets", [])
        assert targets, f"{panel['title']} has no query"
        ref_ids = [t["refId"] for t in targets]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]


@pytest.mark.parametrize(("title", "target"), _targets(), ids=lambda v: str(v)[:40])
def test_query_selects_real_metrics_and_labels(title: str, target: dict[str, Any]) -> None:
    contract.check_expr(target["expr"], f"panel {title!r}")


def test_queries_use_the_provisioned_datasource() -> None:
    variables = {v["name"]: v for v in _dashboard()["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["datasource"]["current"]["value"] == _datasource_uid()
    for panel in _panels():
        for ref in [panel.get("datasource"), *(t["datasource"] for t in panel.get("targets", []))]:
            if ref is None:
                continue
            assert ref["type"] == "prometheus", panel["title"]
            assert ref["uid"] in {"${datasource}", _datasource_uid()}, panel["title"]


def test_template_variables_match_the_code() -> None:
    variables = {v["name"]: v for v in _dashboard()["templating"]["list"]}
    query = variables["model"]["definition"]
    m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", query)
    assert m, query
    metric, label = m.groups()
    assert label in contract.exposed_series()[metric]
    provenance = variables["provenance"]["query"].split(",")
    assert provenance == [p.value for p in Provenance]


def test_dashboard_covers_memory_pollution() -> None:
    """One panel per question an operator asks about memory pollution."""
    used = set().union(*(contract.promql_refs(t["expr"]).metrics for _, t in _targets()))
    for required in (
        "model_provenance_action:mirage_guard_decisions:rate5m",  # provenance x action x model
        "model:mirage_guard_generated_decisions:share5m",  # memory pollution
        "model:mirage_guard_hypothesis_decisions:share5m",
        "model:mirage_guard_quarantine_decisions:share5m",
        "mirage_guard_score_bucket",  # heatmap
        "stage:mirage_guard_stage_seconds:p50_5m",
        "stage:mirage_guard_stage_seconds:p95_5m",
        "stage_kind:mirage_guard_errors:rate5m",
        "model:mirage_guard_uncalibrated_decisions:share5m",
        "mirage_guard_profile_drift",  # calibration drift (PSI) per writer model
    ):
        assert required in used, f"no panel shows {required}"
    heatmaps = [p for p in _panels() if p["type"] == "heatmap"]
    assert any(
        "mirage_guard_score_bucket" in t["expr"] and t.get("format") == "heatmap"
        for p in heatmaps
        for t in p["targets"]
    )


def test_every_guard_metric_is_on_the_dashboard() -> None:
    """Directly or through a recording rule: a new metric in adapters/_prometheus.py needs a
    panel."""
    records = contract.recording_rules()
    shown: set[str] = set()
    for _, target in _targets():
        for metric in contract.promql_refs(target["expr"]).metrics:
            shown.add(metric)
            if metric in records:
                shown |= contract.promql_refs(records[metric]).metrics
                for inner in contract.promql_refs(records[metric]).metrics & records.keys():
                    shown |= contract.promql_refs(records[inner]).metrics
    for family, kind in contract.metric_families().items():
        assert shown & contract.series_names(family, kind), f"{family} is on no panel"


def test_provisioning_points_grafana_at_prometheus_and_the_dashboard() -> None:
    compose = contract.load_yaml(contract.COMPOSE)
    datasources = contract.load_yaml(PROVISIONING / "datasources" / "prometheus.yml")
    (prometheus,) = [d for d in datasources["datasources"] if d["type"] == "prometheus"]
    host_port = re.fullmatch(r"http://([^:/]+):(\d+)/?", prometheus["url"])
    assert host_port, prometheus["url"]
    assert host_port.group(1) in compose["services"]
    assert f":{host_port.group(2)}" in " ".join(compose["services"]["prometheus"]["ports"])

    providers = contract.load_yaml(PROVISIONING / "dashboards" / "mirage-guard.yml")
    (provider,) = providers["providers"]
    mounts = dict(reversed(v.split(":")[:2]) for v in compose["services"]["grafana"]["volumes"])
    source = mounts[provider["options"]["path"]]
    assert (contract.DEPLOY / source / contract.DASHBOARD.name).resolve() == contract.DASHBOARD
    assert (contract.DEPLOY / mounts["/etc/grafana/provisioning"]).resolve() == PROVISIONING
