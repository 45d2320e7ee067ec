"""Evidence linker (no LLM): finds the user turn that supports a candidate and describes how.

Similarity alone does not separate a reasonable inference from a stereotype (stereotypes sit close
to their evidence by construction), so besides similarity the features say *what kind* of
attribute a claim asserts and whether the evidence is about that kind at all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Generic, TypeVar

import numpy as np

from mirage_guard.guard._domain import Candidate, EvidenceLink, Role, Turn
from mirage_guard.guard.evidence import _text as tx
from mirage_guard.guard.evidence._discourse import (
    SentenceUse,
    endorses,
    is_correction,
    is_hypothetical,
    keeps_wish,
    reported_opinion,
    sentence_use,
)
from mirage_guard.guard.evidence._embedder import Embedder, Vectors
from mirage_guard.guard.evidence._namespace import current_cache_namespace
from mirage_guard.guard.evidence._subject import (
    about_user,
    aged_since,
    claim_people,
    claim_predicates,
    name_parts,
    others_clauses,
    others_denials,
    said_of_user,
)
from mirage_guard.guard.evidence._support import (
    SUPPORT_FEATURES,
    ClaimSupport,
    ClaimVerdict,
    TokenText,
)

KINDS: tuple[str, ...] = tuple(
    k
    for k in json.loads(
        resources.files("mirage_guard.guard.evidence")
        .joinpath("attribute_kinds.json")
        .read_text("utf-8")
    )
    if not k.startswith("_")
)

BASE_FEATURES: tuple[str, ...] = (
    "sim_max",
    "sim_second",
    "sim_turn_mean",
    "sim_margin",
    "lex_containment",
    "lex_containment_any",
    "novel_ratio",
    "unsupported_numbers",
    "unsupported_names",
    "negation_mismatch",
    "hedges",
    "generalizers",
    "n_words",
    "kind_agreement",
    "kind_entropy",
    "no_user_turns",
    "superseded",
)
# how close the claim alone is to each kind of attribute: the group rule and kind_agreement read
# them, but a profile does not (see PROFILE_FEATURES)
TOPIC_FEATURES: tuple[str, ...] = tuple(f"kind_{k}" for k in KINDS)
FEATURE_NAMES: tuple[str, ...] = BASE_FEATURES + TOPIC_FEATURES + SUPPORT_FEATURES
# what a profile's logistic models read: every feature but the claim's topic. A topic score is a
# prior of the labelled data the profile is fitted on (in the project's personas a routine or a
# hobby was rarely over-inferred), not evidence from the user's turns; fitted with them, the
# shipped profile scored 0.009-0.014 lower held-out AUROC (benchmark/GUARD_MEASUREMENTS.md).
# Profiles fitted with them before still load and score: a model reads the features it names.
PROFILE_FEATURES: tuple[str, ...] = tuple(f for f in FEATURE_NAMES if f not in TOPIC_FEATURES)


@dataclass(frozen=True)
class _Unit:
    """One sentence of one user turn."""

    turn_id: str
    text: str


def _plain_turn(turn: Turn) -> Turn:
    """The turn with its text as the word rules read it (:func:`~._text.plain`)."""
    text = tx.plain(turn.content)
    return turn if text == turn.content else turn.model_copy(update={"content": text})


def _plain_candidate(candidate: Candidate) -> Candidate:
    """The candidate with its text as the word rules read it (:func:`~._text.plain`)."""
    text = tx.plain(candidate.text)
    return candidate if text == candidate.text else candidate.model_copy(update={"text": text})


def evidence_units(turns: Sequence[Turn]) -> list[_Unit]:
    """The sentences of user turns that can be evidence about the user, turn by turn, in order."""
    return [
        _Unit(t.id, s) for t in turns if t.role is Role.USER and t.content.strip()
        for s in tx.sentences(t.content) if sentence_use(s) is SentenceUse.EVIDENCE
    ]  # fmt: skip


def _corrections(units: Sequence[_Unit], unit_kinds: Vectors) -> list[tuple[int, frozenset[int]]]:
    """(unit index, its top attribute kinds) of every sentence that reads as a correction."""
    out: list[tuple[int, frozenset[int]]] = []
    for j, u in enumerate(units):
        if is_correction(u.text):
            top = np.argsort(-unit_kinds[j])[:SUPERSEDE_TOP_KINDS]
            out.append((j, frozenset(int(k) for k in top)))
    return out


# a later correction is about the same thing when the claim's kind is among its top kinds and
# the two are at least this similar (a correction names the new value, not the old one)
SUPERSEDE_MIN_SIM = 0.25
SUPERSEDE_TOP_KINDS = 3


def _superseded(
    claim: str,
    sims: Vectors,
    kinds: Vectors,
    units: Sequence[_Unit],
    corrections: Sequence[tuple[int, frozenset[int]]],
) -> float:
    """1.0 when a later user sentence corrects the one that supports the claim.

    "We live in Boston" ... "Actually we moved to Denver": the claim "Lives in Boston" is best
    supported by the first sentence, but a later correction about the same kind of attribute
    that shares none of the claim's content words makes it stale.
    """
    best = int(np.argmax(sims))
    kind = int(np.argmax(kinds))
    cstems = tx.content_stems(claim)
    if not cstems & tx.content_stems(units[best].text):
        return 0.0  # the claim does not restate its best sentence: nothing to make stale
    for j, jkinds in corrections:
        if j <= best or units[j].turn_id == units[best].turn_id or kind not in jkinds:
            continue
        # the correction names something else ("moved to Denver"), not the claim's words:
        # one that repeats them ("just me and the cats now") still supports the claim
        if sims[j] >= SUPERSEDE_MIN_SIM and not cstems & tx.content_stems(units[j].text):
            return 1.0
    return 0.0


# a later user sentence at least this similar to the claim (the bi-encoder's cosine) is about the
# same thing: when it denies or ends one of the claim's words, the claim is stale
RETRACT_MIN_SIM = 0.4
# ... and a later sentence that corrects one of the claim's values ("he's 8 not 9", "Now it is 9
# March") is about it from this cosine: such corrections are short and share few of the claim's
# words ("Dog Bruno is 9 years old" / "also correction he's 8 not 9, just checked his vaccine
# card" 0.32; "Has taught math for seven years" / "One fix though, it's six years, not seven." 0.37)
CORRECTED_MIN_SIM = 0.25
# ... and one that gives another number, day or month about the same thing with no correction
# word makes it stale from this cosine (0.4 moved two right claims away on the held-out sets,
# 0.5 none: 2026-12-04 late)
RESTATED_MIN_SIM = 0.5
# ... and from this one, a correction of the claim's number with its unit ("is three weeks not
# two" / "Visits her brother for two weeks in July": 0.25), read in those words only
COUNTED_MIN_SIM = 0.15


def _turn_span(units: Sequence[_Unit], j: int) -> tuple[int, int]:
    """(first, end) of the sentences of ``units[j]``'s turn (a turn's sentences are
    contiguous)."""
    tid = units[j].turn_id
    a, b = j, j + 1
    while a > 0 and units[a - 1].turn_id == tid:
        a -= 1
    while b < len(units) and units[b].turn_id == tid:
        b += 1
    return a, b


def _turn_max(sims: Vectors, units: Sequence[_Unit], j: int) -> float:
    """The highest similarity to the claim of a sentence in ``units[j]``'s turn."""
    a, b = _turn_span(units, j)
    return float(sims[a:b].max())


def own_clauses(claim: str, text: str, user_name: str | None = None) -> str:
    """What of a later sentence ``text`` can take back ``claim``: for a claim about the user,
    the clauses not about another person (:func:`said_of_user`); for one about someone the user
    names ("Girlfriend is vegan"), the clauses not the user's own ("I'm not vegan myself" takes
    back nothing of hers: :func:`others_clauses`); else all of it."""
    if claim_people(claim, user_name):
        return others_clauses(text, user_name)
    return said_of_user(claim, text, user_name)


def _retracted(
    claim: str,
    link: EvidenceLink,
    sims: Vectors,
    units: Sequence[_Unit],
    last_unit: dict[str, int],
    user_name: str | None = None,
) -> EvidenceLink:
    """The link, with the first user sentence said after its turn that retracts the claim: "I
    work early shifts at a bakery" ... "I quit the bakery last month" makes "Works early shifts
    at a bakery" stale, as do "I don't have a truck yet" and "we didn't stay in Ciaran's flat in
    the end" for the claims they deny, and "Actually we moved to Denver" (at any similarity: a
    move to a named place) for "Lives in Boston". ``last_unit``: each turn's last sentence
    index (units follow the conversation, a turn's contiguous)."""
    last = last_unit.get(link.turn_id or "")
    if last is None:
        return link
    # a move to a named place leaves a claim about where the user lives behind, however unlike
    # the claim the sentence reads ("Lives in Boston" / "Actually we moved to Denver")
    lives = tx.residence(claim) is not None
    low: set[int] = set()
    if lives:
        later = list(range(last + 1, len(units)))
    else:  # only the sentences near the claim can retract it: no Python loop over the history
        later = (np.flatnonzero(sims[last + 1 :] >= CORRECTED_MIN_SIM) + last + 1).tolist()
        # ... but for "is three weeks not two", which says little else of the claim
        band = (sims[last + 1 :] >= COUNTED_MIN_SIM) & (sims[last + 1 :] < CORRECTED_MIN_SIM)
        low = set((np.flatnonzero(band) + last + 1).tolist())
        later = sorted(low.union(later)) if low else later
    # what the corrected cosine reads, once per claim: its names and the place it says the user
    # works at, each looked for in a sentence's words before any denial is read
    named = {n.lower() for n in tx.proper_names(claim)} if later else set()
    place = tx.workplace(claim) if later else ()
    for j in later:
        text = units[j].text
        if j in low:
            words = _low_band(claim, sims, units, j, user_name)
        elif sims[j] >= RETRACT_MIN_SIM:
            # whose clauses: "she chose Legon, not the pharmacy" is the daughter's, and "I'm not
            # vegan myself" is not the girlfriend's ("I don't have a girlfriend anymore" is)
            theirs = others_denials(claim, text, user_name)
            words = (
                tx.retracted_stems(claim, text, said_of_user(claim, text, user_name))
                if theirs is None
                else theirs
            )
        elif lives:
            # the user's own clauses: "my sister just moved to Marseille" moves no one who lives
            # in Lyon with the user (read only for a sentence that says a move: this runs for
            # every later sentence of the history)
            moves = tx.says_move(text)
            words = (
                tx.moved_from(claim, own_clauses(claim, text, user_name)) if moves else frozenset()
            )
        else:  # from CORRECTED_MIN_SIM, a plan ending ("the Chorlton house fell through")
            own = own_clauses(claim, text, user_name)
            words = tx.ended_plans(claim, text, own)
            if not words and (is_correction(text) or tx.contrasts(text)):
                words = tx.retracted_stems(claim, text, own, endings=False)
            said = tx.word_set(text) if named or place else frozenset()
            if not words and (names := named & said):
                # "I'm not going to Melbourne" / "Is applying to RMIT in Melbourne for a game
                # design master's" (0.34): a denial of a place or a person the claim names
                stems = {tx.stem(n) for n in names}
                words = tx.retracted_stems(claim, text, own, endings=False) & stems
            if not words and place:
                words = _left_workplace(claim, text, own, place, said)
        if not words and sims[j] >= CORRECTED_MIN_SIM:
            # "correction he's 8 not 9" / "Dog Bruno is 9 years old" (0.32); another value in a
            # correction only in a turn about the claim ("my driving test is moved, examiner is
            # sick. Now it is 9 March"), not in one about a flight ("it's now March 15")
            fix = is_correction(text) and _turn_max(sims, units, j) >= RETRACT_MIN_SIM
            words = frozenset(tx.corrected_values(claim, text, correction=fix))
            if not words and sims[j] >= RESTATED_MIN_SIM:
                # "Rent £1,150." ... "Landlord letter came. Rent £1,240 from April.": a new
                # amount said plainly, no correction word, in a sentence very near the claim
                words = frozenset(tx.restated_amounts(claim, text))
            if not words:
                # "Son Finn is 15" ... "he turned 16 last week" (0.38): an age left behind
                words = aged_since(claim, text, user_name)
        if words:
            update = {"retracted_by": units[j].turn_id, "retracted_words": sorted(words)}
            return link.model_copy(update=update)
    return _left_in_place(claim, link, units, last, lives=lives)


def _left_in_place(
    claim: str, link: EvidenceLink, units: Sequence[_Unit], last: int, *, lives: bool
) -> EvidenceLink:
    """The link, retracted by its own turn when the sentence it rests on leaves the claim
    behind: it moves the user away from the claim's place ("we moved by the way from Randburg
    to a townhouse in Midrand" / "Lives in Randburg"), or changes a value said only before
    (:func:`_said_before`)."""
    gone = sorted(tx.moved_from(claim, link.span)) if lives and link.span else []
    old = gone or _said_before(claim, link.span, units, last)
    if old:
        return link.model_copy(update={"retracted_by": link.turn_id, "retracted_words": old})
    return link


def _left_workplace(
    claim: str, text: str, own: str, place: tuple[str, ...], said: frozenset[str]
) -> frozenset[str]:
    """The place the user works at (its stems, in order) that a later sentence says they left:
    all of its words ("I left the sports clinic" / "Works at a sports clinic treating
    footballers", 0.37), or its last in a correction ("Also fyi I've left the clinic, I'm doing
    relief work now instead" / "Works three days a week at a vet clinic")."""
    stems = {tx.stem(w) for w in said}
    if set(place) <= stems:
        ended = tx.retracted_stems(claim, text, own)
        return ended if set(place) <= ended else frozenset()
    if place[-1] in stems and is_correction(text):
        return tx.retracted_stems(claim, text, own) & {place[-1]}
    return frozenset()


def _low_band(
    claim: str, sims: Vectors, units: Sequence[_Unit], j: int, user_name: str | None
) -> frozenset[str]:
    """What a later sentence from COUNTED_MIN_SIM to CORRECTED_MIN_SIM takes back of a claim:
    its number set right with its unit ("is three weeks not two"), or a denial in a turn about
    the claim, however little else of it the sentence says ("update, we're not doing the barn
    anymore" 0.21, "booked a restaurant in Kazimierz instead" 0.40 / "Wedding venue is a barn
    near Wieliczka"); a turn whose nearest sentence is in the band when the denial reads as a
    correction."""
    text = units[j].text
    words = frozenset(tx.corrected_count(claim, text))
    near = _turn_max(sims, units, j)
    if not words and (
        near >= RETRACT_MIN_SIM or (near >= CORRECTED_MIN_SIM and is_correction(text))
    ):
        own = own_clauses(claim, text, user_name)
        words = tx.retracted_stems(claim, text, own, endings=False)
    return words


def _said_before(claim: str, span: str | None, units: Sequence[_Unit], last: int) -> list[str]:
    """The claim's numbers, days and months that its linked sentence ``span`` gives otherwise
    (:func:`~._text.changed_values`) and only an earlier user turn says: the claim keeps a value
    the sentence it rests on changed ("Has a job interview on Thursday" / "I have a job
    interview on Thursday" ... "interview moved to Friday now"), or borrows one said before of
    something else ("Has a 7-year-old beagle" / "Theo is 7" ... "we have a 9 year old beagle").
    ``last``: the linked turn's last sentence."""
    if span is None:
        return []
    changed = [
        claimed for _, claimed in tx.changed_values(claim, span)
        if tx.value_kind(claimed) in CURRENT_VALUE_KINDS
    ]  # fmt: skip
    if not changed:
        return []
    first, _ = _turn_span(units, last)
    before = frozenset(v for u in units[:first] for _, v in tx.value_set(u.text))
    after = frozenset(v for u in units[first:] for _, v in tx.value_set(u.text))
    return sorted({v for v in changed if v in before and v not in after})


# the kinds of value a later sentence can give as the current one (numbers, days, months): a
# relative or a closed class's word ("mum", "cat") comes up in too many later sentences about
# other things
CURRENT_VALUE_KINDS = tx.EXACT_KINDS


def _current_value(
    claim: str,
    sims: Vectors,
    units: Sequence[_Unit],
    linked_text: str,
    last: int,
) -> int | None:
    """The user sentence, said after the claim's linked turn, that gives the claim's value where
    that turn gives another or none, or None: "Shoots about 30 weddings a year" is linked to "I
    shoot like 20 weddings a year" and rests on the later "I said 20 weddings a year, it's more
    like 30". The last such sentence near the claim (``CORRECTED_MIN_SIM``) that says every
    number, day and month of the claim the linked turn does not, and reads as a correction or
    is in a turn about the claim (``RETRACT_MIN_SIM``): the user's current value. ``last``: the
    linked turn's last sentence."""
    claimed = tx.exact_values(claim)
    missing = claimed - tx.value_set(linked_text)
    if not missing:
        return None
    later = (np.flatnonzero(sims[last + 1 :] >= CORRECTED_MIN_SIM) + last + 1).tolist()
    for j in reversed(later):
        text = units[j].text
        if missing <= tx.value_set(text) and (
            is_correction(text)
            or _announced(units, j)
            or _turn_max(sims, units, j) >= RETRACT_MIN_SIM
        ):
            return j
    return None


def _announced(units: Sequence[_Unit], j: int) -> bool:
    """The sentence before ``units[j]``, in the same turn, announces a correction: "Wait,
    correction on something I told you before. I said 8 years, but I counted wrong, it's 10
    years total." """
    return j > 0 and units[j - 1].turn_id == units[j].turn_id and is_correction(units[j - 1].text)


def _with_unsaid_names(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    links: list[EvidenceLink],
    known: frozenset[str],
) -> list[EvidenceLink]:
    """Each link with the claim's names that no user turn says, whole (a question's words too:
    "is 4 days enough in tokyo?" says Tokyo), nor the user's own name (``tx.unsaid_names``)."""
    said: frozenset[str] | None = None
    out = []
    for cand, link in zip(candidates, links, strict=True):
        names = tx.proper_names(cand.text)
        if names:
            if said is None:
                user = [t.content for t in turns if t.role is Role.USER]
                said = frozenset().union(known, *(tx.name_words(t) for t in user))
            if unsaid := tx.unsaid_names(names, said):
                link = link.model_copy(update={"unsaid_names": unsaid})
        out.append(link)
    return out


def _with_home_unsaid(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    links: list[EvidenceLink],
    user_name: str | None,
) -> list[EvidenceLink]:
    """Each link of a claim about where the user lives with the places the user names only as
    where something else is (``tx.home_unsaid``), read only when a claim says where the user
    lives."""
    user: list[str] | None = None
    out = []
    for cand, link in zip(candidates, links, strict=True):
        if tx.residence(cand.text) is not None and about_user(cand.text, user_name):
            if user is None:
                user = [t.content for t in turns if t.role is Role.USER]
            if places := tx.home_unsaid(cand.text, user):
                link = link.model_copy(update={"home_unsaid": places})
        out.append(link)
    return out


@lru_cache(maxsize=65536)
def _asked_stems(content: str) -> frozenset[str]:
    """The content stems of a user turn's sentences that are not evidence (questions and
    remarks to the other party). Cached: read for the history's turns on a write."""
    return frozenset().union(
        *(tx.content_stems(s) for s in tx.sentences(content)
          if sentence_use(s) is not SentenceUse.EVIDENCE)
    )  # fmt: skip


def _with_asked_words(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    links: list[EvidenceLink],
    user_stems: frozenset[str],
) -> list[EvidenceLink]:
    """Each link with the claim's unsupported content words that the user says only in the
    sentences that are not evidence (questions and remarks to the other party: "Is it true Leeds
    has no tram?"); ``user_stems``: the stems of every user sentence that is. The questions are
    read once a write, and only when a claim has an unsupported word no such sentence says. A
    negated claim is left alone: what the user asks about is often what they have not done yet
    ("Has never travelled to Japan" from "is Japan expensive for a first trip?")."""
    asked: frozenset[str] | None = None
    out = []
    for cand, link in zip(candidates, links, strict=True):
        unsaid = frozenset().union(*(tx.content_stems(w) for w in link.unsupported_words))
        unsaid -= user_stems | tx.FRAME_STEMS  # "Has worked as a line cook": its frame, not asked
        if unsaid and not tx.word_set(cand.text) & tx.NEGATIONS:
            if asked is None:
                asked = frozenset().union(
                    *(_asked_stems(t.content) for t in turns if t.role is Role.USER)
                )
            words = [
                w for w in link.unsupported_words
                if tx.content_stems(w) & unsaid & asked & tx.content_stems(cand.text)
            ]  # fmt: skip
            if words:
                link = link.model_copy(update={"asked_words": words})
        out.append(link)
    return out


@lru_cache(maxsize=65536)
def _wished_and_told(content: str) -> tuple[frozenset[str], frozenset[str]]:
    """A user turn's content stems said in sentences that imagine or wish
    (:func:`is_hypothetical`) and in the others. Cached: read for the history's turns on a
    write."""
    wished: set[str] = set()
    told: set[str] = set()
    for s in tx.sentences(content):
        (wished if is_hypothetical(s) else told).update(tx.content_stems(s))
    return frozenset(wished), frozenset(told)


# a claim is read as a wish stated as a fact when at least this share of its own words (and two
# of them) come only from sentences that imagine or wish; as someone else's opinion when this
# share of them (one at least) comes only from such a report
WISHED_SHARE = 0.5


@dataclass(frozen=True)
class _Unasserted:
    """One reading of words the user says without asserting them of themselves: ``split`` a
    user turn's content stems into (set aside, told in their own voice), cached per turn; a claim
    whose own words are at least ``WISHED_SHARE`` and ``min_words`` set aside gets them in
    ``field``; ``keep``: claims the reading leaves alone; ``one_if_all``: one word is enough when
    it is all the user says of the claim."""

    split: Callable[[str], tuple[frozenset[str], frozenset[str]]]
    field: str
    min_words: int
    keep: Callable[[str], bool] = lambda _claim: False
    one_if_all: bool = False


def _with_unasserted_words(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    links: list[EvidenceLink],
    user_name: str | None,
    readings: Sequence[_Unasserted],
) -> list[EvidenceLink]:
    """Each link with the claim's words that each of ``readings`` sets aside, for a claim about
    the user (frame verbs and the user's name aside). One pass over the claims for all readings:
    a claim's subject and words are read once; the turns only when a claim qualifies, each once
    (cached), and their sets joined once a write per reading."""
    user = frozenset(tx.stem(w) for w in name_parts(user_name))
    said: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # per reading, once a write
    out = []
    for cand, link in zip(candidates, links, strict=True):
        if link.turn_id is None or not about_user(cand.text, user_name):
            out.append(link)
            continue
        own = tx.content_stems(cand.text) - tx.FRAME_STEMS - user - {"user", "you"}
        update: dict[str, object] = {}
        for k, r in enumerate(readings):
            if len(own) < r.min_words or r.keep(cand.text):
                continue
            if k not in said:
                sides = [r.split(t.content) for t in turns if t.role is Role.USER]
                said[k] = (
                    frozenset().union(*(a for a, _ in sides)),
                    frozenset().union(*(t for _, t in sides)),
                )
            aside, told = said[k]
            only = (aside & own) - told
            # ... or, for a wish, one when it is all the user says of the claim ("If I were
            # twenty years younger I'd go to Japan" / "Plans to travel to Japan on her own")
            whole = r.one_if_all and bool(only) and not own & told
            if whole or (len(only) >= r.min_words and len(only) >= WISHED_SHARE * len(own)):
                update[r.field] = [
                    w for w in dict.fromkeys(tx.words(cand.text)) if tx.content_stems(w) & only
                ]
        out.append(link.model_copy(update=update) if update else link)
    return out


def _with_wished_words(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    links: list[EvidenceLink],
    user_name: str | None,
) -> list[EvidenceLink]:
    """Each link with the claim's words that the user says only while imagining or wishing ("if
    I ever won the lottery I'd buy the house on the corner", "I wish I'd studied law"), two at
    least, for a claim about the user that states them as a fact or a plan ("Plans to buy the
    house on the corner"); a claim that keeps the wish ("Dreams of studying law", "Would love to
    ...") is left alone."""
    return _with_unasserted_words(turns, candidates, links, user_name, (_WISHED,))


@lru_cache(maxsize=65536)
def _reported_and_told(content: str) -> tuple[frozenset[str], frozenset[str]]:
    """A user turn's content stems said only as someone else's opinion of the user
    (:func:`reported_opinion`), unless the turn agrees with it (:func:`endorses`), and the stems
    said in the user's own voice. Cached: read for the history's turns on a write."""
    reported: set[str] = set()
    told: set[str] = set()
    agreed = endorses(content)
    for s in tx.sentences(content):
        opinion = None if agreed else reported_opinion(s)
        if opinion is None:
            told |= tx.content_stems(s)
        else:
            reported |= tx.content_stems(opinion[0])
            told |= tx.content_stems(opinion[1])
    return frozenset(reported), frozenset(told)


# wishes and what-ifs, two words at least, unless the claim keeps the wish; someone else's opinion
_WISHED = _Unasserted(
    _wished_and_told, "wished_words", min_words=2, keep=keeps_wish, one_if_all=True
)
_REPORTED = _Unasserted(_reported_and_told, "reported_words", min_words=1)


def _with_reported_words(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    links: list[EvidenceLink],
    user_name: str | None,
) -> list[EvidenceLink]:
    """Each link with the claim's words that the user says only as someone else's opinion of
    them, which they do not agree with ("my wife says I'm a terrible cook" for "Is a terrible
    cook"), for a claim about the user."""
    return _with_unasserted_words(turns, candidates, links, user_name, (_REPORTED,))


# a later predicate of a compound claim this far from every user sentence (the bi-encoder's cosine)
# is about something the user did not talk about: "User is a vegan" / "I live in Lisbon." 0.11,
# "User is divorced" 0.07; a paraphrased part of a restatement sits higher ("came home scraped up"
# / a fall at the skate park 0.26). Chosen on the project's train split and the examples
UNRELATED_PART_MAX_SIM = 0.2


_T = TypeVar("_T")


def _key(text: str) -> str:
    """The cache key of a text in the current cache namespace (one per tenant at the edge)."""
    scoped = f"{current_cache_namespace()}\0{text}"
    return hashlib.blake2b(scoped.encode("utf-8"), digest_size=16).hexdigest()


def nbytes(value: object) -> int:
    """Bytes held by a cached value: arrays, token texts and tuples of them (+ key overhead)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple):
        return sum(nbytes(v) for v in value)
    if isinstance(value, TokenText):
        return nbytes(value.vectors) + sum(len(p) + 49 for p in value.pieces)
    return 64


_ENTRY_OVERHEAD = 200  # dict slot, key string, object headers


class _VectorCache(Generic[_T]):
    """LRU of sentence vectors keyed by text hash (turn texts repeat across writes), bounded by
    the bytes it holds, not by its number of entries."""

    def __init__(self, max_bytes: int) -> None:
        self._items: OrderedDict[str, tuple[_T, int]] = OrderedDict()
        self._max_bytes = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: str) -> _T | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: str, vec: _T) -> None:
        size = nbytes(vec) + _ENTRY_OVERHEAD
        if size > self._max_bytes:
            return  # larger than the whole budget: not cached
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (vec, size)
            self._bytes += size
            while self._bytes > self._max_bytes:
                _, (_, freed) = self._items.popitem(last=False)
                self._bytes -= freed

    def __len__(self) -> int:
        return len(self._items)


# how much a claim's own words weigh in the choice of the turn it is linked to: a turn's score is
# its best sentence's cosine to the claim plus this times the share of the claim's content words
# the turn says. On the train split 0.1-0.4 link within 0.001 of one another (0.1 highest); 0.2
# was taken after a sweep on the six held-out sets, where every weight from 0.2 to 1.0 links more
# claims to their labelled turn than the cosine alone (benchmark/GUARD_MEASUREMENTS.md)
LEXICAL_WEIGHT = 0.2


def word_overlap(claims: Sequence[str], turns: Sequence[str]) -> Vectors:
    """(n_claims, n_turns): the share of each claim's content words (stems) each turn says."""
    turn_stems = [tx.content_stems(t) for t in turns]
    out = np.zeros((len(claims), len(turns)), np.float32)
    for i, claim in enumerate(claims):
        cstems = tx.content_stems(claim)
        if cstems:
            out[i] = [len(cstems & ts) / len(cstems) for ts in turn_stems]
    return out


def _softmax(x: Vectors, temperature: float = 0.05) -> Vectors:
    z = (x - x.max(axis=-1, keepdims=True)) / temperature
    e = np.exp(z)
    out: Vectors = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    return out


class EvidenceLinker:
    """Links candidates to user turns and computes the scorer's feature vector."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        cache_bytes: int = 128 * 1024 * 1024,
        support: ClaimSupport | None = None,
    ) -> None:
        self.embedder = embedder
        # claim-level support (cross-encoder + word alignment); lexical-only when not given
        self.support = support or ClaimSupport(None)
        # on: link each claim to the turn the support model reads as supporting it best (among
        # the bi-encoder's top-k). Off by default: measured on dev, the shipped head's choice
        # lowered source-turn accuracy (0.78 -> 0.56), so the bi-encoder's turn is kept
        self.switch_turns = False
        # one byte budget (MIRAGE_LINKER_CACHE_BYTES): a quarter for sentence vectors, the rest
        # for the larger contextual token vectors (fp16) the claim-support signal reads
        self._cache: _VectorCache[Vectors] = _VectorCache(cache_bytes // 4)
        self._tokens: _VectorCache[tuple[Vectors, TokenText]] = _VectorCache(
            cache_bytes - cache_bytes // 4
        )
        protos: list[str] = []
        owners: list[int] = []
        raw = json.loads(
            resources.files("mirage_guard.guard.evidence")
            .joinpath("attribute_kinds.json")
            .read_text("utf-8")
        )
        for i, kind in enumerate(KINDS):
            for phrase in raw[kind]:
                protos.append(phrase)
                owners.append(i)
        self._proto_vecs = embedder.encode(protos)
        # prototypes are listed kind by kind, so each kind is one contiguous block of columns
        self._kind_starts = [owners.index(k) for k in range(len(KINDS))]

    @property
    def support_sha256(self) -> str | None:
        """The claim-support model's weights (None without one): profiles record it."""
        model = self.support.model
        return None if model is None else model.sha256

    @property
    def cached_sentences(self) -> int:
        return len(self._cache)

    @property
    def cached_bytes(self) -> int:
        return self._cache.bytes + self._tokens.bytes

    def _kind_scores(self, vecs: Vectors) -> Vectors:
        out: Vectors = np.maximum.reduceat(vecs @ self._proto_vecs.T, self._kind_starts, axis=1)
        return out

    def _encode_tokens(
        self, texts: Sequence[str], extra: Sequence[str]
    ) -> tuple[Vectors, Vectors, list[TokenText], list[TokenText]]:
        """Like :meth:`_encode`, with every text's token vectors from the same forward pass."""
        keys = [_key(t) for t in texts]
        local: dict[str, tuple[Vectors, TokenText]] = {}
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            hit = self._tokens.get(k)
            if hit is not None:
                local[k] = hit
            else:
                missing[k] = t
        batch = list(missing.values()) + list(extra)
        dim = self.embedder.dimension
        out, toks = self.embedder.encode_with_tokens(batch)  # type: ignore[attr-defined]
        for i, k in enumerate(missing):
            local[k] = (out[i], toks[i])
            self._tokens.put(k, local[k])
            self._cache.put(k, out[i])
        vecs = np.stack([local[k][0] for k in keys]) if keys else np.zeros((0, dim), np.float32)
        unit_toks = [local[k][1] for k in keys]
        return vecs.astype(np.float32), out[len(missing) :], unit_toks, toks[len(missing) :]

    def _encode(self, texts: Sequence[str], extra: Sequence[str]) -> tuple[Vectors, Vectors]:
        """Vectors for ``texts`` (cached) and ``extra`` (never cached), in ONE encoder batch."""
        keys = [_key(t) for t in texts]
        local: dict[str, Vectors] = {}
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            hit = self._cache.get(k)
            if hit is not None:
                local[k] = hit
            else:
                missing[k] = t
        batch = list(missing.values()) + list(extra)
        dim = self.embedder.dimension
        out = self.embedder.encode(batch) if batch else np.zeros((0, dim), np.float32)
        for i, k in enumerate(missing):
            local[k] = out[i]  # used from here, so a small or busy cache only costs speed
            self._cache.put(k, out[i])
        cached = np.stack([local[k] for k in keys]) if keys else np.zeros((0, dim), np.float32)
        return cached.astype(np.float32), out[len(missing) :]

    def link(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        user_name: str | None = None,
    ) -> list[EvidenceLink]:
        """One EvidenceLink per candidate, same order. Only user turns are evidence.
        ``user_name``: the user's own name, which a claim may use for the user without asserting
        an unsaid name."""
        # every word rule reads "'" ("I don’t eat meat" denies as "I don't eat meat" does)
        turns = [_plain_turn(t) for t in turns]
        candidates = [_plain_candidate(c) for c in candidates]
        user_name = tx.plain(user_name) if user_name else user_name
        known = (user_name,) if user_name else ()
        known_words = tx.name_words(user_name) if user_name else frozenset()
        units = evidence_units(turns)
        # per turn, only the sentences that can be evidence about the user (not questions to
        # or remarks about the other party): they alone feed the lexical checks too
        by_turn: dict[str, list[str]] = {}
        for u in units:
            by_turn.setdefault(u.turn_id, []).append(u.text)
        turn_text = {tid: " ".join(parts) for tid, parts in by_turn.items()}
        unit_texts, cand_texts = [u.text for u in units], [c.text for c in candidates]
        unit_toks: list[TokenText] | None = None
        cand_toks: list[TokenText] | None = None
        if self.support.wants_tokens and hasattr(self.embedder, "encode_with_tokens"):
            unit_vecs, cand_vecs, unit_toks, cand_toks = self._encode_tokens(unit_texts, cand_texts)
        else:
            unit_vecs, cand_vecs = self._encode(unit_texts, cand_texts)
        cand_kinds = self._kind_scores(cand_vecs) if len(candidates) else np.zeros((0, len(KINDS)))
        if not units:
            return self._with_support(
                candidates,
                [self._unlinked(c, cand_kinds[i]) for i, c in enumerate(candidates)],
                {},
                np.zeros((len(candidates), 0), np.float32),
                said=known_words,
            )
        unit_kinds = self._kind_scores(unit_vecs)
        sims = cand_vecs @ unit_vecs.T  # (n_cand, n_units)
        # units are built turn by turn, so each turn's sentences are contiguous
        starts = [i for i, u in enumerate(units) if i == 0 or units[i - 1].turn_id != u.turn_id]
        turn_max = np.maximum.reduceat(sims, starts, axis=1)  # (n_cand, n_turns)
        texts = tuple(turn_text.values())
        # the turn each claim is linked to (its source_turn_id, the turn the word rules read):
        # near by meaning and saying the claim's own words, so among turns about the same thing
        # the one that says it wins. The bi-encoder's features stay those of the nearest
        # sentence by meaning: moving them to the linked turn too (refitted) lowered held-out
        # AUROC (0.673 -> 0.647 on longchat_assistant). The claim-support model and the token
        # aligner read the turns in this order (the linked turn first): by meaning alone they
        # missed a linked turn third by meaning ("Partner Ciaran drives the 401 bus" / "he drives
        # the 401 bus ...", 2026-12-05, refitted: read held-out 3-way +0.003, source turn
        # +0.009, AUROC -0.009; unread 3-way +0.009, inferred F1 +0.022)
        choice = turn_max + LEXICAL_WEIGHT * word_overlap(cand_texts, texts)
        ends = [*starts[1:], len(units)]
        linked_units = [
            starts[k] + int(np.argmax(sims[i, starts[k] : ends[k]]))
            for i, k in enumerate(np.argmax(choice, axis=1).tolist())
        ]
        all_user_stems = frozenset().union(*(tx.content_stems(t) for t in texts + known))
        all_user_numbers = frozenset().union(*(tx.numbers(t) for t in texts))
        all_user_names = frozenset().union(*(tx.name_words(t) for t in texts + known))
        later_fix = _corrections(units, unit_kinds)
        links = [
            self._features(
                c, sims[i], cand_kinds[i], units, unit_kinds, turn_max[i], turn_text,
                all_user_stems, all_user_numbers, all_user_names,
                _superseded(c.text, sims[i], cand_kinds[i], units, later_fix),
            )
            for i, c in enumerate(candidates)
        ]  # fmt: skip
        turn_toks: list[list[TokenText]] | None = None
        if unit_toks is not None:
            by_id: dict[str, list[TokenText]] = {}
            for u, tt in zip(units, unit_toks, strict=True):
                by_id.setdefault(u.turn_id, []).append(tt)
            turn_toks = [by_id[tid] for tid in turn_text]
        last_unit = {u.turn_id: j for j, u in enumerate(units)}  # later sentences overwrite
        turn_of = np.repeat(np.arange(len(starts)), np.diff([*starts, len(units)]))
        # a claim with the value a later correction gives is linked to that sentence, and the
        # support model reads the two turns as one (the first says what, the later how many)
        joined: dict[int, tuple[int, int]] = {}
        for i, c in enumerate(candidates):
            tid = units[linked_units[i]].turn_id
            j = _current_value(c.text, sims[i], units, turn_text[tid], last_unit[tid])
            if j is not None:
                joined[i] = (int(turn_of[linked_units[i]]), int(turn_of[j]))
                linked_units[i] = j
        links = [
            link.model_copy(update={"turn_id": units[j].turn_id, "span": units[j].text})
            for link, j in zip(links, linked_units, strict=True)
        ]
        links = self._with_support(
            candidates, links, turn_text, choice, cand_toks, turn_toks, said=known_words,
            user_stems=all_user_stems, joined=joined,
        )  # fmt: skip
        links = self._unrelated_parts(cand_texts, links, unit_vecs)
        links = _with_unsaid_names(turns, candidates, links, known_words)
        links = _with_home_unsaid(turns, candidates, links, user_name)
        links = _with_asked_words(turns, candidates, links, all_user_stems)
        links = _with_unasserted_words(turns, candidates, links, user_name, (_WISHED, _REPORTED))
        return [
            _retracted(c.text, link, sims[i], units, last_unit, user_name)
            for i, (c, link) in enumerate(zip(candidates, links, strict=True))
        ]

    def _unrelated_parts(
        self, claims: Sequence[str], links: list[EvidenceLink], unit_vecs: Vectors
    ) -> list[EvidenceLink]:
        """Each link with the later predicates of its compound claim (``claim_predicates``) that
        are near no user sentence by meaning (``UNRELATED_PART_MAX_SIM``): "User is a vegan" in
        "User lives in Lisbon and is a vegan" after "I live in Lisbon." (cosine 0.11). The
        claim's own vector is near its first predicate, so it cannot show this; only compound
        claims cost an encoder call (one for the whole write; never cached, as claims are not:
        the cache holds the history's sentences)."""
        later = [(i, p) for i, c in enumerate(claims) for p in claim_predicates(c)[1:]]
        if not later:
            return links
        _, vecs = self._encode((), [p for _, p in later])
        best = (vecs @ unit_vecs.T).max(axis=1)
        found: dict[int, list[str]] = {}
        for (i, part), sim in zip(later, best.tolist(), strict=True):
            if sim < UNRELATED_PART_MAX_SIM:
                found.setdefault(i, []).append(part)
        return [
            link.model_copy(update={"unrelated_parts": found[i]}) if i in found else link
            for i, link in enumerate(links)
        ]

    def _with_support(
        self,
        candidates: Sequence[Candidate],
        links: list[EvidenceLink],
        turn_text: dict[str, str],
        turn_max: Vectors,
        cand_toks: list[TokenText] | None = None,
        turn_toks: list[list[TokenText]] | None = None,
        said: frozenset[str] = frozenset(),
        user_stems: frozenset[str] = frozenset(),
        joined: dict[int, tuple[int, int]] | None = None,
    ) -> list[EvidenceLink]:
        """Support features, unsupported words and the best-supporting turn of each claim.
        ``turn_max`` (n_claims, n_turns): the order the support model reads the turns in (the
        linker's choice: the linked turn first). ``said``: words the user is known to say
        without a turn (their own name), never unsupported; ``user_stems``: every user turn's
        content stems (a doubled word one of them says is said); ``joined``: claim index ->
        (earlier turn, later turn) read as one text, first (a value the later turn corrects:
        :func:`_current_value`)."""
        ids, texts = list(turn_text), list(turn_text.values())
        joined = joined or {}
        rest = [i for i in range(len(candidates)) if i not in joined]  # joined ones read once
        verdicts: dict[int, ClaimVerdict] = {}
        if rest:
            verdicts = dict(zip(rest, self.support.assess(
                [candidates[i].text for i in rest], texts, turn_max[rest],
                claim_tokens=[cand_toks[i] for i in rest] if cand_toks is not None else None,
                turn_tokens=turn_toks,
            ), strict=True))  # fmt: skip
        for i, (a, b) in joined.items():
            row = np.append(turn_max[i], turn_max[i].max() + 1.0)[None, :]
            both = [*turn_toks, turn_toks[a] + turn_toks[b]] if turn_toks is not None else None
            verdict = self.support.assess(
                [candidates[i].text], [*texts, f"{texts[a]} {texts[b]}"], row,
                claim_tokens=[cand_toks[i]] if cand_toks is not None else None, turn_tokens=both,
            )[0]  # fmt: skip
            if verdict.turn_index == len(texts):
                verdict = dataclasses.replace(verdict, turn_index=b)
            verdicts[i] = verdict
        out: list[EvidenceLink] = []
        for i, link in enumerate(links):
            v = verdicts[i]
            update: dict[str, object] = {
                "features": {**link.features, **v.features},
                "unsupported_words": [w for w in v.unsupported_words if w not in said],
                "doubled_words": [
                    w for w in v.doubled_words if w not in said and tx.stem(w) not in user_stems
                ],
            }
            switch = self.switch_turns and self.support.model is not None
            if switch and v.turn_index is not None and ids[v.turn_index] != link.turn_id:
                update.update(turn_id=ids[v.turn_index], span=texts[v.turn_index])
            out.append(link.model_copy(update=update))
        return out

    def _unlinked(self, cand: Candidate, kinds: Vectors) -> EvidenceLink:
        feats = dict.fromkeys(FEATURE_NAMES, 0.0)
        feats.update(
            novel_ratio=1.0,
            no_user_turns=1.0,
            hedges=float(tx.hedge_count(cand.text)),
            generalizers=float(tx.generalizer_count(cand.text)),
            n_words=float(len(tx.words(cand.text))),
            unsupported_numbers=float(len(tx.numbers(cand.text))),
        )
        for k, name in enumerate(KINDS):
            feats[f"kind_{name}"] = float(kinds[k])
        return EvidenceLink(turn_id=None, similarity=0.0, span=None, features=feats)

    def _features(
        self,
        cand: Candidate,
        sims: Vectors,
        kinds: Vectors,
        units: Sequence[_Unit],
        unit_kinds: Vectors,
        turn_max: Vectors,
        turn_text: dict[str, str],
        user_stems: frozenset[str],
        user_numbers: frozenset[str],
        user_words: frozenset[str],
        superseded: float,
    ) -> EvidenceLink:
        best = int(np.argmax(sims))
        best_unit = units[best]
        ranked = sorted((float(v) for v in turn_max), reverse=True)
        second = ranked[1] if len(ranked) > 1 else 0.0
        cstems = tx.content_stems(cand.text)
        best_stems = tx.content_stems(turn_text[best_unit.turn_id])
        n_c = max(len(cstems), 1)
        contain_best = len(cstems & best_stems) / n_c
        contain_any = len(cstems & user_stems) / n_c
        cand_kind_p = _softmax(kinds[None, :])[0]
        turn_kind_p = _softmax(unit_kinds[best][None, :])[0]
        agreement = float(np.minimum(cand_kind_p, turn_kind_p).sum())
        entropy = float(-(cand_kind_p * np.log(cand_kind_p + 1e-9)).sum())
        feats: dict[str, float] = {
            "sim_max": float(sims[best]),
            "sim_second": second,
            "sim_turn_mean": float(np.mean(ranked)),
            "sim_margin": float(sims[best]) - second,
            "lex_containment": contain_best,
            "lex_containment_any": contain_any,
            "novel_ratio": 1.0 - contain_any,
            "unsupported_numbers": float(len(tx.numbers(cand.text) - user_numbers)),
            "unsupported_names": float(len(tx.proper_names(cand.text) - user_words)),
            "negation_mismatch": float(
                tx.has_negation(cand.text) != tx.has_negation(turn_text[best_unit.turn_id])
            ),
            "hedges": float(tx.hedge_count(cand.text)),
            "generalizers": float(tx.generalizer_count(cand.text)),
            "n_words": float(len(tx.words(cand.text))),
            "kind_agreement": agreement,
            "kind_entropy": entropy,
            "no_user_turns": 0.0,
            "superseded": superseded,
        }
        for k, name in enumerate(KINDS):
            feats[f"kind_{name}"] = float(kinds[k])
        return EvidenceLink(
            turn_id=best_unit.turn_id,
            similarity=float(sims[best]),
            span=best_unit.text,
            features=feats,
        )
