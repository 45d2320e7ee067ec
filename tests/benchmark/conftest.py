"""Shared pieces for the MirageBench tests: a small persona set and a run factory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.benchmark._config import RunConfig
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona, load_personas
from tests.benchmark.small_run import FAST, PERSONAS_FILE, small_config
from tests.fakes.bench import CallLog, real_guard, recording_provider


@pytest.fixture(scope="session")
def small_personas() -> list[Persona]:
    return load_personas(PERSONAS_FILE)


@pytest.fixture
def make_run(
    small_personas: list[Persona],
) -> Callable[..., tuple[BenchmarkRun, CallLog]]:
    def build(
        run_dir: Path, config: RunConfig | None = None, **provider_kwargs: Any
    ) -> tuple[BenchmarkRun, CallLog]:
        log = CallLog()
        run = BenchmarkRun(
            config or small_config(),
            run_dir,
            provider=recording_provider(log, **provider_kwargs),
            options=FAST,
            guard_factory=real_guard,
            personas=small_personas,
        )
        return run, log

    return build
