"""Training pairs for the claim-level support model: (user turn, claim) -> support class.

Built from the project's own TRAIN split only (never dev, never held-out sets, never BEGIN), with
both hand-written twins of every claim (flat and hedged; hedge words stripped where no twin was
written) so that phrasing cannot carry the class, plus perturbations derived from them by rule:

- a true claim with one invented detail glued on (place, day, name, number, duration, event)
  -> unsupported;
- a number, a day or a name of the evidence changed in the claim, or the claim negated
  -> contradicted;
- (``swapped_words``) a word of a closed class that the evidence says swapped in the claim for
  another of its class ("Studies nursing" -> "Studies medicine", "Has a cat" -> "Has a dog")
  -> contradicted;
- a specific turned into a habit or trait -> inferable (a generalisation is never a restatement);
- the evidence turned into a question or a remark about "you" (the other party) -> unsupported;
- a compound claim with one unsupported part -> unsupported;
- the claim against another turn of the same user -> unsupported (which turn supports it matters);
- an over-inferred claim (fabricated, stereotype) against a turn of its conversation -> unsupported:
  a random one, or (``nearest``) the user turns nearest to it, the ones the guard reads it against;
- the evidence followed by its own correction ("... Actually no, <the evidence with one number,
  day or name changed>") -> the old claim contradicted, the corrected claim entailed (the later
  words count);
- the evidence said about someone else ("I'm a nurse" -> "my sister is a nurse") -> unsupported;
- the evidence negated ("I eat pork" -> "I don't eat pork"): the negated claim entailed, the claim
  as it was contradicted (so a negation word alone says nothing about the class);
- a first-person sentence of the evidence echoed as a memory entry ("I went climbing last
  weekend." -> "Went climbing last weekend", "User went climbing last weekend") -> entailed: hand
  -written restatements mostly paraphrase while glued, changed and negated claims reuse the
  user's words, so without echoes a model learns that copying the user's words means "not said".

The hand-written pairs of :mod:`._support_authored` (their train side) come after those.

Everything is deterministic: fixed lists, a seeded ``random.Random`` and a fixed order.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mirage_guard.calibration._data import Example, packaged, strip_hedges
from mirage_guard.calibration._support_authored import AuthoredPair
from mirage_guard.guard import Label, Role
from mirage_guard.guard.evidence import (
    HEDGES,
    Embedder,
    SupportClass,
    content_stems,
    evidence_units,
    has_negation,
    same_class_values,
    sentences,
)

_PLACES = (
    "in Lisbon", "in Denver", "in Osaka", "near Lake Como", "in a small town outside Leeds",
    "in Cape Town", "at the Riverside club", "in Montreal", "in her hometown of Porto",
    "in Nairobi", "at a studio in Brooklyn", "in Tallinn",
)  # fmt: skip
_DAYS = (
    "on Tuesdays", "every Sunday morning", "on Friday nights", "each Wednesday",
    "every other Saturday", "on Monday evenings",
)  # fmt: skip
_NAMES = (
    "with her sister Maria", "with his brother Tom", "with a friend named Priya",
    "with his partner Jonas", "together with her cousin Ana", "with a colleague called Mehdi",
)  # fmt: skip
_NUMBERS = (
    "for 12 years", "since 2015", "about three times a week", "for over a decade",
    "with 40 other people", "twice a month", "for six months now", "since the age of 9",
)  # fmt: skip
_EVENTS = (
    "after a bad breakup last spring", "since winning a local competition",
    "after moving house in 2019", "since a trip to Japan", "after a health scare",
    "ever since the wedding",
)  # fmt: skip
GLUED_DETAILS: tuple[tuple[str, ...], ...] = (_PLACES, _DAYS, _NAMES, _NUMBERS, _EVENTS)

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january", "february", "march", "april", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_NUMBER_WORDS = (
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty",
    "thirty", "forty", "fifty",
)  # fmt: skip
_SWAP_NAMES = (
    "Madrid", "Chicago", "Kraków", "Seoul", "Toronto", "Manila", "Oslo", "Lagos", "Sofia",
    "Quito", "Google", "Tesla", "Bach", "Spanish", "Italian", "Mexican",
)  # fmt: skip
_TRAIT = (
    "Is the kind of person who always {c}",
    "Habitually {c}",
    "Is someone who constantly {c}",
)
_QUESTION = ("{p}?", "Wait, {p}?", "So {p}?")
_REMARK = ("That's great that {p}!", "Sounds like {p}.", "I heard {p}.")
_TO_SECOND = {
    "i": "you", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "me": "you",
    "my": "your", "mine": "yours", "myself": "yourself", "we": "you", "we're": "you're",
    "we've": "you've", "our": "your", "us": "you", "am": "are", "im": "you're",
}  # fmt: skip
_TOKEN = re.compile(r"[A-Za-z][A-Za-z']*|[^A-Za-z]+")
_NUM = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_CAP = re.compile(r"(?<=\s)[A-Z][a-z]{2,}")
_NEG_AUX = re.compile(r"\b(is|was|are|were|has been|can|will)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SupportPair:
    """One training pair: what the user said, the claim, and how the first supports the second."""

    premise: str
    claim: str
    label: SupportClass
    origin: str  # which rule made it (for the data card and for balanced checks)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) < 2 else text


def _strip_end(text: str) -> str:
    return text.strip().rstrip(".!")


def second_person(premise: str) -> str:
    """'I write backend code for my startup' -> 'you write backend code for your startup'."""
    out = []
    for tok in _TOKEN.findall(premise):
        low = tok.lower()
        out.append(_TO_SECOND.get(low, tok) if low in _TO_SECOND else tok)
    text = "".join(out).strip().rstrip(".!")
    return _lower_first(text)


_CONTRACTIONS = {
    "you're": "you're not", "he's": "he's not", "she's": "she's not", "you'd": "you wouldn't",
    "you'll": "you won't", "you've": "you haven't", "he'd": "he wouldn't", "she'd": "she wouldn't",
}  # fmt: skip
_PRONOUNS = frozenset(["you", "he", "she", "they", "it", "his", "her", "your", "their", "we", "i"])


def negate(claim: str) -> str | None:
    """A negated form of a claim by rule, or None when no rule fits."""
    first, _, rest = claim.partition(" ")
    low = first.lower().replace("’", "'")
    if low in _CONTRACTIONS and rest:
        neg = _CONTRACTIONS[low]
        return neg[:1].upper() + neg[1:] + " " + rest
    m = _NEG_AUX.search(claim)
    if m and m.start() < 40:
        return claim[: m.end()] + " not" + claim[m.end() :]
    if not rest or low in _PRONOUNS or "'" in low:
        return None
    if first[:1].isupper() and low.endswith("s") and len(low) > 3 and not low.endswith("ss"):
        base = low[:-2] if low.endswith(("shes", "ches", "sses", "xes")) else low[:-1]
        base = base[:-1] + "y" if low.endswith("ies") else base
        return f"Does not {base} {rest}"
    return None


def change_detail(claim: str, premise: str, rng: random.Random) -> str | None:
    """The claim with one number, day, month or name that the premise says replaced."""
    low_p = premise.lower()
    for num in _NUM.findall(claim):
        if num in premise:
            new = str(int(float(num.replace(",", ""))) + rng.choice((2, 3, 5, 7)))
            return claim.replace(num, new, 1)
    words = re.findall(r"[A-Za-z]+", claim)
    for w in words:
        lw = w.lower()
        for pool in (_NUMBER_WORDS, _WEEKDAYS, _MONTHS):
            if lw in pool and lw in low_p:
                new = rng.choice([x for x in pool if x != lw])
                new = new.capitalize() if w[:1].isupper() else new
                return re.sub(rf"\b{w}\b", new, claim, count=1)
    for name in _CAP.findall(" " + claim[1:]):
        if name.lower() in low_p:
            return re.sub(rf"\b{name}\b", rng.choice(_SWAP_NAMES), claim, count=1)
    return None


def swap_word(claim: str, premise: str, rng: random.Random) -> str | None:
    """The claim with its first word of a closed class (a relative, a pet, a sport, a diet, a
    field of study, ...: :func:`same_class_values`) that the premise also says replaced by
    another of its class the premise does not say, or None when it has none."""
    said = {w.lower() for w in re.findall(r"[A-Za-z]+", premise)}
    for w in re.findall(r"[A-Za-z]+", claim):
        others = [o for o in same_class_values(w) if o not in said]
        if w.lower() in said and others:
            new = rng.choice(others)
            new = new.capitalize() if w[:1].isupper() else new
            return re.sub(rf"\b{w}\b", new, claim, count=1)
    return None


def glue_detail(claim: str, premise: str, rng: random.Random) -> str:
    pool = rng.choice(GLUED_DETAILS)
    options = [d for d in pool if not (set(d.lower().split()) - {"in", "on", "with", "a", "the"})
               <= set(premise.lower().split())]  # fmt: skip
    return f"{_strip_end(claim)} {rng.choice(options or list(pool))}."


def as_trait(claim: str, rng: random.Random) -> str:
    return rng.choice(_TRAIT).format(c=_lower_first(_strip_end(claim))) + "."


def question_or_remark(premise: str, rng: random.Random) -> str:
    p = second_person(premise)
    if rng.random() < 0.5:
        frame = rng.choice(_QUESTION)
        text = frame.format(p=p)
    else:
        text = rng.choice(_REMARK).format(p=p)
    return text[:1].upper() + text[1:]


def authored_twins() -> dict[str, tuple[str, str]]:
    """claim_id -> (flat, hedged) from the hand-written ``authoring/part*_twins.jsonl`` files."""
    folder = packaged("authoring")
    out: dict[str, tuple[str, str]] = {}
    for part in sorted(folder.glob("part*_twins.jsonl")):
        for line in part.read_text("utf-8").splitlines():
            if line.strip():
                t = json.loads(line)
                out[str(t["claim_id"])] = (str(t["text_flat"]), str(t["text_hedged"]))
    return out


def _forms(ex: Example, twins: dict[str, tuple[str, str]]) -> list[str]:
    """The claim's text forms: as written, flat twin (or stripped), hedged twin; no repeats."""
    c = ex.claim
    flat, hedged = twins.get(c.claim_id, (c.text_flat, c.text_hedged))
    forms = [c.text, flat or strip_hedges(c.text), hedged or c.text]
    return list(dict.fromkeys(f for f in forms if f and f.strip()))


def _flat(ex: Example, twins: dict[str, tuple[str, str]]) -> str:
    flat = twins.get(ex.claim.claim_id, (ex.claim.text_flat, None))[0]
    return flat or strip_hedges(ex.claim.text)


def _turn_texts(ex: Example) -> dict[str, str]:
    return {t.id: t.content for t in ex.turns if t.role is Role.USER and t.content.strip()}


AUTHORED = "authored:"  # origin prefix of the hand-written pairs (and the rules applied to them)


def build_pairs(
    examples: Sequence[Example],
    *,
    seed: int = 13,
    twins: dict[str, tuple[str, str]] | None = None,
    authored: Sequence[AuthoredPair] = (),
    other_messages: int = 0,
    nearest: Mapping[str, Sequence[str]] | None = None,
    swapped_words: bool = False,
) -> list[SupportPair]:
    """Every training pair, in a fixed order (examples in file order, rules in a fixed order),
    then the hand-written ``authored`` pairs (their train side) and what three rules make of their
    restatements: the message's first first-person clause echoed (entailed; once per restatement,
    so a message with several restatements gives several echoes), the message turned into a
    question or remark to the other party, and said of someone else (both unsupported).

    ``nearest`` (claim id -> user turn texts, nearest first; :func:`nearest_turns`): an
    over-inferred claim is read against those turns instead of a random one of its conversation
    (the random draw is still made, so every other pair stays as it was).

    ``swapped_words``: each stated or inferred claim, and each hand-written restatement, with a
    word of a closed class its premise says swapped for another of the class (:func:`swap_word`)
    is added as contradicted, drawn from a generator of its own (every other pair stays as it
    was)."""
    twins = authored_twins() if twins is None else twins
    if any(e.claim.split not in (None, "train") for e in examples):
        raise ValueError("support pairs are built from the train split only")
    rng = random.Random(seed)
    swap_rng = random.Random(seed + 1)
    pairs: list[SupportPair] = []
    by_conv: dict[str, list[Example]] = {}
    for ex in examples:
        by_conv.setdefault(ex.conversation_id, []).append(ex)
    for ex in examples:
        turns = _turn_texts(ex)
        label = ex.claim.label
        forms = _forms(ex, twins)
        if label in (Label.GROUNDED, Label.INFERRED_REASONABLE):
            src = ex.claim.source_turn_id
            assert src is not None
            premise = turns[src]
            cls = SupportClass.ENTAILED if label is Label.GROUNDED else SupportClass.INFERABLE
            pairs += [SupportPair(premise, f, cls, label.value) for f in forms]
            flat = _flat(ex, twins)
            pairs += _perturbations(ex, premise, flat, label, by_conv, rng)
            swapped = swap_word(flat, premise, swap_rng) if swapped_words else None
            if swapped is not None:
                pairs.append(
                    SupportPair(premise, swapped, SupportClass.CONTRADICTED, "swapped_word")
                )
            others = [t for tid, t in turns.items() if tid != src]
            if others:
                pairs.append(
                    SupportPair(rng.choice(others), flat, SupportClass.UNSUPPORTED, "other_turn")
                )
        else:
            near = (nearest or {}).get(ex.claim.claim_id) or ()
            for i, f in enumerate(forms[:2]):
                premise = rng.choice(list(turns.values()))
                if near:
                    premise = near[i % len(near)]
                pairs.append(SupportPair(premise, f, SupportClass.UNSUPPORTED, label.value))
    for a in authored:
        pairs.append(SupportPair(a.premise, a.claim, a.support, AUTHORED + a.case))
        if a.support is SupportClass.ENTAILED:
            swapped = swap_word(a.claim, a.premise, swap_rng) if swapped_words else None
            if swapped is not None:
                pairs.append(
                    SupportPair(a.premise, swapped, SupportClass.CONTRADICTED,
                                AUTHORED + "swapped_word")
                )  # fmt: skip
            echoed = echo(a.premise, rng)
            if echoed is not None:
                pairs.append(
                    SupportPair(a.premise, echoed, SupportClass.ENTAILED, AUTHORED + "echo")
                )
            q = question_or_remark(a.premise, rng)
            pairs.append(SupportPair(q, a.claim, SupportClass.UNSUPPORTED, AUTHORED + "question"))
            other = someone_else(a.premise, rng)
            if other is not None:
                pairs.append(
                    SupportPair(other, a.claim, SupportClass.UNSUPPORTED, AUTHORED + "someone_else")
                )
    if other_messages:
        pairs += _other_messages(authored, other_messages, rng)
    return pairs


def nearest_turns(
    examples: Sequence[Example], embedder: Embedder, *, k: int = 2
) -> dict[str, list[str]]:
    """Over-inferred claim id -> the texts of the ``k`` user turns nearest to the claim, nearest
    first, as the guard picks the turns its cross-encoder reads: the cosine of the claim's vector
    with each evidence sentence of a turn (questions to and remarks about the other party left
    out), the best sentence standing for its turn. A fabricated or stereotyped claim is usually
    nearest to the turn it was spun from, which is the pair the model must learn to call
    unsupported; a random turn of the conversation is mostly unrelated, an easy negative."""
    wanted = [e for e in examples if e.claim.label.is_over_inference]
    out: dict[str, list[str]] = {}
    by_conv: dict[str, list[Example]] = {}
    for e in wanted:
        by_conv.setdefault(e.conversation_id, []).append(e)
    for group in by_conv.values():
        units = evidence_units(group[0].turns)
        if not units:
            continue
        full = _turn_texts(group[0])
        vecs = embedder.encode([u.text for u in units] + [e.claim.text for e in group])
        unit_vecs, claim_vecs = vecs[: len(units)], vecs[len(units) :]
        for e, cv in zip(group, claim_vecs, strict=True):
            best: dict[str, float] = {}
            for u, sim in zip(units, (unit_vecs @ cv).tolist(), strict=True):
                best[u.turn_id] = max(sim, best.get(u.turn_id, -1.0))
            ranked = sorted(best, key=lambda tid: (-best[tid], tid))[:k]
            out[e.claim.claim_id] = [full[tid] for tid in ranked if tid in full]
    return out


def _other_messages(
    authored: Sequence[AuthoredPair], n: int, rng: random.Random
) -> list[SupportPair]:
    """Each message with ``n`` claims said or implied by *other* messages that share none of its
    content words: unrelated facts about the user, which the message does not support."""
    said = [a for a in authored if a.support in (SupportClass.ENTAILED, SupportClass.INFERABLE)]
    out: list[SupportPair] = []
    for premise in dict.fromkeys(a.premise for a in authored):
        stems = content_stems(premise)
        others = [a.claim for a in said if a.premise != premise]
        rng.shuffle(others)
        picked = [c for c in others if not stems & content_stems(c)][:n]
        out += [
            SupportPair(premise, c, SupportClass.UNSUPPORTED, AUTHORED + "other_message")
            for c in picked
        ]
    return out


def _perturbations(
    ex: Example,
    premise: str,
    claim: str,
    label: Label,
    by_conv: dict[str, list[Example]],
    rng: random.Random,
) -> list[SupportPair]:
    out = [
        SupportPair(premise, glue_detail(claim, premise, rng), SupportClass.UNSUPPORTED, "glued"),
        SupportPair(question_or_remark(premise, rng), claim, SupportClass.UNSUPPORTED, "question"),
    ]
    neg = negate(claim)
    if neg:
        out.append(SupportPair(premise, neg, SupportClass.CONTRADICTED, "negated"))
        said_not = negate_first_person(premise)
        if said_not is not None and label is Label.GROUNDED:
            out += [
                SupportPair(said_not, neg, SupportClass.ENTAILED, "negated_both"),
                SupportPair(said_not, claim, SupportClass.CONTRADICTED, "negated_premise"),
            ]
    changed = change_detail(claim, premise, rng)
    if changed and changed != claim:
        out.append(SupportPair(premise, changed, SupportClass.CONTRADICTED, "changed_detail"))
    if changed and changed != claim:
        out += _corrected(premise, claim, changed)
    other = someone_else(premise, rng)
    if other is not None:
        out.append(SupportPair(other, claim, SupportClass.UNSUPPORTED, "someone_else"))
    if label is Label.GROUNDED:
        out.append(SupportPair(premise, as_trait(claim, rng), SupportClass.INFERABLE, "trait"))
        echoed = echo(premise, rng)
        if echoed is not None:
            out.append(SupportPair(premise, echoed, SupportClass.ENTAILED, "echo"))
    invented = [
        strip_hedges(e.claim.text_flat or e.claim.text)
        for e in by_conv[ex.conversation_id]
        if e.claim.label is Label.FABRICATED
    ]
    if invented:
        other = _lower_first(_strip_end(rng.choice(invented)))
        out.append(
            SupportPair(premise, f"{_strip_end(claim)}, and {other}.", SupportClass.UNSUPPORTED,
                        "compound")
        )  # fmt: skip
    return out


_ECHO_SUBJECT = re.compile(
    r"^(?:so |and |but |well |honestly |also |yeah |oh )*(I|i)\b(?:'m| am)?\s*"
)
_ECHO_VERB = {
    "am": "Is", "have": "Has", "do": "Does", "go": "Goes", "was": "Was", "had": "Had",
    "can": "Can", "will": "Will", "don't": "Doesn't", "didn't": "Didn't", "can't": "Can't",
    "never": "Has never", "haven't": "Hasn't", "used": "Used", "love": "Loves", "hate": "Hates",
}  # fmt: skip
_ECHO_PREFIX = ("", "User ", "The user ")


def echo(premise: str, rng: random.Random) -> str | None:
    """The premise's first clause that starts with "I", as a memory entry would store it ("I
    went climbing last weekend." -> "Went climbing last weekend"; "I'm a nurse" -> "Is a nurse";
    "I work nights" -> "Works nights"), or None when no clause fits the rule. A premise with a
    negation or a correction word gets none (its first clause may be what the rest takes back)."""
    if has_negation(premise) or _ECHO_SKIP_PREMISE.search(premise):
        return None
    for sent in sentences(premise):
        m = _ECHO_SUBJECT.match(sent.strip())
        if m is None:
            continue
        rest = _CLAUSE_END.split(sent.strip()[m.end() :], maxsplit=1)[0].rstrip(" .!")
        words = [_THIRD.get(w.lower(), w) for w in rest.split()]
        if len(words) < 2 or "?" in rest:
            continue
        first = words[0].lower()
        if m.group(0).rstrip().lower().endswith(("'m", " am")):
            verb = "Is"
        elif first in _ECHO_VERB:
            verb, words = _ECHO_VERB[first], words[1:]
        elif first.endswith("ed") or first in _PAST:
            verb, words = first.capitalize(), words[1:]
        elif first.isalpha() and first not in _ECHO_SKIP_VERB and not first.endswith(("s", "ly")):
            ending = "es" if first.endswith(("sh", "ch", "x", "o")) else "s"
            verb, words = first.capitalize() + ending, words[1:]
        else:
            continue
        prefix = rng.choice(_ECHO_PREFIX)
        text = " ".join([verb, *words])
        return (prefix + _lower_first(text)) if prefix else text
    return None


_ECHO_SKIP_PREMISE = re.compile(r"\b(wait|actually|sorry|i mean|correction|or rather)\b", re.I)
_ECHO_SKIP_VERB = frozenset(
    [
        "only", "just", "really", "also", "still", "even", "already", "think", "guess", "mean",
        "hope", "wish", "wonder", "know", "feel", "might", "may", "would", "could", "should",
        "must",
    ]
)  # fmt: skip
_CLAUSE_END = re.compile(r",| - | – |;| but | so | and | because ")
_THIRD = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs"}


_PAST = frozenset(
    [
        "went", "got", "had", "made", "took", "met", "left", "saw", "ran", "bought", "began",
        "drove", "ate", "found", "gave", "grew", "kept", "knew", "lost", "paid", "put", "quit",
        "read", "said", "sold", "spent", "taught", "thought", "told", "won", "wrote", "broke",
        "came", "did", "fell", "felt", "flew", "forgot", "heard", "hurt", "led", "let", "rode",
        "sat", "slept", "spoke", "stood", "swam", "threw", "woke", "wore",
    ]
)  # fmt: skip


_CORRECTIONS = ("Actually no, {p}", "Sorry, I got that wrong: {p}", "Correction: {p}")


def _corrected(premise: str, claim: str, changed: str) -> list[SupportPair]:
    """The evidence corrected by the user in the same turn: the value ``change_detail`` swapped
    in the claim, swapped in the evidence too and said after it. The old claim is contradicted
    by the later words; the changed claim is what the user now says."""
    old_words, new_words = claim.split(), changed.split()
    if len(old_words) != len(new_words):
        return []
    swaps = [(a, b) for a, b in zip(old_words, new_words, strict=True) if a != b]
    if len(swaps) != 1:
        return []
    old, new = (w.strip(".,!?") for w in swaps[0])
    if not old or re.search(rf"\b{re.escape(old)}\b", premise) is None:
        return []
    fixed = re.sub(rf"\b{re.escape(old)}\b", new, premise, count=1)
    frame = _CORRECTIONS[len(premise) % len(_CORRECTIONS)]
    text = f"{_strip_end(premise)}. {frame.format(p=_lower_first(fixed))}"
    return [
        SupportPair(text, claim, SupportClass.CONTRADICTED, "corrected_old"),
        SupportPair(text, changed, SupportClass.ENTAILED, "corrected_new"),
    ]


_SOMEONE = ("my sister", "my brother", "my wife", "my husband", "my best friend", "my boss")
_FIRST_PERSON_SUBJECT = (
    (re.compile(r"\bI'm\b|\bI am\b"), "{who} is"),
    (re.compile(r"\bI've\b|\bI have\b"), "{who} has"),
    (re.compile(r"\bI was\b"), "{who} was"),
)


def someone_else(premise: str, rng: random.Random) -> str | None:
    """The evidence said about another person ("I'm a nurse" -> "my sister is a nurse"), or
    None when the evidence has no first-person subject this rule can move."""
    for pattern, frame in _FIRST_PERSON_SUBJECT:
        if pattern.search(premise):
            who = rng.choice(_SOMEONE)
            out = pattern.sub(frame.format(who=who), premise, count=1)
            return out[:1].upper() + out[1:]
    return None


_FIRST_PERSON_VERB = re.compile(
    r"\b(I|we)(?:'m| am| are|'re)\b|\b(I|we) (?!(?:don't|do|didn't|did|never|can't|won't|"
    r"wasn't|was|were|have|had|'ve|'d|'ll|will|would|could|should|might|must|may|also|just|"
    r"really|still|always|usually|often|only|even|already|guess|think|mean)\b)([a-z]+)\b"
)


def negate_first_person(premise: str) -> str | None:
    """The user's first statement about themselves negated ("I eat pork" -> "I don't eat pork",
    "I'm a nurse" -> "I'm not a nurse"), or None when no rule fits."""
    m = _FIRST_PERSON_VERB.search(premise)
    if m is None or has_negation(premise):
        return None  # no rule fits, or already negated somewhere (a second "not" confuses)
    if m.group(1):  # I'm / I am / we're: add "not"
        return premise[: m.end()] + " not" + premise[m.end() :]
    verb = m.group(3)
    if verb.endswith("ed") or verb in ("went", "got", "had", "made", "took", "met", "left"):
        return None  # past tense: "didn't" needs the base form, which a rule cannot give
    return premise[: m.start(3)] + "don't " + premise[m.start(3) :]


# --------------------------------------------------------------------- subject forms, balanced
# The same memory entry is written "Plays volleyball", "User plays volleyball", "The user plays
# volleyball" or "You play volleyball". Rule-made echoes used to be the only pairs with a "User"
# subject, so the model read the subject as the label: "User plays volleyball" against "I play in
# a volleyball league" entailed (0.95), "Plays volleyball" contradicted (0.68). Every class gets
# the same mix of subjects instead.
SUBJECT_FORMS = ("", "User ", "The user ", "You ")
# third-person verbs that do not end in "s" as a rule would make them, and their "you" forms
_YOU_VERB = {
    "is": "are", "has": "have", "was": "were", "does": "do", "doesn't": "don't",
    "isn't": "aren't", "wasn't": "weren't", "hasn't": "haven't",
}  # fmt: skip
# auxiliaries that read the same after "you" (leading adverbs are skipped before the verb)
_SAME_AFTER_YOU = frozenset(
    ["can", "can't", "will", "won't", "would", "could", "should", "must", "had", "did", "didn't",
     "used"]
)  # fmt: skip
# adverbs a bare entry may start with before its verb ("Usually works nights"); not every word
# that ends in "-ly" ("Family lives in Porto", "Italy is home")
_LEADING_ADVERBS = frozenset(
    ["recently", "currently", "usually", "regularly", "habitually", "clearly", "definitely",
     "really", "rarely", "mostly", "mainly", "occasionally", "frequently", "normally",
     "generally", "typically", "actually", "only", "also", "still", "just", "already", "often",
     "always", "never", "sometimes", "now", "once"]
)  # fmt: skip
_I_VERB = re.compile(
    r"\bI\s+(?:(?:really|also|just|still|usually|often|always|never|sometimes)\s+)?([a-z]+)"
)


def first_person_verbs(texts: Sequence[str]) -> frozenset[str]:
    """The words that follow "I" in ``texts`` ("I play ...", "I finished ..."): what a memory
    entry's first word must come from to read as a verb ("Plays" from "play"; "Mondays",
    "Parents" or "Ahmed" are not)."""
    return frozenset(m.group(1) for t in texts for m in _I_VERB.finditer(t))


def _you_verb(word: str, verbs: frozenset[str]) -> str | None:
    """The "you" form of a third-person verb ("plays" -> "play", "is" -> "are"), the word itself
    when it needs none ("went", "can"), or None when it does not read as a verb."""
    low = word.lower()
    if low in _YOU_VERB:
        return _YOU_VERB[low]
    if low in _SAME_AFTER_YOU or low in verbs:  # a past form said after "I" ("I finished")
        return low
    if low.endswith("ies") and low[:-3] + "y" in verbs:
        return low[:-3] + "y"
    if low.endswith("es") and low[:-2] in verbs:
        return low[:-2]
    if low.endswith("s") and low[:-1] in verbs:
        return low[:-1]
    return None


def with_subject(claim: str, form: str, verbs: frozenset[str]) -> str | None:
    """A bare memory entry ("Plays volleyball on Sundays", "Probably works nights") with the
    subject ``form`` (one of SUBJECT_FORMS), or None when the entry has a subject of its own or
    its first word after any hedge or adverb does not read as a verb (see
    :func:`first_person_verbs`)."""
    words = claim.split()
    if not words or not words[0][:1].isupper():
        return None
    at = 0
    while at < min(2, len(words) - 1) and words[at].lower() in HEDGES | _LEADING_ADVERBS:
        at += 1
    you = _you_verb(words[at], verbs)
    if you is None:
        return None
    if form == "":
        return claim
    if form == "You ":
        rest = [_lower_first(w) if i == 0 else w for i, w in enumerate(words)]
        rest[at] = you
        return form + " ".join(rest)
    return form + _lower_first(claim)


def balance_subjects(pairs: Sequence[SupportPair], seed: int) -> list[SupportPair]:
    """Each pair whose claim is a bare memory entry gets a subject drawn from SUBJECT_FORMS by its
    own seeded draw; the class, premise and origin stay. A claim that already has a subject, or
    whose first word does not read as a verb, is kept as written."""
    verbs = first_person_verbs(list(dict.fromkeys(p.premise for p in pairs)))
    rng = random.Random(seed)
    out: list[SupportPair] = []
    for p in pairs:
        form = rng.choice(SUBJECT_FORMS)
        new = with_subject(p.claim, form, verbs)
        out.append(p if new is None else SupportPair(p.premise, new, p.label, p.origin))
    return out


# first names a memory entry may call the user by ("Anjali has run two half marathons"), from
# many languages; none of them is in the glued-detail names above, so a name in this place and a
# name glued onto a fact are learned apart
USER_NAMES = (
    "Anjali", "Tomasz", "Siobhan", "Kwame", "Mei", "Diego", "Fatima", "Lars", "Aroha", "Nandini",
    "Oluwaseun", "Marta", "Hiroshi", "Carmen", "Dmitri", "Leilani", "Yusuf", "Ingrid", "Thabo",
    "Rosa", "Niamh", "Arjun", "Beatriz", "Kofi", "Elif", "Mateus", "Hana", "Callum", "Zainab",
    "Pieter", "Ximena", "Bongani", "Astrid", "Rahul", "Valentina", "Jonah", "Soo-ah", "Tariq",
    "Greta", "Manuel",
)  # fmt: skip


_GENDERED = frozenset(["he", "him", "his", "himself", "she", "her", "hers", "herself"])
_NOT_OPENING_VERBS = frozenset(["like", "as", "given", "being", "unlike", "since"])


def name_subjects(pairs: Sequence[SupportPair], share: float, seed: int) -> list[SupportPair]:
    """A seeded ``share`` of the pairs whose claim is a bare memory entry get one of USER_NAMES
    as subject ("Works nights" -> "Kofi works nights"); the class, premise and origin stay. Memory
    entries call the user by name, and the premise is what the user said (or, for the negative
    rules, what someone else did or was asked), so the name is the user's: without such pairs the
    model reads "Anjali has run two half marathons" against Anjali's own "I've done two half
    marathons" as a contradiction. A name the premise says is never drawn (it would be someone
    the user talks about); a claim with a subject of its own, or whose first word does not read
    as a verb, is kept as written, and so is one that opens with a comparison ("Like most
    truckers, he ...") or speaks of the user as "he" or "she" (a name could be of either)."""
    verbs = first_person_verbs(list(dict.fromkeys(p.premise for p in pairs)))
    rng = random.Random(seed)
    out: list[SupportPair] = []
    for p in pairs:
        picked, name = rng.random() < share, rng.choice(USER_NAMES)
        new = None
        if (
            picked
            and name.lower() not in p.premise.lower()
            and p.claim.split(" ", 1)[0].lower() not in _NOT_OPENING_VERBS
            and not {w.lower() for w in _TOKEN.findall(p.claim)} & _GENDERED
        ):
            new = with_subject(p.claim, name + " ", verbs)
        out.append(p if new is None else SupportPair(p.premise, new, p.label, p.origin))
    return out
