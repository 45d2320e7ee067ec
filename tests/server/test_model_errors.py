"""A writer-model failure reaches the client as a typed code and a generic sentence; the
provider's own text (tracebacks, file paths, validation bodies) goes to the log only; a request
the provider refused is not retried.

The writer is the real litellm client behind the real retry wrapper; respx plays llama.cpp's
server at the HTTP layer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import litellm
import pytest
import respx
from fastapi.testclient import TestClient

from mirage_guard.guard.errors import LLMAuthError, LLMTimeoutError
from mirage_guard.guard.llm import LiteLLMClient, RetryingLLM, ScriptedLLM, forget_modes
from tests.fakes.mem0 import CONVERSATION, InMemoryStore
from tests.guard.test_structured_output import LLAMA_CPP_REFUSAL

pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")

Client = Callable[..., TestClient]
_REAL_ACOMPLETION = litellm.acompletion
BASE = "http://llama.test/v1"
URL = f"{BASE}/chat/completions"
LEAKS = ("File ", "site-packages", "/opt/venv", "literal_error", "Traceback", "validation error")


@pytest.fixture
def http(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setattr(litellm, "acompletion", _REAL_ACOMPLETION)
    monkeypatch.setattr(litellm, "disable_aiohttp_transport", True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    forget_modes()
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router
    forget_modes()


def _assert_no_upstream_text(body: dict[str, Any]) -> None:
    text = json.dumps(body)
    for leak in LEAKS:
        assert leak not in text, f"client answer carries upstream text {leak!r}: {text}"


def test_a_refused_request_is_typed_generic_logged_and_not_retried(
    http: respx.MockRouter,
    make_client: Client,
    store: InMemoryStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the server refuses every request (whatever response_format) with its validation error
    route = http.post(URL).mock(return_value=httpx.Response(500, json=LLAMA_CPP_REFUSAL))
    writer = RetryingLLM(LiteLLMClient("openai/gemma3-270m", api_base=BASE), initial_s=5.0)
    client = make_client(writer=writer)
    with caplog.at_level(logging.WARNING, logger="mirage.server"):
        r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
    assert r.status_code == 502
    body = r.json()
    assert body["error"] == {
        "type": "model_request_rejected",
        "message": "the writer model's provider rejected the request; nothing was written",
        "retryable": False,
    }
    _assert_no_upstream_text(body)
    # json_schema -> json_object with schema -> json_object -> text, each refused: no retries
    assert route.call_count == 4
    assert store.items == {}
    # the mode decided for the model is part of the guard's describe output
    decided = client.get("/v1/profiles").json()["guard"]["structured_output"]
    assert [(d["model"], d["mode"]) for d in decided] == [("openai/gemma3-270m", "text")]
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert "llama_cpp/server/app.py" in logged
    assert "model_request_rejected" in logged


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (
            LLMAuthError('bad key sk-live-123 at File "/srv/app.py"', model="w"),
            502,
            "model_auth_failed",
        ),
        (
            LLMTimeoutError("read timeout from http://10.0.0.5:8000/v1", model="w"),
            503,
            "model_timeout",
        ),
    ],
)
def test_every_model_failure_hides_the_provider_text(
    make_client: Client, error: Exception, status: int, kind: str
) -> None:
    client = make_client(writer=ScriptedLLM([error] * 4))
    r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
    assert (r.status_code, r.json()["error"]["type"]) == (status, kind)
    text = json.dumps(r.json())
    assert "sk-live-123" not in text
    assert "/srv/app.py" not in text
    assert "10.0.0.5" not in text
