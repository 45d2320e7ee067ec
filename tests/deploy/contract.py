"""What deploy/ may refer to, read from the code, and small parsers for the deploy files.

The code is the source of truth: metric names and labels come from a live
``mirage_guard.adapters.GuardMetrics`` registry, env vars and the port from ``GuardSettings``.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.metrics import MetricWrapperBase

from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.guard.settings import GuardSettings

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
RULES = DEPLOY / "prometheus" / "rules.yml"
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
RULES_TEST = DEPLOY / "prometheus" / "rules_test.yml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "mirage-guard.json"
COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
CHART = DEPLOY / "helm" / "mirage-guard"

# The sidecar's routes (adapters/server): liveness, readiness, Prometheus exposition.
HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
SIDECAR_PATHS = frozenset({HEALTH_PATH, READY_PATH, METRICS_PATH})

# Labels Prometheus attaches to every scraped series.
TARGET_LABELS = frozenset({"job", "instance"})
# Series Prometheus produces itself.
PROMETHEUS_SERIES = {"up": frozenset()}

# MIRAGE_* names that deploy files may mention although they are no GuardSettings field,
# each with the file that reads it (the test checks that file really does).
NON_SETTING_ENV = {"MIRAGE_VLLM_API_BASE": REPO / "tests" / "conftest.py"}


def default_port() -> int:
    port = GuardSettings.model_fields["port"].default
    assert isinstance(port, int)
    return port


def setting_env_names() -> frozenset[str]:
    prefix = GuardSettings.model_config.get("env_prefix", "")
    return frozenset(f"{prefix}{name}".upper() for name in GuardSettings.model_fields)


def wheel_packages() -> list[str]:
    """The top-level folders the build hook installs under ``mirage_guard`` (read, not imported)."""
    hook = pyproject()["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["path"]
    tree = ast.parse((REPO / hook).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PACKAGES":
            return [str(name) for name in ast.literal_eval(node.value)]
    raise AssertionError(f"{hook} defines no PACKAGES")


def pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


@cache
def exposed_series() -> dict[str, frozenset[str]]:
    """Every series name the guard exposes -> its label names, as prometheus_client writes them.

    Each collector gets one child with placeholder label values and one observation, so the
    names carry the suffixes Prometheus sees (``_total``, ``_bucket``, ``_sum``, ``_count``).
    """
    metrics = GuardMetrics()
    for collector in vars(metrics).values():
        if not isinstance(collector, MetricWrapperBase):
            continue
        # prometheus_client has no public accessor for a collector's label names
        labelnames: tuple[str, ...] = collector._labelnames
        child = collector.labels(*("x" for _ in labelnames)) if labelnames else collector
        if hasattr(child, "observe"):
            child.observe(0.5)
        else:
            child.inc()
    series: dict[str, set[str]] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            series.setdefault(sample.name, set()).update(sample.labels)
    return {name: frozenset(labels) for name, labels in series.items()}


def series_names(family: str, kind: str) -> set[str]:
    """The series a family of this type exposes (what PromQL selects)."""
    if kind == "counter":
        return {family + "_total"}
    if kind == "gauge":
        return {family}
    return {family + "_bucket", family + "_sum", family + "_count"}


def metric_families() -> dict[str, str]:
    """Family name (as in adapters/_prometheus.py) -> type."""
    return {family.name: family.type for family in GuardMetrics().registry.collect()}


# --- PromQL --------------------------------------------------------------------------------

_AGGREGATIONS = frozenset(
    [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
    ]
)
_GROUPING = frozenset(["by", "without", "on", "ignoring", "group_left", "group_right"])
_KEYWORDS = (
    _AGGREGATIONS | _GROUPING | frozenset(["and", "or", "unless", "bool", "offset", "inf", "nan"])
)
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<matchers>\{(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^}"'])*\})
  | (?P<range>\[[^\]]*\])
  | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?:ms|[smhdwy])?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<other>.)
    """,
    re.VERBOSE,
)
_MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)")
_GRAFANA_VARIABLE = re.compile(r"\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Selector:
    metric: str
    labels: frozenset[str]


@dataclass
class PromQLRefs:
    selectors: list[Selector] = field(default_factory=list)
    grouping_labels: set[str] = field(default_factory=set)

    @property
    def metrics(self) -> set[str]:
        return {s.metric for s in self.selectors}


def promql_refs(expr: str) -> PromQLRefs:
    """Metric selectors and grouping labels of a PromQL expression (Grafana variables allowed).

    Not a full parser: enough for the expressions in deploy/, and strict where it matters: an
    identifier that is no function, keyword or grouping label is taken for a metric name.
    """
    tokens = [
        (m.lastgroup, m.group())
        for m in _TOKEN.finditer(_GRAFANA_VARIABLE.sub("0", expr))
        if m.lastgroup != "ws"
    ]
    refs = PromQLRefs()
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else (None, "")
        if kind == "ident" and text in _GROUPING and nxt[1] == "(":
            i += 2
            while i < len(tokens) and tokens[i][1] != ")":
                if tokens[i][0] == "ident":
                    refs.grouping_labels.add(tokens[i][1])
                i += 1
        elif kind == "ident" and text not in _KEYWORDS and nxt[1] != "(":
            labels = frozenset()
            if nxt[0] == "matchers":
                labels = frozenset(_MATCHER.findall(nxt[1]))
                i += 1
            refs.selectors.append(Selector(text, labels))
        elif kind == "matchers":
            raise AssertionError(f"selector without a metric name in {expr!r}")
        i += 1
    return refs


def recording_rules() -> dict[str, str]:
    rules: dict[str, str] = {}
    for group in load_yaml(RULES)["groups"]:
        for rule in group["rules"]:
            if "record" in rule:
                assert rule["record"] not in rules, f"{rule['record']} recorded twice"
                rules[rule["record"]] = rule["expr"]
    return rules


def alert_rules() -> dict[str, dict[str, Any]]:
    return {
        rule["alert"]: rule
        for group in load_yaml(RULES)["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }


def level_labels(recorded: str) -> frozenset[str]:
    """Labels a recording rule keeps, from its ``level:metric:operation`` name."""
    level = recorded.split(":")[0]
    return frozenset(level.split("_")) if level else frozenset()


def known_series() -> dict[str, frozenset[str]]:
    """Every name an expression may select -> the labels it may match on."""
    known = {name: labels | TARGET_LABELS for name, labels in exposed_series().items()}
    known.update({name: labels | TARGET_LABELS for name, labels in PROMETHEUS_SERIES.items()})
    known.update({name: level_labels(name) for name in recording_rules()})
    return known


def check_expr(expr: str, where: str) -> PromQLRefs:
    """Assert that ``expr`` selects only known series by labels they carry."""
    refs = promql_refs(expr)
    known = known_series()
    assert refs.selectors, f"{where}: no metric in {expr!r}"
    for selector in refs.selectors:
        assert selector.metric in known, (
            f"{where}: {selector.metric!r} is neither exposed by adapters/_prometheus.py "
            f"nor recorded in {RULES.name}"
        )
        unknown = selector.labels - known[selector.metric]
        assert not unknown, f"{where}: {selector.metric} has no label(s) {sorted(unknown)}"
    available = set().union(*(known[s.metric] for s in refs.selectors))
    unknown_grouping = refs.grouping_labels - available
    assert not unknown_grouping, (
        f"{where}: grouping by label(s) {sorted(unknown_grouping)} that none of "
        f"{sorted(refs.metrics)} carries"
    )
    return refs


# --- compose and Helm --------------------------------------------------------------------

_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")


def interpolate_defaults(value: str) -> str:
    """Compose-style ``${VAR:-default}`` with the defaults (the environment is not consulted)."""
    return _INTERPOLATION.sub(lambda m: m.group(2) or "", value)


_TEMPLATE_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def values_lookup(values: dict[str, Any], dotted: str) -> Any:
    node: Any = values
    for key in dotted.strip(".").split("."):
        assert isinstance(node, dict), f".Values{dotted}: {key} is below a leaf"
        assert key in node, f".Values{dotted} is not in values.yaml"
        node = node[key]
    return node


def render_chart(
    values: dict[str, Any], *, release: str = "rel", namespace: str = "ns"
) -> list[dict[str, Any]]:
    """Every manifest of the chart as ``helm install`` renders it (Helm's own Go SDK through
    ``helm-python-sdk``, a dev dependency: no helm binary, no cluster)."""
    import helm_python

    with helm_python.Chart.load(str(CHART)) as chart:
        files = chart.render(values, name=release, namespace=namespace)
    docs: list[dict[str, Any]] = []
    for name, text in sorted(files.items()):
        if name.endswith(".yaml"):
            docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def render_lite(template: str, values: dict[str, Any]) -> Any:
    """Parse a Helm template as YAML without helm: a structural check, not a renderer.

    Lines that hold only control actions (if/range/with/end, include|nindent, toYaml) are
    dropped, keeping every branch; a ``.Values.x`` (optionally ``| quote``) becomes its value
    from values.yaml (quoted with ``| quote``); any other action becomes ``TEMPLATED``.
    """
    lines = []
    for line in template.splitlines():
        stripped = _TEMPLATE_ACTION.sub("", line).strip()
        if not stripped and "{{" in line:
            continue

        def substitute(m: re.Match[str]) -> str:
            action = m.group(1)
            ref = re.fullmatch(r"\.Values((?:\.\w+)+)(\s*\|\s*quote)?", action)
            if ref:
                value = values_lookup(values, ref.group(1))
                return json.dumps(str(value)) if ref.group(2) else str(value)
            return "TEMPLATED"

        lines.append(_TEMPLATE_ACTION.sub(substitute, line))
    return yaml.safe_load("\n".join(lines))


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, args = full.partition(" ")
        instructions.append((keyword.upper(), args.strip()))
    assert not pending, "Dockerfile ends inside a continuation line"
    return instructions


_URL_HOST = re.compile(r"\b[a-z][a-z0-9+.-]*://(?:[^@/\s'\"]*@)?([^/:\s'\"?#]+)", re.IGNORECASE)


def url_hosts(text: str) -> set[str]:
    return {m.group(1).lower() for m in _URL_HOST.finditer(text)}


def deploy_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file())
