"""The guard against a real OpenAI-compatible server (llama.cpp's, Gemma 3 270M base model),
reached only through litellm: ``openai/gemma3-270m`` and ``hosted_vllm/gemma3-270m`` with
``api_base``. The model is weak on purpose; every path must fail closed on what it answers.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from mirage_guard.adapters.server import create_app
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import LLMTimeoutError
from mirage_guard.guard.llm import (
    LiteLLMClient,
    Message,
    RetryingLLM,
    SamplingParams,
    StructuredMode,
    forget_modes,
    mode_of,
)
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import CONVERSATION, InMemoryStore
from tests.llmserver.conftest import LocalServer

pytestmark = [
    pytest.mark.llm_server,
    pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

SHORT = SamplingParams(temperature=0.0, max_tokens=48, seed=7)


@pytest.fixture(autouse=True)
def _fresh_modes() -> None:
    forget_modes()


@pytest.mark.parametrize("prefix", ["openai", "hosted_vllm"])
async def test_litellm_reaches_the_server_with_real_usage(
    llm_server: LocalServer, prefix: str
) -> None:
    from mirage_guard.guard._audit import AuditResponse

    client = LiteLLMClient(f"{prefix}/{llm_server.model_name}", api_base=llm_server.api_base)
    done = await client.complete(
        [Message(role="user", content="Say hello.")], schema=AuditResponse, params=SHORT
    )
    # token accounting from the server's own usage fields
    assert done.usage.prompt_tokens > 0
    assert 0 < done.usage.completion_tokens <= 48
    # llama.cpp accepts text or json_object only: json_schema was refused once, then json_object
    # with the schema (compiled into a grammar) remembered
    assert done.structured_mode == "json_object_schema"
    assert mode_of(client.model, llm_server.api_base) is StructuredMode(done.structured_mode)


async def test_a_tiny_timeout_fails_typed(llm_server: LocalServer) -> None:
    client = LiteLLMClient(llm_server.openai_model, api_base=llm_server.api_base, timeout_s=0.001)
    with pytest.raises(LLMTimeoutError):
        await client.complete([Message(role="user", content="Write a long story.")])


def _capped(llm_server: LocalServer, *, timeout_s: float, max_tokens: int) -> RetryingLLM:
    """The real litellm client to the server, one try, answers capped (a base model may not
    stop on its own)."""
    client = LiteLLMClient(
        llm_server.openai_model,
        api_base=llm_server.api_base,
        timeout_s=timeout_s,
        extra={"max_tokens": max_tokens},
    )
    return RetryingLLM(client, attempts=1)


def _sidecar(llm_server: LocalServer, data_dir: Path, store: InMemoryStore, **over: object):
    fields: dict[str, object] = {
        "data_dir": data_dir,
        "audit_mode": "separate",
        "writer_model": llm_server.openai_model,
        "writer_api_base": llm_server.api_base,
        **over,
    }
    settings = GuardSettings(**fields)  # type: ignore[arg-type]
    writer = _capped(llm_server, timeout_s=90.0, max_tokens=200)
    guard = Guard.from_settings(settings, writer_llm=writer, embedder=HashingEmbedder())
    app = create_app(settings, guard=guard, backend=store, writer_llm=writer)
    return TestClient(app, raise_server_exceptions=False)


def _stated(store: InMemoryStore) -> list[str]:
    return [
        str(item.get("memory") or item.get("text"))
        for item in store.items.values()
        if (item.get("metadata") or {}).get("status") == "stated"
    ]


@pytest.mark.parametrize(
    ("audit_mode", "infer"), [("separate", False), ("separate", True), ("inline", True)]
)
def test_sidecar_audit_fails_closed_on_the_base_model(
    llm_server: LocalServer, data_dir: Path, audit_mode: str, infer: bool
) -> None:
    """``MIRAGE_AUDIT_MODE=separate`` (verbatim and extracted facts) and ``inline`` (extraction
    and audit in one call) against the real server."""
    store = InMemoryStore()
    with _sidecar(llm_server, data_dir, store, audit_mode=audit_mode) as client:
        r = client.post(
            "/memories", json={"messages": CONVERSATION, "user_id": "u1", "infer": infer}
        )
        body = r.json()
    text = json.dumps(body)
    assert "Traceback" not in text
    assert "site-packages" not in text
    if r.status_code == 200:
        # the base model's audit is junk: nothing it touched is stored as a stated fact
        assert _stated(store) == []
    else:
        assert r.status_code in (502, 503)
        assert body["error"]["type"].startswith("model_")
        assert store.items == {}


def test_sidecar_timeout_fails_closed(llm_server: LocalServer, data_dir: Path) -> None:
    store = InMemoryStore()
    with _sidecar(llm_server, data_dir, store, audit_timeout_s=0.001) as client:
        r = client.post(
            "/memories", json={"messages": CONVERSATION, "user_id": "u1", "infer": False}
        )
    if r.status_code == 200:
        assert _stated(store) == []
    else:
        assert store.items == {}


def test_the_server_as_an_independent_auditor_of_another_writer(
    llm_server: LocalServer, data_dir: Path
) -> None:
    """MIRAGE_AUDITOR_MODEL: a scripted writer extracts, the real server audits (its labels are
    junk and it has no profile), and nothing it audited becomes a stated fact on its word."""
    from mirage_guard.guard.llm import ScriptedLLM
    from tests.fakes.mem0 import conversation_reply

    settings = GuardSettings(
        data_dir=data_dir,
        audit_mode="separate",  # type: ignore[arg-type]
        auditor_model=llm_server.openai_model,
        auditor_api_base=llm_server.api_base,
        audit_timeout_s=150.0,
    )
    writer = ScriptedLLM([conversation_reply()], model="mock/the-writer")
    auditor = _capped(llm_server, timeout_s=120.0, max_tokens=300)
    guard = Guard.from_settings(
        settings, writer_llm=writer, auditor_llm=auditor, embedder=HashingEmbedder()
    )
    app = create_app(settings, guard=guard, backend=InMemoryStore(), writer_llm=writer)
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
        profiles = client.get("/v1/profiles").json()["guard"]
    assert r.status_code == 200, r.text
    # the same write with no audit at all: what the evidence alone decides
    plain = GuardSettings(data_dir=data_dir / "no-audit")
    plain_writer = ScriptedLLM([conversation_reply()], model="mock/the-writer")
    app = create_app(
        plain,
        guard=Guard.from_settings(plain, embedder=HashingEmbedder()),
        backend=InMemoryStore(),
        writer_llm=plain_writer,
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        alone = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"}).json()
    evidence = {d["text"]: d["provenance"] for d in alone["decisions"]}
    assert len(writer.calls) == 1  # the extraction; the audit went to the server
    assert profiles["auditor_model"] == llm_server.openai_model
    assert profiles["audit_profile"] is None  # no profile was fitted for the auditor
    # the server was asked: how it takes a schema is now known for it (and only for it)
    assert mode_of(llm_server.openai_model, llm_server.api_base) is not None
    decisions = r.json()["decisions"]
    assert sorted(d["text"] for d in decisions) == sorted(evidence)
    for d in decisions:
        codes = {x["code"] for x in d["reasons"]}
        assert not d["calibrated"]
        assert codes & {"self_audit_failed", "uncalibrated_writer"}, d
        if "self_audit_failed" in codes:  # a failed audit holds back even a said fact
            assert d["provenance"] != "stated"
        if d["provenance"] == "stated":  # an uncalibrated auditor only makes it more cautious
            assert evidence[d["text"]] == "stated", d


def _subset_claims(out: Path, *, train: int, dev: int) -> Path:
    """Three packaged claims (stated, inferred, over-inferred) of each of the personas with the
    shortest conversations: short answers for a slow, grammar-constrained base model."""
    from mirage_guard.calibration._data import packaged

    rows = [json.loads(x) for x in packaged("claims.jsonl").read_text().splitlines() if x]
    by_persona: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_persona.setdefault(str(row["persona_id"]), []).append(row)
    wanted = (("GROUNDED",), ("INFERRED_REASONABLE",), ("FABRICATED", "INFERRED_STEREOTYPE"))
    picked: list[dict[str, object]] = []
    for split, n in (("train", train), ("dev", dev)):
        ids = sorted(p for p, rs in by_persona.items() if rs[0]["split"] == split)
        taken = 0
        for p in ids:
            three = [next((r for r in by_persona[p] if r["label"] in w), None) for w in wanted]
            if any(r is None for r in three):
                continue
            picked.extend(r for r in three if r is not None)
            taken += 1
            if taken == n:
                break
    out.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    return out


def test_calibrate_audit_then_fit_a_profile_only_for_that_model(
    llm_server: LocalServer, tmp_path: Path
) -> None:
    from mirage_guard.adapters.cli import app

    claims = _subset_claims(tmp_path / "claims.jsonl", train=2, dev=1)
    verdicts = tmp_path / "verdicts.jsonl"
    profiles = tmp_path / "profiles"
    runner = CliRunner()
    audited = runner.invoke(
        app,
        [
            "calibrate",
            "audit",
            "--writer-model",
            llm_server.openai_model,
            "--api-base",
            llm_server.api_base,
            "--data",
            str(claims),
            "--out",
            str(verdicts),
            "--concurrency",
            "1",
            "--max-tokens",
            "400",
            "--timeout",
            "600",
        ],
    )
    assert audited.exit_code == 0, audited.output
    print(audited.output)
    records = [json.loads(x) for x in verdicts.read_text().splitlines() if x]
    assert {r["writer_model"] for r in records} <= {llm_server.openai_model}
    assert {r["structured_output"] for r in records} <= {"json_object_schema"}
    # the schema, compiled into a grammar by the server, makes even a base model's audit parse
    assert records, audited.output
    fitted = runner.invoke(
        app,
        [
            "calibrate",
            "fit",
            "--verdicts",
            str(verdicts),
            "--data",
            str(claims),
            "--profile-dir",
            str(profiles),
        ],
    )
    assert fitted.exit_code == 0, fitted.output
    print(fitted.output)
    [path] = list(profiles.glob("*.json"))
    from mirage_guard.guard.scoring import CalibrationProfile

    profile = CalibrationProfile.model_validate_json(path.read_text())
    assert profile.writer_model == llm_server.openai_model
    # the guard uses it for that model, and refuses it for any other (uncalibrated instead)
    for model, expected in (
        (llm_server.openai_model, profile.profile_id),
        ("openai/another-model", None),
    ):
        settings = GuardSettings(
            data_dir=tmp_path / "d",
            audit_mode="separate",
            writer_model=model,
            writer_api_base=llm_server.api_base,
            profile_dir=profiles,
        )
        guard = Guard.from_settings(settings, embedder=HashingEmbedder())
        assert guard.describe()["audit_profile"] == expected
        guard.close()


@dataclass(frozen=True)
class BenchRun:
    """One `mirage bench run` against the server, made once per session and shared."""

    run_dir: Path
    model: str
    judge: str
    exit_code: int
    output: str


def _bench_run(llm_server: LocalServer, run_dir: Path, *, limit: int, extra: list[str]) -> BenchRun:
    """``mirage bench run`` against the server as vLLM users reach theirs (``hosted_vllm/``),
    the judge the same server under its other name (a judge may not be a subject), with
    ``--stop "\\n\\n"`` so the base model's Task answer ends (without it the answer runs to
    ``--max-tokens`` and is a failed unit). Used by session fixtures (a run takes minutes on a
    busy CPU), so it sets up the real litellm itself instead of the function-scoped autouse
    fixture."""
    import litellm

    from mirage_guard.adapters.cli import app
    from tests import conftest as root

    model = llm_server.vllm_model
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(litellm, "acompletion", root.REAL_ACOMPLETION)
        mp.setenv("OPENAI_API_KEY", "sk-local-not-a-key")
        mp.setenv("MEM0_DIR", str(run_dir.parent / "mem0home"))
        result = CliRunner().invoke(
            app,
            [
                "bench", "run", "--models", model, "--judge", llm_server.openai_model,
                "--api-base", llm_server.api_base,
                "--api-base", f"{llm_server.openai_model}={llm_server.api_base}",
                "--run-dir", str(run_dir), "--limit", str(limit), "--tasks", "gift",
                "--stop", "\\n\\n", "--concurrency", "1", "--judge-concurrency", "1",
                "--no-progress", *extra,
            ],
        )  # fmt: skip
    print(result.output)
    return BenchRun(run_dir, model, llm_server.openai_model, result.exit_code, result.output)


@pytest.fixture(scope="session")
def one_persona_run(llm_server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    """One persona through every stage, claims in the models' own words (the paper's)."""
    run_dir = tmp_path_factory.mktemp("bench") / "run"
    extra = ["--accum-personas", "1", "--accum-rounds", "2", "--max-tokens", "200"]
    return _bench_run(llm_server, run_dir, limit=1, extra=extra)


@pytest.fixture(scope="session")
def sentence_run(llm_server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    """Five personas, Task + self-audit + judge, ``--claim-units sentences``: both stages
    label the Task answer's own sentences, the numbering fixed by the grammar."""
    run_dir = tmp_path_factory.mktemp("bench-sentences") / "run"
    extra = ["--stages", "task,self_audit,judge", "--max-tokens", "400",
             "--claim-units", "sentences"]  # fmt: skip
    return _bench_run(llm_server, run_dir, limit=5, extra=extra)


def _run_records(run_dir: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in (run_dir / "records").glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def test_bench_run_of_one_persona_through_every_stage(one_persona_run: BenchRun) -> None:
    """Every stage calls the server, accounting comes from the server's usage fields, and what
    the base model cannot answer is recorded as failed units, never as measurements."""
    run = one_persona_run
    assert run.exit_code in (0, 1), run.output
    assert "Traceback" not in run.output
    kinds = {p.stem for p in (run.run_dir / "records").glob("*.jsonl")}
    assert "probe" in kinds, kinds
    records = _run_records(run.run_dir)
    calls = [
        c for r in records for c in (r.get("calls") or []) if isinstance(c, dict) and c.get("model")
    ]
    assert calls, "no LLM call recorded"
    assert {c["model"] for c in calls} <= {run.model, run.judge}
    assert run.model in {c["model"] for c in calls}
    # real usage fields from the server, not estimates
    assert all(c["prompt_tokens"] > 0 for c in calls)
    assert sum(c["completion_tokens"] for c in calls) > 0
    # --stop reached the server: an answer that ended holds no blank line, one cut at
    # --max-tokens is a failed unit
    for task in _latest(run.run_dir, "task", run.model):
        if not task.get("error"):
            assert "\n\n" not in task["output"], task["output"]


def _latest(run_dir: Path, stage: str, model: str) -> list[dict[str, Any]]:
    """The model's latest record of each unit of one stage (Task judgements only for the
    judge), read straight from the run's files."""
    path = run_dir / "records" / f"{stage}.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    latest = {
        r["unit"]: r for r in rows if r["model"] == model and r.get("target", "task") == "task"
    }
    return list(latest.values())


def _failures(run_dir: Path, model: str) -> dict[str, int]:
    """'<stage> <error type>' -> failed units of the Task, self-audit and judge stages."""
    counts: dict[str, int] = {}
    for stage in ("task", "self_audit", "judge"):
        for row in _latest(run_dir, stage, model):
            if row.get("error"):
                key = f"{stage} {row['error']['type']}"
                counts[key] = counts.get(key, 0) + 1
    return counts


def test_calibrate_from_bench_on_the_real_server_run(
    one_persona_run: BenchRun, tmp_path: Path
) -> None:
    """`mirage calibrate from-bench` on that run prints the alignment counts and the three score
    paths (self-audit alone, evidence alone, both). A profile is written only when the run has
    aligned claims of both classes; otherwise it exits 1 naming why (for the 270M base model:
    its self-audit and the judge copy the prompt's placeholder "<claim>" instead of claims, or
    its Task answer is empty, so nothing is aligned)."""
    from mirage_guard.adapters.cli import app
    from mirage_guard.guard.errors import ProfileNotFoundError
    from mirage_guard.guard.scoring import ProfileMode, ProfileStore

    run = one_persona_run
    profiles, out = tmp_path / "profiles", tmp_path / "figures"
    result = CliRunner().invoke(
        app,
        ["calibrate", "from-bench", str(run.run_dir), "--model", run.model,
         "--profile-dir", str(profiles), "--out-dir", str(out), "--n-boot", "200"],
    )  # fmt: skip
    print(result.output)
    text = " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert "self-audit claims aligned with the judge's" in text
    assert re.search(r"score\s*┃\s*n\s*┃\s*AUROC\s*┃\s*95% CI", result.output), result.output
    for path in ("self-audit alone", "evidence alone", "both"):
        assert re.search(rf"│ {path}\s*│\s*\d+\s*│", result.output), path
    report = json.loads((out / "from_bench.json").read_text(encoding="utf-8"))
    (fitted,) = report["models"]
    assert fitted["model"] == run.model
    counts = fitted["alignment"]
    # the counts are the run's own: every Task output, every failed unit (read from the files)
    tasks = _latest(run.run_dir, "task", run.model)
    assert tasks, "the run recorded no Task unit"
    assert counts["task_outputs"] == sum(not r.get("error") for r in tasks)
    assert counts["failed_units"] == _failures(run.run_dir, run.model)
    assert set(fitted["figures"]["paths"]) == {"self_audit", "evidence", "combined"}
    store = ProfileStore(profiles)
    if fitted["profile_path"] is None:
        assert result.exit_code == 1, result.output
        assert f"{run.model}: no profile:" in text
        assert fitted["error"] in text
        assert not list(profiles.glob("*.json"))
        if counts["units_with_both"] == 0:
            assert counts["aligned"] == 0
            assert "no Task output was both self-audited and judged" in fitted["error"]
            for key, n in counts["failed_units"].items():
                assert f"{n} {key}" in fitted["error"]
            for figs in fitted["figures"]["paths"].values():
                assert figs["n_scored"] == 0
                assert figs["auroc"] is None
        return
    # aligned claims of both classes: the profile names the model and is refused for another
    assert result.exit_code == 0, result.output
    assert re.search(rf"{re.escape(run.model)}: threshold \d\.\d{{3}} \(max-f1\)", text)
    profile = store.for_writer(run.model, ProfileMode.SELF_AUDIT_SEPARATE, fitted["prompt_version"])
    assert profile.writer_model == run.model
    assert profile.oi_threshold == pytest.approx(fitted["threshold"])
    with pytest.raises(ProfileNotFoundError):
        store.for_writer(run.judge, ProfileMode.SELF_AUDIT_SEPARATE, fitted["prompt_version"])


def test_sentence_units_give_the_base_model_claims_that_align(
    sentence_run: BenchRun, tmp_path: Path
) -> None:
    """With ``--claim-units sentences`` the base model's self-audit and judgements parse (the
    grammar fixes the sentence numbers and the label enum), every claim is a sentence of the
    answer it labels, and from-bench aligns them by their identical text and scores them."""
    from mirage_guard.adapters.cli import app
    from mirage_guard.benchmark._stages import answer_sentences

    run = sentence_run
    assert run.exit_code in (0, 1), run.output
    answers = {
        (t["persona_id"], t["task"]): t["output"]
        for t in _latest(run.run_dir, "task", run.model)
        if not t.get("error")
    }
    assert answers, "no Task answer ended: nothing to label"
    for stage in ("self_audit", "judge"):
        rows = _latest(run.run_dir, stage, run.model)
        assert {(r["persona_id"], r["task"]) for r in rows} == set(answers)
        assert all(not r.get("error") for r in rows), [r["error"] for r in rows]
        for r in rows:
            sentences = answer_sentences(answers[(r["persona_id"], r["task"])])
            assert all(c["text"] in sentences for c in r["claims"]), (r["claims"], sentences)

    def texts(stage: str) -> Counter[tuple[str, str]]:
        rows = _latest(run.run_dir, stage, run.model)
        return Counter((r["persona_id"], c["text"]) for r in rows for c in r["claims"])

    both = sum((texts("judge") & texts("self_audit")).values())
    out = tmp_path / "figures"
    result = CliRunner().invoke(
        app,
        ["calibrate", "from-bench", str(run.run_dir), "--model", run.model,
         "--profile-dir", str(tmp_path / "profiles"), "--out-dir", str(out), "--n-boot", "100"],
    )  # fmt: skip
    print(result.output)
    assert "Traceback" not in result.output
    (fitted,) = json.loads((out / "from_bench.json").read_text(encoding="utf-8"))["models"]
    assert fitted["prompt_version"].startswith("bench_self_audit_sentences@")
    assert fitted["alignment"]["aligned"] == both
    # held out by persona: a claim is scored only in a fold whose training personas hold both
    # classes (none with fewer than two personas); the printed n is the scored count
    rows = {"self_audit": "self-audit alone", "evidence": "evidence alone", "combined": "both"}
    for key, figs in fitted["figures"]["paths"].items():
        assert figs["n_scored"] <= both
        if fitted["figures"]["n_folds"] < 2:
            assert figs["n_scored"] == 0
        n = figs["n_scored"]
        assert re.search(rf"│ {rows[key]}\s*│\s*{n}\s*│", result.output), rows[key]
