"""A small MirageBench run: the persona file, a run configuration and fast runtime options
(imported from here, never from conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mirage_guard.benchmark._config import GuardArm, RunConfig, RuntimeOptions
from mirage_guard.benchmark._tasks import Task
from tests.fakes.bench import JUDGE, SUBJECTS

PERSONAS_FILE = Path(__file__).with_name("personas_small.jsonl")


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
