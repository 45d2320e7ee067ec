"""Labelled claims: the input format of `mirage guard eval` and `mirage calibrate fit`.

One JSON object per line. Either the conversation is inline::

    {"claim_id": "c1", "text": "Enjoys rock climbing", "label": "GROUNDED",
     "source_turn_id": "t2", "turns": [{"id": "t2", "role": "user", "content": "..."}]}

or the line names a ``persona_id`` whose revealed facts (user turns) come from a personas file
(the packaged MirageBench personas by default), or a ``conversation_id`` whose turns come from a
conversations file (one ``{"conversation_id": ..., "turns": [...]}`` per line; long multi-session
histories, see ``benchmark/data/heldout/``). ``label`` is the four-way taxonomy (any case) or the
guard's own three-way tag: ``stated`` is GROUNDED, ``inferred`` INFERRED_REASONABLE and
``generated`` FABRICATED (the figures are three-way and binary, where stereotype and fabricated
count alike; a per-claim row keeps the label as written). ``source_turn_id`` is required for
GROUNDED / INFERRED_REASONABLE (stated / inferred). ``split`` is optional.

A claim may carry hand-written twins ``text_flat`` (no hedge word) and ``text_hedged``; a
*variant* picks which text is scored (``flat`` strips hedge words where no twin was written), so
every figure can be reported on a form whose phrasing carries no label.

Conversations are keyed by ``persona_id`` when given (and a persona must always come with the
same turns), else by their content (turn ids, roles and texts), never by turn ids alone: users'
own files reuse ids like ``t1`` across conversations.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from mirage_guard.guard import Candidate, Label, Role, Turn
from mirage_guard.guard.errors import InputError, validation_message

_M = TypeVar("_M", bound=BaseModel)


class _Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    turn_id: str
    text: str


class _PersonaTurns(BaseModel):
    model_config = ConfigDict(extra="ignore")
    persona_id: str
    revealed_facts: list[_Fact]
    profile: dict[str, object] = {}

    def user_name(self) -> str | None:
        name = self.profile.get("name")
        return name if isinstance(name, str) and name.strip() else None

    def turns(self) -> list[Turn]:
        return [Turn(id=f.turn_id, role=Role.USER, content=f.text) for f in self.revealed_facts]


class _ConvTurn(BaseModel):
    """A turn as conversation files write it (session and date are kept out of the guard's Turn)."""

    model_config = ConfigDict(extra="ignore")
    id: str
    role: Role
    content: str

    def turn(self) -> Turn:
        return Turn(id=self.id, role=self.role, content=self.content)


class _Conversation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    conversation_id: str
    turns: list[_ConvTurn]
    user_name: str | None = None  # the user's own name: a claim that names them says nothing new


class TextVariant(StrEnum):
    """Which form of a claim's text is scored."""

    AS_WRITTEN = "as-written"
    FLAT = "flat"  # the hand-written flat twin; hedge words removed where none was written
    HEDGED = "hedged"  # the hand-written hedged twin; as written where none was written


_HEDGE_WORDS = (
    "probably|likely|maybe|perhaps|might|may|seems|seem|appears|apparently|presumably|possibly"
)
_HEDGE_PHRASES = re.compile(
    r"\b(?:it seems(?: that| like)?|seems to be|appears to be|seems to|appears to|"
    r"(?:most|very) likely|" + _HEDGE_WORDS + r")\b[ ,]*",
    re.IGNORECASE,
)


def strip_hedges(text: str) -> str:
    """Remove hedge words (for files without hand-written flat twins); grammar may suffer."""
    out = _HEDGE_PHRASES.sub("", text)
    out = re.sub(r"\s{2,}", " ", out).strip()
    return out[:1].upper() + out[1:] if text[:1].isupper() else out


# an apostrophe inside a word ("don't", "Mel's"), which phones and word processors type as "’"
_INNER_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")


def typographic(text: str) -> str:
    """``text`` as a phone types it: every apostrophe inside a word as "’" (U+2019)."""
    return _INNER_APOSTROPHE.sub("\u2019", text)


# a stop and a space between two sentences, which chat lines type as a line break
_BETWEEN_SENTENCES = re.compile(r"(?<=\w)\.\s+(?=\S)")


def chat_lines(text: str) -> str:
    """``text`` as chat lines: each stop and space between two sentences a line break."""
    return _BETWEEN_SENTENCES.sub("\n", text)


# the guard's three-way tags, read as the four-way label each stands for (a generated claim
# may be a stereotype or a fabrication: every figure treats the two alike)
LABEL_ALIASES = {
    "STATED": Label.GROUNDED,
    "INFERRED": Label.INFERRED_REASONABLE,
    "GENERATED": Label.FABRICATED,
}


def label_key(written: str) -> str:
    """The four-way name a label is written as: any case, "-" or " " for "_", and the guard's
    own tags ("stated", "generated", ...) for the label each stands for."""
    key = written.strip().upper().replace("-", "_").replace(" ", "_")
    return LABEL_ALIASES.get(key, key)


class LabelledClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claim_id: str
    text: str
    label: Label
    # the label as the file wrote it ("stated", "grounded", ...), kept for the per-claim rows
    label_as_written: str | None = None
    source_turn_id: str | None = None
    persona_id: str | None = None
    task: str | None = None
    split: str | None = None
    attribute_kind: str | None = None
    turns: list[Turn] | None = None
    conversation_id: str | None = None
    text_flat: str | None = None
    text_hedged: str | None = None
    phenomenon: str | None = None
    style: str | None = None
    # the unit held-out figures keep whole (claims sharing it are never split between a fit and
    # its test), e.g. one user of a labelled sample of traffic; default: the conversation
    group_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _label(cls, data: object) -> object:
        """Any case of the four-way names; the guard's own tags for the label each stands for;
        the label as written kept beside it."""
        if not isinstance(data, dict) or not isinstance(data.get("label"), str):
            return data
        written = data["label"]
        return {**data, "label": label_key(written), "label_as_written": written}

    @model_validator(mode="after")
    def _check(self) -> LabelledClaim:
        if self.turns is None and self.persona_id is None and self.conversation_id is None:
            raise ValueError("a claim needs inline `turns`, a `persona_id` or a `conversation_id`")
        linked = self.label in (Label.GROUNDED, Label.INFERRED_REASONABLE)
        if linked and not self.source_turn_id:
            raise ValueError(
                f"{self.label_as_written or self.label.value} claims need a source_turn_id"
            )
        return self

    def variant(self, variant: TextVariant) -> LabelledClaim:
        """This claim with the text of ``variant``."""
        if variant is TextVariant.FLAT:
            text = self.text_flat or strip_hedges(self.text)
        elif variant is TextVariant.HEDGED:
            text = self.text_hedged or self.text
        else:
            return self
        return self.model_copy(update={"text": text or self.text})


@dataclass(frozen=True)
class Example:
    """One labelled claim with the conversation it is judged against."""

    claim: LabelledClaim
    conversation_id: str
    turns: tuple[Turn, ...]
    user_name: str | None = None

    @property
    def candidate(self) -> Candidate:
        return Candidate(id=self.claim.claim_id, text=self.claim.text)

    @property
    def is_oi(self) -> bool:
        return self.claim.label.is_over_inference

    def typed(self) -> Example:
        """The claim and every turn typed as a phone types them (:func:`typographic`)."""
        claim = self.claim.model_copy(update={"text": typographic(self.claim.text)})
        turns = tuple(t.model_copy(update={"content": typographic(t.content)}) for t in self.turns)
        return replace(self, claim=claim, turns=turns)

    def as_chat_lines(self) -> Example:
        """Every user turn typed as chat lines (:func:`chat_lines`); the claim as it is."""
        turns = tuple(
            t.model_copy(update={"content": chat_lines(t.content)}) if t.role is Role.USER else t
            for t in self.turns
        )
        return replace(self, turns=turns)


def packaged(name: str) -> Path:
    return Path(str(resources.files("mirage_guard.benchmark").joinpath("data", name)))


def read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, object]]]:
    """(line number, object) of each non-blank line; an :class:`InputError` naming the file and
    line for a line that is not a JSON object, or a file that cannot be read."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}: not JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{n}: expected a JSON object")
        yield n, obj


def read_models(path: Path, model: type[_M], *, what: str = "") -> Iterator[tuple[int, _M]]:
    """(line number, ``model``) of each non-blank line of a JSONL file; an :class:`InputError`
    naming the file, the line and the field of a line that is not one (``what``: how the error
    calls it, e.g. "a triple")."""
    for n, obj in read_jsonl(path):
        try:
            yield n, model.model_validate(obj)
        except ValidationError as exc:
            why = validation_message(exc)
            raise InputError(f"{path}:{n}: " + (f"not {what} ({why})" if what else why)) from exc


def resolve_data(path: Path, conversations: Path | None = None) -> tuple[Path, Path | None]:
    """A set folder (``claims.jsonl`` + ``conversations.jsonl``) or a claims file."""
    if path.is_dir():
        claims = path / "claims.jsonl"
        if not claims.is_file():
            raise InputError(f"{path}: a data folder needs claims.jsonl")
        conv = path / "conversations.jsonl"
        return claims, conversations or (conv if conv.is_file() else None)
    return path, conversations


def load_examples(
    path: Path | None = None,
    *,
    personas: Path | None = None,
    conversations: Path | None = None,
    split: str | None = None,
    variant: TextVariant = TextVariant.AS_WRITTEN,
) -> list[Example]:
    """Load labelled claims (default: the packaged ones), optionally one split only.

    ``path`` may be a claims file or a set folder with ``claims.jsonl`` and
    ``conversations.jsonl``; ``variant`` picks the text form that is scored.
    """
    path, conversations = resolve_data(path or packaged("claims.jsonl"), conversations)
    convs: dict[str, tuple[Turn, ...]] = {}
    threads: dict[str, tuple[Turn, ...]] | None = None
    names: dict[str, str | None] = {}
    inline_personas: dict[str, str] = {}
    persona_path = personas or packaged("personas.jsonl")
    out: list[Example] = []
    first_line: dict[str, int] = {}  # a claim's decision and its per-claim row go by its id
    for n, obj in read_jsonl(path):
        try:
            claim = LabelledClaim.model_validate(obj).variant(variant)
        except ValidationError as exc:
            raise InputError(f"{path}:{n}: {validation_message(exc)}") from exc
        if claim.claim_id in first_line:
            raise InputError(
                f"{path}:{n}: claim_id {claim.claim_id!r} again (first on line "
                f"{first_line[claim.claim_id]}): each claim needs its own id"
            )
        first_line[claim.claim_id] = n
        if split is not None and claim.split != split:
            continue
        if claim.turns is not None:
            turns = tuple(claim.turns)
            conv_id = _inline_key(turns, claim.persona_id, inline_personas, f"{path}:{n}")
        elif claim.conversation_id is not None:
            if threads is None:
                if conversations is None:
                    raise InputError(
                        f"{path}:{n}: claims name a conversation_id: pass a conversations file "
                        "(or the set's folder)"
                    )
                threads = _load_conversations(conversations, names)
            if claim.conversation_id not in threads:
                raise InputError(f"{path}:{n}: unknown conversation_id {claim.conversation_id!r}")
            conv_id, turns = claim.conversation_id, threads[claim.conversation_id]
        else:
            assert claim.persona_id is not None
            if not convs:
                convs = _load_persona_turns(persona_path, names)
            if claim.persona_id not in convs:
                raise InputError(f"{path}:{n}: unknown persona_id {claim.persona_id!r}")
            conv_id, turns = claim.persona_id, convs[claim.persona_id]
        user_ids = {t.id for t in turns if t.role is Role.USER}
        if claim.source_turn_id and claim.source_turn_id not in {t.id for t in turns}:
            raise InputError(f"{path}:{n}: source_turn_id {claim.source_turn_id!r} not in turns")
        if claim.source_turn_id and claim.source_turn_id not in user_ids:
            raise InputError(
                f"{path}:{n}: source_turn_id {claim.source_turn_id!r} is not a user turn "
                "(only what the user said is evidence)"
            )
        out.append(
            Example(claim=claim, conversation_id=conv_id, turns=turns, user_name=names.get(conv_id))
        )
    if not out:
        raise InputError(f"{path}: no labelled claims" + (f" in split {split!r}" if split else ""))
    return out


def _inline_key(
    turns: Sequence[Turn], persona_id: str | None, seen: dict[str, str], where: str
) -> str:
    """The persona names an inline conversation, and must always name the same one."""
    key = conversation_key(turns)
    if persona_id is None:
        return key
    if seen.setdefault(persona_id, key) != key:
        raise InputError(
            f"{where}: persona_id {persona_id!r} comes with other turns than on its earlier lines"
        )
    return persona_id


def conversation_key(turns: Sequence[Turn]) -> str:
    """A conversation's identity: every turn's id, role and text, in order."""
    h = hashlib.sha256()
    for t in turns:
        for part in (t.id, t.role.value, t.content):
            h.update(part.encode("utf-8"))
            h.update(b"\x1f")
        h.update(b"\x1e")
    return f"conv-{h.hexdigest()[:16]}"


def _load_conversations(path: Path, names: dict[str, str | None]) -> dict[str, tuple[Turn, ...]]:
    out: dict[str, tuple[Turn, ...]] = {}
    for n, conv in read_models(path, _Conversation):
        if conv.conversation_id in out:
            raise InputError(f"{path}:{n}: duplicate conversation_id {conv.conversation_id!r}")
        out[conv.conversation_id] = tuple(t.turn() for t in conv.turns)
        names[conv.conversation_id] = conv.user_name
    return out


def _load_persona_turns(path: Path, names: dict[str, str | None]) -> dict[str, tuple[Turn, ...]]:
    out: dict[str, tuple[Turn, ...]] = {}
    for _, p in read_models(path, _PersonaTurns):
        out[p.persona_id] = tuple(p.turns())
        names[p.persona_id] = p.user_name()
    return out


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def group_by_conversation(examples: Sequence[Example]) -> dict[str, list[Example]]:
    groups: dict[str, list[Example]] = {}
    for ex in examples:
        groups.setdefault(ex.conversation_id, []).append(ex)
    return groups


class TrainHalf(StrEnum):
    """The train split in two halves, by conversation: the claim-support model learns from one,
    the evidence profile's logistic models from the other, so the profile weighs the support
    model's outputs as they come out on conversations it never saw (not on its own train data)."""

    SUPPORT = "support"
    PROFILE = "profile"


def train_half(examples: Sequence[Example], half: TrainHalf) -> list[Example]:
    """The examples of one half of the train split (a stable hash of the conversation id)."""

    def side(conv: str) -> TrainHalf:
        digest = hashlib.blake2b(conv.encode("utf-8"), digest_size=2).digest()
        return TrainHalf.SUPPORT if digest[0] % 2 == 0 else TrainHalf.PROFILE

    return [e for e in examples if side(e.conversation_id) is half]
