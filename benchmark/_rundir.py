"""A resumable run directory: ``manifest.json``, ``records/<kind>.jsonl`` and ``cache/``.

Records are appended one line per finished unit and never rewritten. A run killed mid-way leaves
at most one torn last line, which loading skips; resuming redoes only units without a final
record, and the call cache answers every call that had already completed. An unreadable line
anywhere else, and a JSON line that is not a valid record of its file's kind (wherever it is), is
skipped too, but listed with the reason in :attr:`RunDirectory.skipped_lines` for the report to
warn about.
"""

from __future__ import annotations

import json
import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import IO, Any, ClassVar, NamedTuple, TypeVar

from pydantic import BaseModel, Field, ValidationError

from mirage_guard.benchmark._capabilities import ParamsSent
from mirage_guard.benchmark._config import RunConfig
from mirage_guard.benchmark._guard_arm import GuardProfileRef
from mirage_guard.benchmark._records import RECORD_TYPES, Record
from mirage_guard.guard.errors import ConfigError, InputError, validation_message
from mirage_guard.prompts import available_prompts, load_prompt

R = TypeVar("R", bound=Record)

PACKAGES = ("mirage-guard", "litellm", "pydantic", "anyio", "numpy", "scipy")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def bench_prompt_refs() -> dict[str, str]:
    return {n: load_prompt(n).version for n in available_prompts() if n.startswith("bench_")}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1) == b"\n"


class RunManifest(BaseModel):
    config: RunConfig
    config_hash: str
    packages: dict[str, str]
    prompts: dict[str, str]
    command: list[str] = Field(default_factory=list)
    started_at: str
    resumed_at: list[str] = Field(default_factory=list)
    offline_models: list[str] = Field(
        default_factory=list, description="models answered by the offline mock provider"
    )
    params_sent: dict[str, dict[str, ParamsSent]] = Field(
        default_factory=dict,
        description="model -> role -> sampling params requested, sent and dropped (as of the "
        "latest start or resume)",
    )
    personas_sha256: str | None = Field(
        default=None, description="sha256 of every loaded persona (canonical JSON)"
    )
    personas_file_sha256: str | None = Field(
        default=None, description="sha256 of the persona file's bytes (packaged or given)"
    )
    finished: bool | None = Field(
        default=None,
        description="every unit of the run was attempted (set when a start or a resume ends "
        "without interruption, cleared at each start); None: a manifest from before the field",
    )
    expected_units: dict[str, int] = Field(
        default_factory=dict,
        description="records each stage writes when no unit fails (a failed Task output has no "
        "Self-audit or Judge unit)",
    )
    guard_profiles: list[GuardProfileRef] = Field(
        default_factory=list, description="profiles the guard arm scores with, content-hashed"
    )
    guard_configuration: Any = Field(
        default=None,
        description="the guard arm's tagger as it decides (profiles, audit mode, writer model, "
        "policy actions and thresholds, profile content hashes); None without a guard arm",
    )
    guard_excluded_personas: list[str] = Field(
        default_factory=list,
        description="personas left out of the guard arm because a guard profile was fitted on "
        "them (the guard is measured on held-out personas only)",
    )


def _with_facts(manifest: RunManifest, facts: dict[str, Any] | None) -> RunManifest:
    if not facts:
        return manifest
    return RunManifest.model_validate({**manifest.model_dump(), **facts})


# facts a run's records depend on beyond its config: the personas (their revealed facts are the
# evidence judged) and the guard arm as it decides. A resume that changes one would mix records
# of two setups in one run, and the manifest would name only the second.
RESUME_FACTS: dict[str, str] = {
    "personas_sha256": "the personas",
    "personas_file_sha256": "the personas file",
    "guard_profiles": "the guard's calibration profiles",
    "guard_configuration": "the guard's configuration (profiles, audit mode, policy: "
    "MIRAGE_* settings)",
}


def _changed_facts(manifest: RunManifest, resumed: RunManifest) -> list[str]:
    """What of :data:`RESUME_FACTS` differs between a run's manifest and the resume's; a fact
    the manifest does not hold (written before the field existed) is not compared."""
    held = manifest.model_fields_set
    return [
        what + _guard_changes(manifest, resumed) if field == "guard_configuration" else what
        for field, what in RESUME_FACTS.items()
        if field in held and getattr(manifest, field) != getattr(resumed, field)
    ]


def _guard_changes(manifest: RunManifest, resumed: RunManifest) -> str:
    """Which settings of the guard's ``describe()`` changed, e.g. " (auditor_model: 'a' ->
    'b')"; "" when none of them did (a profile's content did)."""
    before, after = (
        m.guard_configuration.get("describe") if isinstance(m.guard_configuration, dict) else None
        for m in (manifest, resumed)
    )
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ""
    changed = [
        f"{k}: {before.get(k)!r} -> {after.get(k)!r}"
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
    ]
    return f" ({'; '.join(changed)})" if changed else ""


M = TypeVar("M", bound=BaseModel)


NOT_JSON = "not a JSON record"


class SkippedLine(NamedTuple):
    """A records line left out: not a JSON object (and not a file's last line), or a JSON object
    that is not a valid record of its file's kind; ``reason`` says which."""

    path: Path
    line: int
    reason: str = NOT_JSON

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class FailedTries(NamedTuple):
    """:meth:`RunDirectory.tries`: failed records per unit, and the cache try of each unit's
    last answered failure."""

    failed: dict[str, int]
    answered: dict[str, int]


class NumberedRow(NamedTuple):
    line: int
    row: dict[str, Any]


class RunDirectory:
    # the records files a run keeps (``records/<kind>.jsonl``)
    kinds: ClassVar[tuple[str, ...]] = tuple(t.kind for t in RECORD_TYPES)

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records_dir = self.path / "records"
        self._handles: dict[str, IO[str]] = {}
        self._unreadable: dict[Path, list[SkippedLine]] = {}  # set by every read of the file
        self._invalid: dict[Path, list[SkippedLine]] = {}  # set by every validating read

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def cache_dir(self) -> Path:
        return self.path / "cache"

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> RunManifest:
        """The run's manifest; a persona-collapse run, or any manifest of another shape, is an
        :class:`InputError` saying so."""
        if not self.exists():
            raise InputError(f"{self.path} is not a benchmark run directory (no manifest.json)")
        text = self.manifest_path.read_text(encoding="utf-8")
        try:
            return RunManifest.model_validate_json(text)
        except ValidationError as exc:
            try:
                study = json.loads(text).get("study")
            except (ValueError, AttributeError):
                study = None
            if study == "persona-collapse":
                raise InputError(
                    f"{self.path} holds a persona-collapse run, not a MirageBench run "
                    "(see mirage bench collapse --help)"
                ) from exc
            raise InputError(
                f"{self.path} is not a MirageBench run: {self.manifest_path.name}: "
                f"{validation_message(exc)}"
            ) from exc

    def open(
        self,
        config: RunConfig,
        *,
        offline_models: list[str] | None = None,
        params_sent: dict[str, dict[str, ParamsSent]] | None = None,
        facts: dict[str, Any] | None = None,
    ) -> RunManifest:
        """Start a new run here, or resume the one here if its config, its prompts and its
        ``facts`` (further manifest fields known at start: persona and profile hashes, the
        guard's configuration; :data:`RESUME_FACTS`) are the same."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path} is a file, not a run directory")
        if self.exists():
            manifest = self.read_manifest()
            # the configs as read today (stages in pipeline order...), so a run started before
            # a normalisation resumes under the hash it was started with
            if manifest.config != config and manifest.config_hash != config.config_hash():
                raise ConfigError(
                    f"{self.path} holds a run with another configuration "
                    f"({manifest.config_hash} != {config.config_hash()}); "
                    "use a new run directory"
                )
            now_prompts = bench_prompt_refs()
            changed = sorted(k for k, v in manifest.prompts.items() if now_prompts.get(k) != v)
            if changed:
                raise ConfigError(
                    f"prompts changed since this run started ({', '.join(changed)}); "
                    "use a new run directory"
                )
            resumed = _with_facts(manifest, facts)
            differ = _changed_facts(manifest, resumed)
            if differ:
                raise ConfigError(
                    f"{self.path} holds a run made with other data (changed since it started: "
                    f"{'; '.join(differ)}); use a new run directory"
                )
            manifest = resumed
            manifest.finished = False
            manifest.resumed_at.append(_now())
            if params_sent is not None:
                manifest.params_sent = params_sent
        else:
            manifest = RunManifest(
                config=config,
                config_hash=config.config_hash(),
                packages=package_versions(),
                prompts=bench_prompt_refs(),
                command=list(sys.argv),
                started_at=_now(),
                offline_models=offline_models or [],
                params_sent=params_sent or {},
                finished=False,
            )
            manifest = _with_facts(manifest, facts)
        try:
            self.records_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the run directory {self.path}: {exc}") from exc
        self._write_manifest(manifest)
        return manifest

    def mark_finished(self) -> None:
        """Every unit was attempted: the report stops calling the run unfinished."""
        manifest = self.read_manifest()
        manifest.finished = True
        self._write_manifest(manifest)

    def _write_manifest(self, manifest: RunManifest) -> None:
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(self.manifest_path)

    # -- records -------------------------------------------------------------------------

    def append(self, record: Record) -> None:
        handle = self._handles.get(record.kind)
        if handle is None:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            path = self.records_dir / f"{record.kind}.jsonl"
            torn = path.is_file() and path.stat().st_size > 0 and not _ends_with_newline(path)
            handle = path.open("a", encoding="utf-8")
            if torn:
                handle.write("\n")  # end the line a killed run left half-written
            self._handles[record.kind] = handle
        handle.write(record.model_dump_json() + "\n")
        handle.flush()

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()

    @property
    def skipped_lines(self) -> list[SkippedLine]:
        """Lines skipped by the reads so far: those that are not JSON objects, other than a
        file's last line (the torn line a killed run leaves, skipped without a word), and JSON
        objects that are not valid records of their file's kind (a field of the wrong type or
        missing, an object of another schema), wherever they are. One unreadable line per
        resume of a killed run is expected (its unit was redone); more, or any invalid record,
        means the file was damaged, and every figure was computed without those lines."""
        found = [*self._unreadable.values(), *self._invalid.values()]
        return sorted(s for lines in found for s in lines)

    def _path(self, kind: str) -> Path:
        return self.records_dir / f"{kind}.jsonl"

    def _numbered_rows(self, kind: str) -> list[NumberedRow]:
        path = self._path(kind)
        if not path.is_file():
            return []
        rows: list[NumberedRow] = []
        skipped: list[SkippedLine] = []
        # split on b"\n" only: str.splitlines() also splits on U+2028, U+0085, ..., which JSON
        # leaves unescaped inside a model's text, and would cut such a record in two
        lines = path.read_bytes().split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                row = None
            if isinstance(row, dict):
                rows.append(NumberedRow(number, row))
            elif number < len(lines):
                skipped.append(SkippedLine(path, number))
            # else: the torn last line of a killed run
        self._unreadable.pop(path, None)
        if skipped:
            self._unreadable[path] = skipped
        return rows

    def _raw_lines(self, kind: str) -> list[dict[str, Any]]:
        return [numbered.row for numbered in self._numbered_rows(kind)]

    def read_latest(self, record_type: type[M], kind: str) -> list[M]:
        """The latest valid record of each unit in ``records/<kind>.jsonl`` (a later line
        supersedes an earlier). A JSON line that does not validate as ``record_type`` supersedes
        nothing: it is a skipped line, named with its first validation error."""
        path = self._path(kind)
        by_unit: dict[str, M] = {}
        invalid: list[SkippedLine] = []
        for number, row in self._numbered_rows(kind):
            try:
                record = record_type.model_validate(row)
            except ValidationError as exc:
                why = f"not a valid {kind} record ({validation_message(exc)})"
                invalid.append(SkippedLine(path, number, why))
                continue
            by_unit[str(row["unit"])] = record
        self._invalid.pop(path, None)
        if invalid:
            self._invalid[path] = invalid
        return list(by_unit.values())

    def records(self, record_type: type[R]) -> list[R]:
        """The latest record of each unit of this type (a later line supersedes an earlier)."""
        return self.read_latest(record_type, record_type.kind)

    def final_records(self, *, retry_failed: bool = False) -> dict[str, Record]:
        """Unit -> record, for every unit a resumed run must not redo (with ``retry_failed``:
        only the successful ones)."""
        done: dict[str, Record] = {}
        for record_type in RECORD_TYPES:
            for record in self.records(record_type):
                if record.ok or (record.final and not retry_failed):
                    done[record.unit] = record
        return done

    def tries(self) -> FailedTries:
        """One pass over the records: per unit, how many failed records it has (every try so
        far, superseded ones too), and the cache try of its last answered failure: one that is
        not retryable (the model answered, and its answer, which failed, is in the cache under
        that try), not a timeout's, a rate limit's or a 5xx's, which left nothing cached; a
        retry asks under the next try. A record from before ``cache_try`` was cached under its
        ``attempt``."""
        failed: dict[str, int] = {}
        answered: dict[str, int] = {}
        for kind in self.kinds:
            for row in self._raw_lines(kind):
                error, unit = row.get("error"), row.get("unit")
                if not error or not isinstance(unit, str):
                    continue
                failed[unit] = failed.get(unit, 0) + 1
                if not isinstance(error, dict) or error.get("retryable"):
                    continue
                cache_try = row.get("cache_try") or row.get("attempt") or 1
                if isinstance(cache_try, int):
                    answered[unit] = max(answered.get(unit, 0), cache_try)
        return FailedTries(failed, answered)

    def failed_attempts(self) -> dict[str, int]:
        return self.tries().failed

    def answered_tries(self) -> dict[str, int]:
        return self.tries().answered
