"""Linking the two studies: the user memory an assistant answers with, built from the packaged
MirageBench personas and labelled claims.

- ``clean``: only what the user said (the persona's 3 revealed facts), stored as facts.
- ``polluted``: the same facts plus over-inferred claims about that user (the packaged claims
  labelled INFERRED_STEREOTYPE or FABRICATED, in their flat form), all stored as facts, as an
  unguarded memory stores them.
- ``guarded``: the same candidates passed through the guard with the revealed facts as the
  conversation: ``store`` -> fact, ``store_as_hypothesis`` -> hypothesis (shown as such),
  ``quarantine``/``block`` -> not stored.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from mirage_guard.benchmark._guard_arm import ClaimTagger, evidence_turns
from mirage_guard.benchmark._stages import Evidence
from mirage_guard.benchmark.collapse._records import MemoryEntry
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard import Action, Candidate, Label
from mirage_guard.guard.errors import InputError
from mirage_guard.prompts import load_prompt

HYPOTHESIS_TAG = "[hypothesis]"


class PackagedClaim(BaseModel):
    """The fields of ``benchmark/data/claims.jsonl`` the memory arms use."""

    model_config = ConfigDict(extra="ignore")

    claim_id: str
    persona_id: str
    text: str
    text_flat: str | None = None
    label: Label
    split: str | None = None


def packaged_claims_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("mirage_guard.benchmark").joinpath("data", "claims.jsonl")))


def load_claims(path: str | Path | None = None) -> list[PackagedClaim]:
    source = Path(path) if path else packaged_claims_path()
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc}") from exc
    out: list[PackagedClaim] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append(PackagedClaim.model_validate_json(line))
            except ValidationError as exc:
                raise InputError(f"{source}:{number}: {exc.errors()[0]['msg']}") from exc
    return out


def assign_personas(
    situation_ids: Sequence[str], personas: Sequence[Persona], *, seed: int
) -> dict[str, Persona]:
    """Each situation gets one MirageBench persona: a seeded shuffle, cycled (distinct while
    there are fewer situations than personas). Ids are taken in sorted order, so a subset of
    situations keeps the persona it has in the full set."""
    if not personas:
        raise InputError("the memory arms need at least one MirageBench persona")
    order = sorted(personas, key=lambda p: p.persona_id)
    random.Random(f"collapse-memory:{seed}").shuffle(order)
    return {sid: order[i % len(order)] for i, sid in enumerate(sorted(situation_ids))}


def personas_of_split(
    personas: Sequence[Persona], claims: Sequence[PackagedClaim], split: str | None
) -> list[Persona]:
    """The personas whose packaged claims are in ``split`` (all personas when None).

    The default ``dev`` keeps the guarded arm honest: the shipped evidence profile was fitted on
    the ``train`` claims, so only ``dev`` personas test the guard on claims it has not seen."""
    if split is None:
        return list(personas)
    wanted = {c.persona_id for c in claims if c.split == split}
    chosen = [p for p in personas if p.persona_id in wanted]
    if not chosen:
        raise InputError(f"no MirageBench persona has claims in split {split!r}")
    return chosen


def over_inferred(
    persona: Persona, claims: Sequence[PackagedClaim], *, limit: int
) -> list[PackagedClaim]:
    mine = [c for c in claims if c.persona_id == persona.persona_id and c.label.is_over_inference]
    return sorted(mine, key=lambda c: c.claim_id)[:limit]


def clean_entries(persona: Persona) -> list[MemoryEntry]:
    return [
        MemoryEntry(text=f.text, label=Label.GROUNDED, status="fact")
        for f in persona.revealed_facts
    ]


def polluted_entries(persona: Persona, pollution: Sequence[PackagedClaim]) -> list[MemoryEntry]:
    return clean_entries(persona) + [
        MemoryEntry(text=c.text_flat or c.text, label=c.label, status="fact") for c in pollution
    ]


async def guarded_entries(
    tagger: ClaimTagger,
    persona: Persona,
    pollution: Sequence[PackagedClaim],
    *,
    writer_model: str | None,
) -> list[MemoryEntry]:
    evidence = [Evidence(f.turn_id, f.text) for f in persona.revealed_facts]
    candidates = [Candidate(id=c.claim_id, text=c.text_flat or c.text) for c in pollution]
    decisions = (
        await tagger.atag(evidence_turns(evidence), candidates, writer_model=writer_model)
        if candidates
        else []
    )
    entries = clean_entries(persona)
    for claim, decision in zip(pollution, decisions, strict=True):
        status = {Action.STORE: "fact", Action.STORE_AS_HYPOTHESIS: "hypothesis"}.get(
            decision.action, "dropped"
        )
        entries.append(
            MemoryEntry(
                text=claim.text_flat or claim.text,
                label=claim.label,
                status=status,
                action=decision.action,
            )
        )
    return entries


def render_memory(entries: Sequence[MemoryEntry]) -> str:
    """The system message an assistant with this memory answers under."""
    lines = [
        f"- {HYPOTHESIS_TAG} {e.text}" if e.status == "hypothesis" else f"- {e.text}"
        for e in entries
        if e.status in ("fact", "hypothesis")
    ]
    return load_prompt("collapse_memory").render(entries="\n".join(lines) or "(nothing)")


def pollution_share(entries: Sequence[MemoryEntry]) -> float:
    """Share of entries stored as facts that are over-inferred (NaN without facts)."""
    facts = [e for e in entries if e.status == "fact"]
    if not facts:
        return float("nan")
    return sum(bool(e.label and e.label.is_over_inference) for e in facts) / len(facts)
