"""`mirage guard eval`: the guard's real decisions scored against labelled claims."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from mirage_guard.calibration._audit_jobs import load_verdicts
from mirage_guard.calibration._data import Example, TextVariant, load_examples, packaged
from mirage_guard.calibration._eval import (
    EvalReport,
    check_not_an_input,
    check_writable,
    claim_rows,
    decide_all,
    evaluate,
    write_claim_rows,
)
from mirage_guard.guard import AuditMode, AuditVerdict, Guard, GuardSettings
from mirage_guard.guard.evidence import shipped_linker
from mirage_guard.guard.scoring import ProfileMode, ProfileStore


def build_eval_guard(
    *,
    profile_dir: Path | None,
    writer_model: str | None = None,
    verdicts: dict[str, AuditVerdict] | None = None,
    verdict_model: str | None = None,
    verdict_prompt: str | None = None,
    support_dir: Path | None = None,
) -> Guard:
    """The guard an evaluation scores with; ``support_dir``: another claim-support model
    (default: ``MIRAGE_SUPPORT_DIR``, else the shipped one), whose profile ``profile_dir`` holds."""
    # resolved here: an explicit support_dir=None below would override MIRAGE_SUPPORT_DIR
    support_dir = support_dir or GuardSettings.from_env().support_dir
    store = ProfileStore(profile_dir)
    if verdicts is not None and verdict_model and verdict_prompt:
        # per-model profile for the model that produced the verdicts; refused if absent
        profile = store.for_writer(verdict_model, ProfileMode.SELF_AUDIT_SEPARATE, verdict_prompt)
        return Guard(
            linker=shipped_linker(support_dir=support_dir),
            evidence_profile=store.evidence_only(),
            audit_mode=AuditMode.SEPARATE,
            audit_profile=profile,
            writer_model=verdict_model,
        )
    if writer_model:
        settings = GuardSettings(
            writer_model=writer_model,
            audit_mode=AuditMode.SEPARATE,
            profile_dir=profile_dir,
            support_dir=support_dir,
            auditor_model=None,  # the model named here labels, whatever MIRAGE_AUDITOR_MODEL says
            auditor_api_base=None,
        )
        return Guard.from_settings(settings, profiles=store)
    # the evidence alone: no model of the environment (MIRAGE_AUDIT_MODE, MIRAGE_WRITER_MODEL,
    # MIRAGE_AUDITOR_MODEL) is called
    settings = GuardSettings(
        profile_dir=profile_dir,
        support_dir=support_dir,
        audit_mode=AuditMode.OFF,
        writer_model=None,
        auditor_model=None,
        auditor_api_base=None,
    )
    return Guard.from_settings(settings, profiles=store)


def with_verdicts(
    examples: Sequence[Example], verdicts: Path | None
) -> tuple[list[Example], dict[str, AuditVerdict] | None, str | None, str | None]:
    """The examples a self-audit verdicts file covers (all of them without a file), its verdicts
    by claim id, and the model and prompt version that wrote them."""
    if verdicts is None:
        return list(examples), None, None, None
    by_claim, model, prompt = load_verdicts(verdicts)
    return [e for e in examples if e.claim.claim_id in by_claim], by_claim, model, prompt


def run_eval(
    *,
    data: Path | None,
    personas: Path | None,
    split: str | None,
    profile_dir: Path | None = None,
    writer_model: str | None = None,
    verdicts: Path | None = None,
    n_boot: int = 1000,
    conversations: Path | None = None,
    variant: TextVariant = TextVariant.AS_WRITTEN,
    support_dir: Path | None = None,
    per_claim: Path | None = None,
    typographic: bool = False,
    chat_lines: bool = False,
) -> EvalReport:
    """The report of one labelled set; ``per_claim``: also write each claim's decision there
    (JSON Lines of :class:`ClaimRow`); ``typographic``: claims and turns with the apostrophes a
    phone types ("don’t"), which must not move a figure; ``chat_lines``: user turns with a line
    break for each stop between two sentences."""
    path = data or packaged("claims.jsonl")
    if per_claim is not None:
        inputs = (path, personas, verdicts, conversations)
        check_not_an_input(per_claim, inputs, "the per-claim rows")
        check_writable(per_claim, "the per-claim rows")
    examples = load_examples(
        path, personas=personas, conversations=conversations, split=split, variant=variant
    )
    if typographic:
        examples = [e.typed() for e in examples]
    if chat_lines:
        examples = [e.as_chat_lines() for e in examples]
    examples, by_claim, model, prompt = with_verdicts(examples, verdicts)
    guard = build_eval_guard(
        profile_dir=profile_dir,
        writer_model=writer_model,
        verdicts=by_claim,
        verdict_model=model,
        verdict_prompt=prompt,
        support_dir=support_dir,
    )
    try:
        decisions = anyio.run(lambda: decide_all(guard, examples, by_claim))
    finally:
        guard.close()
    name = path.name + (f" [{split}]" if split else "")
    if variant is not TextVariant.AS_WRITTEN:
        name += f" ({variant.value})"
    if typographic:
        name += " (typographic)"
    if chat_lines:
        name += " (chat lines)"
    if per_claim is not None:
        write_claim_rows(per_claim, claim_rows(examples, decisions, data=name))
    return evaluate(examples, decisions, data=name, n_boot=n_boot)
