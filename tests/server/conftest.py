"""Sidecar wiring for tests: real app and Guard (hashing embedder), fake store and writer."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from mirage_guard.adapters import MemoryBackend
from mirage_guard.adapters.server import create_app
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.llm import FunctionLLM, LLMClient, Message
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore, claims_reply

KEYS = "key-a:tenant-a,key-b:tenant-b"
A = {"Authorization": "Token key-a"}
B = {"X-API-Key": "key-b"}
_LINE = re.compile(r"^\[(\S+)\] user: (.+)$", re.MULTILINE)


def echo_writer(model: str = "mock/echo-writer") -> FunctionLLM:
    """A writer that states back every user turn as a grounded fact citing it."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        found = _LINE.findall(messages[-1].content)
        return claims_reply(*((f"User said: {text}", tid, "GROUNDED", 0.9) for tid, text in found))

    return FunctionLLM(rule, model=model)


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def make_client(data_dir: Path, store: InMemoryStore) -> Iterator[Callable[..., TestClient]]:
    clients: list[TestClient] = []

    def build(
        *,
        writer: LLMClient | None = None,
        backend: MemoryBackend | None = None,
        **settings: Any,
    ) -> TestClient:
        s = GuardSettings(data_dir=data_dir, **settings)
        app: FastAPI = create_app(
            s,
            guard=Guard.from_settings(s, embedder=HashingEmbedder()),
            backend=backend or store,
            writer_llm=writer or echo_writer(),
        )
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield build
    for c in clients:
        c.__exit__(None, None, None)
