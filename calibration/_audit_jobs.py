"""Collecting a writer model's self-audit of labelled claims (the input of a per-model fit)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from mirage_guard.calibration._data import Example, group_by_conversation
from mirage_guard.calibration._eval import write_whole
from mirage_guard.guard import AuditVerdict, SelfAuditor
from mirage_guard.guard.errors import InputError, LLMError
from mirage_guard.guard.scoring import ProfileMode


class AuditRecord(AuditVerdict):
    """One verdict as stored on disk, with the model and prompt that produced it."""

    writer_model: str
    prompt_version: str
    # how the endpoint was asked for JSON (json_schema / json_object / text), when known
    structured_output: str | None = None
    # the profile mode whose labels these are (self_audit_separate / self_audit_inline); files
    # written before it was recorded hold none
    mode: ProfileMode | None = None
    # a label from the decision log: the ids of the turns of the write it was given on (the
    # labelled sample holds the whole conversation; the fit reads what the guard read)
    turn_ids: list[str] | None = None


async def collect_verdicts(
    examples: Sequence[Example], auditor: SelfAuditor, *, concurrency: int = 4
) -> tuple[dict[str, AuditVerdict], dict[str, str]]:
    """One self-audit call per conversation. Returns verdicts and, per failed conversation, why
    (the error's type and its first line; the model's output is never included)."""
    groups = list(group_by_conversation(examples).items())
    verdicts: dict[str, AuditVerdict] = {}
    failed: dict[str, str] = {}
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(conv_id: str, group: list[Example]) -> None:
        async with limiter:
            try:
                result = await auditor.audit(group[0].turns, [e.candidate for e in group])
            except LLMError as exc:
                first = str(exc).splitlines()[0] if str(exc) else ""
                failed[conv_id] = f"{type(exc).__name__}: {first[:200]}"
                return
        for v in result:
            verdicts[v.candidate_id] = v

    async with anyio.create_task_group() as tg:
        for conv_id, group in groups:
            tg.start_soon(one, conv_id, group)
    return verdicts, dict(sorted(failed.items()))


def save_verdicts(
    path: Path,
    verdicts: dict[str, AuditVerdict],
    *,
    writer_model: str,
    prompt_version: str,
    structured_output: str | None = None,
    mode: ProfileMode | None = None,
    turn_ids: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """The verdicts as JSON Lines, written whole (a file there before is replaced only by a
    complete one); none at all is an :class:`InputError` and ``path`` is left as it was."""
    if not verdicts:
        raise InputError(f"no verdict was collected, so {path} was left as it was")
    records = (
        AuditRecord(
            **v.model_dump(),
            writer_model=writer_model,
            prompt_version=prompt_version,
            structured_output=structured_output,
            mode=mode,
            turn_ids=list(turn_ids[k]) if turn_ids and k in turn_ids else None,
        ).model_dump_json()
        for k, v in verdicts.items()
    )
    write_whole(path, records, "the verdicts")


@dataclass(frozen=True)
class VerdictFile:
    """A verdicts file, read once: ONE model's verdicts for ONE prompt version (mixing is
    refused), the audit mode they are labels of (None: not recorded, as in files written
    before the field) and, per claim, the turns of the write each was given on (those of
    `mirage report label-sample --verdicts-out`)."""

    verdicts: dict[str, AuditVerdict]
    writer_model: str
    prompt_version: str
    mode: ProfileMode | None
    turn_ids: dict[str, tuple[str, ...]]


def read_verdict_file(path: Path) -> VerdictFile:
    """:class:`VerdictFile` of ``path``; an :class:`InputError` for an empty file, several
    models or prompts, or several modes."""
    records = [
        AuditRecord.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if not records:
        raise InputError(f"{path}: no verdicts")
    keys = {(r.writer_model, r.prompt_version) for r in records}
    if len(keys) != 1:
        raise InputError(f"{path}: verdicts from several models/prompts: {sorted(keys)[:3]}")
    modes = {r.mode for r in records}
    if len(modes) != 1:
        named = sorted(m.value if m else "not recorded" for m in modes)
        raise InputError(f"{path}: verdicts of several audit modes: {', '.join(named)}")
    (model, prompt), (mode,) = keys.pop(), modes
    return VerdictFile(
        verdicts={
            r.candidate_id: AuditVerdict(
                **json.loads(r.model_dump_json(include=set(AuditVerdict.model_fields)))
            )
            for r in records
        },
        writer_model=model,
        prompt_version=prompt,
        mode=mode,
        turn_ids={r.candidate_id: tuple(r.turn_ids) for r in records if r.turn_ids},
    )


def verdicts_mode(path: Path) -> ProfileMode | None:
    """The profile mode the file's verdicts are labels for (None: not recorded)."""
    return read_verdict_file(path).mode


def verdict_turns(path: Path) -> dict[str, tuple[str, ...]]:
    """Claim id -> the ids of the turns of the write its label was given on, for the verdicts
    that record them."""
    return read_verdict_file(path).turn_ids


def load_verdicts(path: Path) -> tuple[dict[str, AuditVerdict], str, str]:
    """Verdicts of ONE writer model and prompt version; mixing models is refused."""
    read = read_verdict_file(path)
    return read.verdicts, read.writer_model, read.prompt_version
