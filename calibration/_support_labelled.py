"""(user turn, claim, class) pairs for the claim-support model from a labelled set of claims.

A set in the held-out format (``claims.jsonl`` + ``conversations.jsonl``, see
``benchmark/data/heldout/README.md``) becomes pairs in the format of the hand-written ones
(:class:`~._support_authored.AuthoredPair`), so ``mirage calibrate train-support --extra-pairs``
can train on the styles of real memories (long chats, a friend's facts, glued details):

- GROUNDED: entailed, against its labelled source turn;
- INFERRED_REASONABLE: inferable, against its labelled source turn;
- FABRICATED and INFERRED_STEREOTYPE: against the user turn the guard's linker links the claim to
  (the turn the support model reads it against at run time), contradicted when the labelled case
  is a contradicted detail or a negation, unsupported otherwise; none when the linker links no
  turn, and none for a stale value after a correction (its turn does say it: the later turn
  makes it stale, which one pair cannot show).

A set turned into pairs is training data from then on: its figures no longer measure a model
trained on them.
"""

from __future__ import annotations

import json
from pathlib import Path

from mirage_guard.calibration._data import Example, group_by_conversation, load_examples
from mirage_guard.calibration._eval import write_whole
from mirage_guard.calibration._support_authored import AuthoredPair
from mirage_guard.guard import Label
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker, SupportClass

# labelled cases whose fabrication the turn it links to says otherwise
CONTRADICTING_CASES = frozenset(("contradicted_detail", "negation"))
STALE_CASE = "stale_after_correction"


def _pair(ex: Example, premise: str, support: SupportClass, source: str) -> AuthoredPair:
    case = ex.claim.phenomenon or "plain"
    return AuthoredPair(
        pair_id=f"ls-{ex.claim.claim_id}",
        premise=premise,
        claim=ex.claim.text,
        label=support.name,
        case=case,
        note=f"from the labelled set {source} ({ex.claim.label.value})",
    )


def labelled_set_pairs(folder: Path, linker: EvidenceLinker) -> list[AuthoredPair]:
    """The pairs of one labelled set, in conversation and claim order (deterministic for a
    given linker)."""
    out: list[AuthoredPair] = []
    for group in group_by_conversation(load_examples(folder)).values():
        turns = {t.id: t.content for t in group[0].turns}
        links = linker.link(
            group[0].turns, [e.candidate for e in group], user_name=group[0].user_name
        )
        for ex, link in zip(group, links, strict=True):
            label = ex.claim.label
            if label in (Label.GROUNDED, Label.INFERRED_REASONABLE):
                source = ex.claim.source_turn_id
                if source is None or source not in turns:
                    continue  # load_examples refuses such a claim; kept for the type checker
                support = (
                    SupportClass.ENTAILED if label is Label.GROUNDED else SupportClass.INFERABLE
                )
                out.append(_pair(ex, turns[source], support, folder.name))
            elif ex.claim.phenomenon != STALE_CASE and link.turn_id is not None:
                support = (
                    SupportClass.CONTRADICTED
                    if ex.claim.phenomenon in CONTRADICTING_CASES
                    else SupportClass.UNSUPPORTED
                )
                out.append(_pair(ex, turns[link.turn_id], support, folder.name))
    return out


def write_pairs(pairs: list[AuthoredPair], path: Path) -> None:
    """One ``part_*.jsonl`` file, written whole (an :class:`InputError` if it cannot be)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the support pairs to {path}: {exc}") from exc
    lines = (json.dumps(p.model_dump(), ensure_ascii=False) for p in pairs)
    write_whole(path, lines, "the support pairs")
