"""The guard against a real OpenAI-compatible server (llama.cpp's, Gemma 3 270M base model),
reached only through litellm: ``openai/gemma3-270m`` and ``hosted_vllm/gemma3-270m`` with
``api_base``. The model is weak on purpose; every path must fail closed on what it answers.
"""

from __future__ import annotations

import json
from pathlib import Path

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
    # llama.cpp accepts text or json_object only: json_schema was refused once, then remembered
    assert done.structured_mode in {"json_object", "text"}
    assert mode_of(client.model, llm_server.api_base) is StructuredMode(done.structured_mode)


async def test_a_tiny_timeout_fails_typed(llm_server: LocalServer) -> None:
    client = LiteLLMClient(llm_server.openai_model, api_base=llm_server.api_base, timeout_s=0.001)
    with pytest.raises(LLMTimeoutError):
        await client.complete([Message(role="user", content="Write a long story.")])


def _sidecar(llm_server: LocalServer, data_dir: Path, store: InMemoryStore, **over: object):
    settings = GuardSettings(
        data_dir=data_dir,
        audit_mode="separate",
        writer_model=llm_server.openai_model,
        writer_api_base=llm_server.api_base,
        **over,  # type: ignore[arg-type]
    )
    # the real litellm client, answers capped (a base model may not stop on its own)
    writer = RetryingLLM(
        LiteLLMClient(
            llm_server.openai_model,
            api_base=llm_server.api_base,
            timeout_s=90.0,
            extra={"max_tokens": 200},
        ),
        attempts=1,
    )
    guard = Guard.from_settings(settings, writer_llm=writer, embedder=HashingEmbedder())
    app = create_app(settings, guard=guard, backend=store, writer_llm=writer)
    return TestClient(app, raise_server_exceptions=False)


def _stated(store: InMemoryStore) -> list[str]:
    return [
        str(item.get("memory") or item.get("text"))
        for item in store.items.values()
        if (item.get("metadata") or {}).get("status") == "stated"
    ]


@pytest.mark.parametrize("infer", [False, True])
def test_sidecar_separate_audit_fails_closed_on_the_base_model(
    llm_server: LocalServer, data_dir: Path, infer: bool
) -> None:
    store = InMemoryStore()
    with _sidecar(llm_server, data_dir, store) as client:
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


def _subset_claims(out: Path, *, train: int, dev: int) -> Path:
    """The packaged claims of the personas with the shortest conversations (fits n_ctx 2048)."""
    from mirage_guard.calibration._data import packaged

    rows = [json.loads(x) for x in packaged("claims.jsonl").read_text().splitlines() if x]
    by_persona: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_persona.setdefault(str(row["persona_id"]), []).append(row)
    picked: list[dict[str, object]] = []
    for split, n in (("train", train), ("dev", dev)):
        ids = sorted(p for p, rs in by_persona.items() if rs[0]["split"] == split)[:n]
        for p in ids:
            picked.extend(by_persona[p])
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
            "300",
        ],
    )
    assert audited.exit_code == 0, audited.output
    print(audited.output)
    records = [json.loads(x) for x in verdicts.read_text().splitlines() if x]
    assert {r["writer_model"] for r in records} <= {llm_server.openai_model}
    assert {r["structured_output"] for r in records} <= {"json_object", "text"}
    if not records:
        pytest.skip("the base model's self-audit never parsed: nothing to fit (fails closed)")
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
