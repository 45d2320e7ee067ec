"""``mirage report label-sample``: the guard's own logged decisions as claims to label.

The figures of ``mirage guard eval`` are only as good as the labelled set: this project's sets
say little about what a given writer model stores for a given product's users. This draws a
seeded, uniform random sample of the decisions the deployment really made (the decision log),
and writes each as one line of the claims format ``guard eval`` and ``calibrate stated-floor``
read: the memory entry, an empty ``label`` to fill, and the conversation as the decision log
kept it *at the time of the decision* (a turn written later was not there to support or
correct it). Blind by default (no provenance, source turn or score of the guard, so a labeller
is not anchored); ``show_guard`` adds them under ``guard`` for a review of the decisions, which
``guard eval`` ignores.

A user's own message stored verbatim (``add(infer=False)``, reason ``verbatim_user_message`` or
``not_user_words``) is no claim the guard judged: it is left out of the sample.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from mirage_guard.adapters._decision_log import (
    DecisionLog,
    LoggedAudit,
    LoggedDecision,
    MemoryScope,
)
from mirage_guard.calibration import save_verdicts, write_whole
from mirage_guard.guard import AuditSource, ReasonCode, Role, Turn
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.scoring import ProfileMode

# reasons of a write that stored a user's own message, not a claim about the user
NOT_CLAIMS = frozenset({ReasonCode.VERBATIM_USER_MESSAGE, ReasonCode.NOT_USER_WORDS})
_CHUNK = 500  # decisions read per query while drawing


class LabelSample(BaseModel):
    """What was drawn: the rows to write and what was left out, and why."""

    model_config = ConfigDict(frozen=True)

    rows: list[dict[str, Any]]
    # claim id -> the audit label its decision was made with (kept apart from the rows, which
    # are labelled blind: `--verdicts-out` writes them to a file of their own)
    audits: dict[str, LoggedAudit] = {}
    considered: int  # decisions in the window (and tenant / writer model)
    verbatim: int  # of those read while drawing, user messages stored verbatim: left out
    without_turns: int  # of those read, decisions whose conversation the log has no turn of
    without_audit: int = 0  # of those read (drawing for the audit's fit), decisions with no label
    keeps_audits: bool = True  # the log can hold labels (an older or read-only one may not)


def draw_label_sample(
    log: DecisionLog,
    *,
    n: int,
    seed: int = 0,
    since: datetime | None = None,
    until: datetime | None = None,
    tenant: str | None = None,
    writer_model: str | None = None,
    show_guard: bool = False,
    with_audits: bool = False,
) -> LabelSample:
    """Up to ``n`` decisions drawn uniformly (seeded) from the log's window, as claims to label.

    The ids are shuffled once and read in chunks until ``n`` claims are kept, so the sample is
    uniform over the decisions that are claims, and the same log, window and seed give the same
    sample. ``with_audits``: only decisions made with a self-audit label the log kept (to fit the
    audit's profile: a claim without one would be labelled for nothing)."""
    if n < 1:
        raise InputError(f"the sample size is at least 1: got {n}")
    order = log.decision_ids(since=since, until=until, tenant=tenant, writer_model=writer_model)
    random.Random(seed).shuffle(order)
    kept: list[tuple[LoggedDecision, list[Turn]]] = []
    verbatim = without_turns = without_audit = 0
    for start in range(0, len(order), _CHUNK):
        for d in log.decisions(order[start : start + _CHUNK], audits=with_audits):
            if {r.code for r in d.reasons} & NOT_CLAIMS:
                verbatim += 1
                continue
            if with_audits and d.audit is None:
                without_audit += 1
                continue
            turns = log.turns(d.tenant, scope_of(d), until=d.created_at)
            if not any(t.role is Role.USER for t in turns):
                without_turns += 1
                continue
            kept.append((d, turns))
            if len(kept) == n:
                break
        if len(kept) == n:
            break
    kept.sort(key=lambda pair: pair[0].id)
    rows = [_row(d, turns, show_guard) for d, turns in kept]
    audits = {f"log-{d.id}": d.audit for d, _ in kept if d.audit is not None}
    return LabelSample(
        rows=rows,
        audits=audits,
        considered=len(order),
        verbatim=verbatim,
        without_turns=without_turns,
        without_audit=without_audit,
        keeps_audits=log.keeps_audits,
    )


def scope_of(d: LoggedDecision) -> MemoryScope:
    return MemoryScope(user_id=d.user_id, agent_id=d.agent_id, run_id=d.run_id)


def _row(d: LoggedDecision, turns: Sequence[Turn], show_guard: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "claim_id": f"log-{d.id}",
        "text": d.candidate_text,
        "label": None,  # to fill: GROUNDED, INFERRED_REASONABLE, INFERRED_STEREOTYPE, FABRICATED
        "source_turn_id": None,  # to fill for GROUNDED and INFERRED_REASONABLE
        "turns": [t.model_dump(mode="json") for t in turns],
        "tenant": d.tenant,
        "user_id": d.user_id,
        "agent_id": d.agent_id,
        "run_id": d.run_id,
        # the unit `calibrate fit` holds out together: every claim of one user's memory
        "group_id": f"{d.tenant}/{scope_of(d).key()}",
        "writer_model": d.writer_model,
        "decided_at": d.created_at.isoformat(),
    }
    if show_guard:
        row["guard"] = {
            "provenance": d.provenance.value,
            "action": d.action.value,
            "source_turn_id": d.source_turn_id,
            "score": d.score,
            "threshold": d.threshold,
            "profile_id": d.profile_id,
            "reasons": [r.text for r in d.reasons],
        }
    return row


def check_out(
    out: Path, *, overwrite: bool = False, flag: str = "--out", lost: str = "labels"
) -> None:
    """Refuse, before anything is read, a file name that is a folder, or a file that exists
    (``lost``: what in it would be lost, e.g. labels filled in by hand) unless ``overwrite``.
    ``flag``: the option that named it."""
    if out.is_dir():
        raise InputError(f"{out} is a directory: {flag} takes a file name")
    if out.exists() and not overwrite:
        raise InputError(
            f"{out} exists ({lost} in it would be lost): pass --overwrite or another {flag}"
        )


def write_label_sample(sample: LabelSample, out: Path, *, overwrite: bool = False) -> None:
    """JSON Lines, written whole or not at all."""
    check_out(out, overwrite=overwrite)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the sample to {out}: {exc}") from exc
    lines = (json.dumps(r, ensure_ascii=False) for r in sample.rows)
    write_whole(out, lines, "the sample")


def sample_verdicts(sample: LabelSample) -> tuple[AuditSource, dict[str, LoggedAudit]]:
    """The sampled decisions' audit labels as verdicts of `mirage calibrate fit` (one per claim
    that had one, keyed by the sample's claim id), with the model, prompt and mode they are
    labels of. Labels of more than one model, prompt or mode cannot fit one profile: an
    :class:`InputError` names them (narrow the sample with --writer-model or a window); so does
    a sample with none."""
    if not sample.audits:
        raise InputError(
            f"none of the {len(sample.rows)} sampled decisions was made with an audit label the "
            "log kept (the audit was off or failed, the labels were passed in by the caller, or "
            "the decisions were logged before labels were kept): no verdicts to write"
        )
    sources = Counter(a.source for a in sample.audits.values())
    if len(sources) > 1:
        named = "; ".join(
            f"{s.model} / {s.prompt_version} / {s.mode}: {n}" for s, n in sources.most_common()
        )
        raise InputError(
            "the sampled decisions' audit labels are of several models, prompts or modes "
            f"({named}): one profile is fitted per model, prompt and mode, so narrow the sample "
            "(--writer-model, --since / --until around the change)"
        )
    (source,) = sources
    return source, dict(sample.audits)


def write_sample_verdicts(
    out: Path, source: AuditSource, audits: dict[str, LoggedAudit], *, overwrite: bool = False
) -> None:
    """What :func:`sample_verdicts` gave, as a verdicts file keyed by the sample's claim ids,
    each with the ids of the turns of the write it was given on; written whole or not at all."""
    check_out(out, overwrite=overwrite, flag="--verdicts-out", lost="the verdicts")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the verdicts to {out}: {exc}") from exc
    save_verdicts(
        out,
        {cid: a.verdict.model_copy(update={"candidate_id": cid}) for cid, a in audits.items()},
        writer_model=source.model,
        prompt_version=source.prompt_version,
        mode=ProfileMode(source.mode),
        turn_ids={cid: a.turn_ids for cid, a in audits.items()},
    )


__all__ = [
    "NOT_CLAIMS",
    "LabelSample",
    "check_out",
    "draw_label_sample",
    "sample_verdicts",
    "scope_of",
    "write_label_sample",
    "write_sample_verdicts",
]
