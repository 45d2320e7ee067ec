"""A collapse run directory: MirageBench's layout (``manifest.json``, ``records/<kind>.jsonl``,
``cache/``), its append-only records and torn-line handling, with this study's manifest."""

from __future__ import annotations

import sys
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from mirage_guard.benchmark._rundir import RunDirectory, _now, package_versions
from mirage_guard.benchmark.collapse._config import CollapseConfig
from mirage_guard.benchmark.collapse._records import COLLAPSE_RECORD_TYPES, CollapseRecord
from mirage_guard.guard.errors import ConfigError, InputError
from mirage_guard.prompts import available_prompts, load_prompt

C = TypeVar("C", bound=CollapseRecord)


def collapse_prompt_refs() -> dict[str, str]:
    return {n: load_prompt(n).version for n in available_prompts() if n.startswith("collapse_")}


class CollapseManifest(BaseModel):
    study: str = "persona-collapse"
    config: CollapseConfig
    config_hash: str
    packages: dict[str, str]
    prompts: dict[str, str]
    command: list[str] = Field(default_factory=list)
    started_at: str
    resumed_at: list[str] = Field(default_factory=list)
    offline_models: list[str] = Field(
        default_factory=list, description="models answered by the offline mock provider"
    )
    guard: dict[str, Any] | None = Field(default=None, description="the guard configuration")


class CollapseRunDirectory(RunDirectory):
    """MirageBench's run directory holding a collapse run."""

    kinds = tuple(t.kind for t in COLLAPSE_RECORD_TYPES)

    def read_collapse_manifest(self) -> CollapseManifest:
        if not self.exists():
            raise InputError(f"{self.path} is not a run directory (no manifest.json)")
        text = self.manifest_path.read_text(encoding="utf-8")
        try:
            return CollapseManifest.model_validate_json(text)
        except ValidationError as exc:
            raise InputError(f"{self.path} does not hold a persona-collapse run") from exc

    def start(self, config: CollapseConfig, *, offline_models: list[str]) -> CollapseManifest:
        """Start a new run here, or resume the one here if its config and prompts are the same."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path} is a file, not a run directory")
        self.records_dir.mkdir(parents=True, exist_ok=True)
        if self.exists():
            manifest = self.read_collapse_manifest()
            if manifest.config_hash != config.config_hash():
                raise ConfigError(
                    f"{self.path} holds a run with another configuration "
                    f"({manifest.config_hash} != {config.config_hash()}); use a new run directory"
                )
            now = collapse_prompt_refs()
            changed = sorted(k for k, v in manifest.prompts.items() if now.get(k) != v)
            if changed:
                raise ConfigError(
                    f"prompts changed since this run started ({', '.join(changed)}); "
                    "use a new run directory"
                )
            manifest.resumed_at.append(_now())
            manifest.config = config  # the persona thresholds may differ; they change no call
        else:
            manifest = CollapseManifest(
                config=config,
                config_hash=config.config_hash(),
                packages=package_versions(),
                prompts=collapse_prompt_refs(),
                command=list(sys.argv),
                started_at=_now(),
                offline_models=offline_models,
            )
        self.save_manifest(manifest)
        return manifest

    def save_manifest(self, manifest: CollapseManifest) -> None:
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(self.manifest_path)

    def write(self, record: CollapseRecord) -> None:
        # RunDirectory.append needs only ``kind`` and ``model_dump_json`` of a record
        self.append(record)  # type: ignore[arg-type]

    def read(self, record_type: type[C]) -> list[C]:
        """The latest record of each unit of this type (a later line supersedes an earlier)."""
        return self.read_latest(record_type, record_type.kind)

    def final_units(self, *, retry_failed: bool = False) -> dict[str, CollapseRecord]:
        """Unit -> record, for every unit a resumed run must not redo (with ``retry_failed``:
        only the successful ones), as MirageBench's ``final_records``."""
        done: dict[str, CollapseRecord] = {}
        for record_type in COLLAPSE_RECORD_TYPES:
            for record in self.read(record_type):
                if record.ok or (record.final and not retry_failed):
                    done[record.unit] = record
        return done
