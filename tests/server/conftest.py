"""Sidecar wiring for tests: real app and Guard (hashing embedder), fake store and writer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from mirage_guard.adapters import MemoryBackend
from mirage_guard.adapters.server import create_app
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.llm import LLMClient
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore
from tests.server.sidecar_setup import KEYS, echo_writer, on_loopback


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


@pytest.fixture
def sidecar_url(data_dir: Path, store: InMemoryStore) -> Iterator[str]:
    """The sidecar on a real uvicorn (loopback), with the fake store and hashing embedder."""
    s = GuardSettings(data_dir=data_dir, api_keys=KEYS)
    application = create_app(
        s,
        guard=Guard.from_settings(s, embedder=HashingEmbedder()),
        backend=store,
        writer_llm=echo_writer(),
    )
    with on_loopback(application) as url:
        yield url
