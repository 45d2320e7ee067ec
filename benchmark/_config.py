"""The configuration of one benchmark run (what ``mirage bench run`` flags become)."""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mirage_guard.benchmark._records import RetentionPolicy
from mirage_guard.benchmark._schemas import ClaimUnits
from mirage_guard.benchmark._tasks import Task


class GuardArm(StrEnum):
    OFF = "off"
    ON = "on"
    BOTH = "both"

    @property
    def arms(self) -> tuple[bool, ...]:
        """The ``guarded`` values this setting runs."""
        return {"off": (False,), "on": (True,), "both": (False, True)}[self.value]


class Stage(StrEnum):
    PROBE = "probe"
    TASK = "task"
    SELF_AUDIT = "self_audit"
    JUDGE = "judge"
    ACCUM = "accum"


class RunConfig(BaseModel):
    """Everything that decides which calls a run makes. Its hash pins a run directory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    models: list[str] = Field(min_length=1, description="subject models (litellm strings)")
    judge: str = Field(description="independent judge model (litellm string)")
    personas: list[str] = Field(default_factory=list, description="ids or groups; empty = all")
    personas_file: str | None = None
    tasks: list[Task] = Field(default_factory=lambda: list(Task))
    limit: int | None = Field(default=None, ge=1, description="at most this many personas")
    seed: int = 0
    guard: GuardArm = GuardArm.OFF
    stages: list[Stage] = Field(default_factory=lambda: list(Stage))
    task_temperature: float = 0.7
    judge_temperature: float = 0.0
    self_audit_temperature: float = 0.0
    max_tokens: int | None = 2048
    task_stop: list[str] = Field(
        default_factory=list,
        description="stop sequences for the Task answers (--stop), e.g. for a base model",
    )
    claim_units: ClaimUnits = Field(
        default=ClaimUnits.FREE,
        description="what the self-audit and the judge label: their own claims (the paper's) "
        "or the Task answer's sentences (--claim-units)",
    )
    samples: int = Field(default=1, ge=1, description="Task outputs per unit (--samples)")
    accum_rounds: int = Field(default=8, ge=2)
    accum_personas: int = Field(default=2, ge=0, description="personas in the Accum stage")
    accum_policies: list[RetentionPolicy] = Field(
        default_factory=lambda: [RetentionPolicy.RETAIN, RetentionPolicy.FREE]
    )
    families: dict[str, str] = Field(
        default_factory=dict, description="model -> family, for the family-clustered CI"
    )

    @model_validator(mode="after")
    def _stops_are_text(self) -> RunConfig:
        if any(not s for s in self.task_stop):
            raise ValueError("a stop sequence must not be empty")
        return self

    @model_validator(mode="after")
    def _models_are_distinct(self) -> RunConfig:
        twice = sorted({m for m in self.models if self.models.count(m) > 1})
        if twice:
            raise ValueError(
                f"subject model {twice[0]!r} is named twice: each model is ranked once"
            )
        return self

    @field_validator("stages")
    @classmethod
    def _pipeline_order(cls, stages: list[Stage]) -> list[Stage]:
        """The stages in the pipeline's order: ``task,judge,self_audit`` is the same run as
        ``task,self_audit,judge`` (it was refused as another configuration on resume)."""
        order = list(Stage)
        return sorted(stages, key=order.index)

    def refusals(self) -> list[str]:
        """Why a *new* run of this config would run something twice or nothing: a task, stage,
        persona or policy named twice (a task given twice ran every unit twice and lost the
        first calls' cost), ``--accum-personas 0`` with the accum stage, a ``--family`` for a
        model not in the run. Not validators: the manifest of a run made before them must still
        load for its report."""
        problems: list[str] = []
        named: tuple[tuple[str, list[str]], ...] = (
            ("task", [str(t) for t in self.tasks]),
            ("stage", [str(t) for t in self.stages]),
            ("persona", self.personas),
            ("accum policy", [str(t) for t in self.accum_policies]),
        )
        for field, items in named:
            twice = sorted({i for i in items if items.count(i) > 1})
            if twice:
                problems.append(f"{field} {twice[0]!r} is named twice")
        if self.max_tokens is not None and self.max_tokens < 1:
            problems.append("--max-tokens must be 1 or more")
        if Stage.ACCUM in self.stages and self.accum_personas == 0:
            problems.append(
                "--accum-personas 0 with the accum stage would run nothing (give 1 or more, or "
                "leave accum out of --stages)"
            )
        strangers = sorted(set(self.families) - {*self.models, self.judge})
        if strangers:
            problems.append(f"--family names {strangers[0]!r}, which is not a model of this run")
        return problems

    @model_validator(mode="after")
    def _judge_is_independent(self) -> RunConfig:
        if self.judge in self.models:
            raise ValueError(f"the judge {self.judge!r} must not also be a subject model")
        return self

    def config_hash(self) -> str:
        data = self.model_dump(mode="json")
        if data["samples"] == 1:
            del data["samples"]  # runs made before --samples keep their hash
        if not data["task_stop"]:
            del data["task_stop"]  # and runs made before --stop
        if data["claim_units"] == ClaimUnits.FREE.value:
            del data["claim_units"]  # and before --claim-units
        blob = json.dumps(data, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


class RuntimeOptions(BaseModel):
    """How a run executes; never part of the config hash nor of any cache key."""

    model_config = ConfigDict(frozen=True)

    concurrency: int = Field(default=8, ge=1, description="in-flight calls per subject model")
    judge_concurrency: int = Field(default=8, ge=1)
    retry_attempts: int = Field(default=5, ge=1)
    retry_initial_s: float = Field(default=1.0, ge=0.0, description="first backoff wait")
    rate_limit_floor_s: float = Field(default=2.0, ge=0.0, description="least wait on a 429")
    retry_jitter_s: float = Field(default=1.0, ge=0.0)
    api_base: str | None = Field(
        default=None, description="endpoint for every hosted_vllm/... model (a vLLM server)"
    )
    api_bases: dict[str, str] = Field(default_factory=dict, description="model -> endpoint")
    timeout_s: float = 120.0
    progress: bool = True
    retry_failed: bool = Field(
        default=False, description="on resume, redo every failed unit (not only transient ones)"
    )
    mock_latency_s: float = Field(default=0.0, ge=0.0, description="latency of mock/ models")

    def api_base_for(self, model: str) -> str | None:
        if model in self.api_bases:
            return self.api_bases[model]
        return self.api_base if model.startswith("hosted_vllm/") else None
