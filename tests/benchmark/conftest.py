"""Shared pieces for the MirageBench tests: a small persona set and a run factory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.benchmark._config import GuardArm, RunConfig, RuntimeOptions
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import Persona, load_personas
from tests.fakes.bench import JUDGE, SUBJECTS, CallLog, real_guard, recording_provider

PERSONAS_FILE = Path(__file__).with_name("personas_small.jsonl")


@pytest.fixture(scope="session")
def small_personas() -> list[Persona]:
    return load_personas(PERSONAS_FILE)


def small_config(**overrides: Any) -> RunConfig:
    values: dict[str, Any] = {
        "models": list(SUBJECTS),
        "judge": JUDGE,
        "limit": 3,
        "tasks": [Task.GIFT, Task.APARTMENT],
        "accum_personas": 1,
        "guard": GuardArm.BOTH,
    }
    values.update(overrides)
    return RunConfig(**values)


FAST = RuntimeOptions(
    progress=False,
    retry_attempts=3,
    retry_initial_s=0.0,
    rate_limit_floor_s=0.0,
    retry_jitter_s=0.0,
)


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
