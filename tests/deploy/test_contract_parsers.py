"""The helpers the deploy tests rely on catch what they are meant to catch."""

from __future__ import annotations

import pytest

from tests.deploy import contract


def test_exposed_series_carry_prometheus_suffixes() -> None:
    series = contract.exposed_series()
    assert series["mirage_guard_decisions_total"] == {"model", "provenance", "action"}
    assert series["mirage_guard_stage_seconds_bucket"] == {"stage", "le"}
    assert {"mirage_guard_score_sum", "mirage_guard_score_count"} <= series.keys()
    assert "mirage_guard_decisions" not in series  # counters are only exposed with _total


def test_promql_refs_split_metrics_functions_and_grouping() -> None:
    refs = contract.promql_refs(
        'sum by (model, le) (rate(mirage_guard_score_bucket{model=~"$model", le!="+Inf"}'
        "[$__rate_interval])) / ignoring (le) group_left up offset 5m > 0.5e-3"
    )
    assert refs.selectors == [
        contract.Selector("mirage_guard_score_bucket", frozenset({"model", "le"})),
        contract.Selector("up", frozenset()),
    ]
    assert refs.grouping_labels == {"model", "le"}


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("rate(mirage_guard_decisions[5m])", "neither exposed"),  # forgot the _total suffix
        ('mirage_guard_errors_total{model="m"}', "no label"),
        ("sum by (tenant) (mirage_guard_decisions_total)", "grouping by label"),
        ('model:mirage_guard_generated_decisions:share5m{stage="x"}', "no label"),
    ],
)
def test_check_expr_rejects_unknown_names_and_labels(expr: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        contract.check_expr(expr, "example")


def test_render_lite_substitutes_values_and_drops_control_lines() -> None:
    template = (
        "spec:\n"
        "  {{- if .Values.on }}\n"
        "  port: {{ .Values.service.port }}\n"
        '  name: {{ include "x" . }}\n'
        "  {{- end }}\n"
    )
    rendered = contract.render_lite(template, {"on": True, "service": {"port": 8765}})
    assert rendered == {"spec": {"port": 8765, "name": "TEMPLATED"}}
    with pytest.raises(AssertionError, match=r"not in values\.yaml"):
        contract.render_lite("port: {{ .Values.service.prot }}\n", {"service": {"port": 1}})


def test_dockerfile_instructions_join_continuations() -> None:
    text = "FROM a\n# note\nRUN one \\\n  # inner comment\n  && two\nUSER 1\n"
    assert contract.dockerfile_instructions(text) == [
        ("FROM", "a"),
        ("RUN", "one && two"),
        ("USER", "1"),
    ]


def test_interpolate_defaults_and_url_hosts() -> None:
    assert contract.interpolate_defaults("hosted_vllm/${M:-org/model}:${P}") == (
        "hosted_vllm/org/model:"
    )
    assert contract.url_hosts("see http://vllm:8000/v1 and https://user@example.org/x") == {
        "vllm",
        "example.org",
    }
