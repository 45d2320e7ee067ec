"""Claim-level support: does what the user said support *every part* of a claim?

Sentence similarity says a claim is *about* the same thing as a user turn; it cannot say that one
glued detail ("... in Lisbon", "... on Tuesdays"), a changed number, a negation or a question to
the other party breaks the support. Two signals, both offline:

- the support class, from the cross-encoder of :mod:`._cross` (method C): all six MiniLM layers
  read ``[CLS] turn [SEP] claim [SEP]`` and say entailed / inferable / unsupported /
  contradicted (:class:`SupportClass`) for the claim against each of its nearest turns; a later
  correcting turn that contradicts it makes it stale;
- method A, :class:`TokenAligner`: every content word of the claim aligned to the evidence's words
  (cosine of MiniLM's contextual token vectors, from the pass the linker already makes; numbers,
  days and months only by the same word, a negation by any negation). Gives the least-supported
  word, the share of unsupported content words and the list of unsupported words that every
  decision names.

(Method B, a cross-attention head over the frozen token vectors, was shipped before C; measured
against it on every labelled set, C won, see the support model's README.)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mirage_guard.guard.errors import SupportModelError
from mirage_guard.guard.evidence import _text as tx
from mirage_guard.guard.evidence._discourse import is_correction

FloatArray = npt.NDArray[np.float32]
WEIGHTS = "model.safetensors"
MANIFEST = "manifest.json"
# the support model moves a claim's link off the bi-encoder's nearest turn only to a turn it reads
# as supporting the claim (P(entailed) + P(inferable) at least this)
SWITCH_MIN_SUPPORT = 0.5


class SupportClass(IntEnum):
    """How a user turn supports a claim (the model's output classes, in order)."""

    ENTAILED = 0  # a restatement: every part of the claim is said
    INFERABLE = 1  # one common-sense step from what is said; related, not said
    UNSUPPORTED = 2  # not said and not a step from it (or a part of it is not)
    CONTRADICTED = 3  # the turn says otherwise (negation, another number/day/name)


@dataclass(frozen=True)
class TokenText:
    """One text as the encoder saw it: word pieces and one contextual vector per piece."""

    pieces: tuple[str, ...]  # without [CLS] / [SEP]
    vectors: npt.NDArray[Any]  # (n_pieces + 2, dim) fp16: [CLS] pieces... [SEP] as encoded


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_support_dir(path: Path) -> dict[str, Any]:
    """The manifest of a support-model folder, after checking the weights' sha256 against it."""
    manifest_path, weights = path / MANIFEST, path / WEIGHTS
    if not manifest_path.is_file() or not weights.is_file():
        raise SupportModelError(str(path), f"{MANIFEST} or {WEIGHTS} is missing")
    try:
        raw: Any = json.loads(manifest_path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SupportModelError(str(path), f"{MANIFEST} is not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise SupportModelError(str(path), f"{MANIFEST} is not a JSON object")
    manifest: dict[str, Any] = raw
    actual = file_sha256(weights)
    if actual != manifest.get("sha256"):
        raise SupportModelError(
            str(path),
            f"{WEIGHTS} has sha256 {actual[:12]}..., the manifest says "
            f"{str(manifest.get('sha256'))[:12]}...",
        )
    return manifest


# ---------------------------------------------------------------------- method A: token alignment
@dataclass(frozen=True)
class Alignment:
    """How well each content word of a claim is covered by the evidence."""

    min_support: float  # the least-supported content word's best match
    mean_support: float
    unsupported_share: float  # share of content words under the threshold
    unsupported_words: tuple[str, ...]
    # content words supported only by an evidence word another claim word says as it is ("dog"
    # by the "cat" the claim's "cat" says): what a list item added to the said one reads as
    doubled_words: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Words:
    words: tuple[str, ...]
    vectors: FloatArray  # (n_words, dim), L2-normalised


def words_of(tt: TokenText) -> _Words:
    """Word pieces merged into words ('##' continues a word); a word's vector is their mean."""
    words: list[str] = []
    groups: list[list[int]] = []
    for i, piece in enumerate(tt.pieces):
        if piece.startswith("##") and groups:
            words[-1] += piece[2:]
            groups[-1].append(i + 1)
        else:
            words.append(piece)
            groups.append([i + 1])
    if not groups:
        return _Words((), np.zeros((0, tt.vectors.shape[1]), np.float32))
    words, groups = _join_contractions(words, groups)
    m = np.stack([tt.vectors[g].astype(np.float32).mean(axis=0) for g in groups])
    m /= np.linalg.norm(m, axis=1, keepdims=True) + 1e-9
    return _Words(tuple(words), m.astype(np.float32))


def _join_contractions(
    words: list[str], groups: list[list[int]]
) -> tuple[list[str], list[list[int]]]:
    """ "don ' t" (the tokenizer's pieces of "don't") back into one word: it reads as a negation."""
    out_w: list[str] = []
    out_g: list[list[int]] = []
    i = 0
    while i < len(words):
        if (
            i + 2 < len(words) and words[i + 1] == "'" and words[i + 2] == "t"
            and words[i].endswith("n")
        ):  # fmt: skip
            out_w.append(f"{words[i]}'t")
            out_g.append(groups[i] + groups[i + 1] + groups[i + 2])
            i += 3
            continue
        out_w.append(words[i])
        out_g.append(groups[i])
        i += 1
    return out_w, out_g


_EXACT = frozenset(tx.DAYS + tx.MONTHS)


def exact_word(word: str) -> bool:
    """A number, day, month or negation: supported only by the same word."""
    return _needs_exact(word)


def _needs_exact(word: str) -> bool:
    w = word.lower()
    return w in tx.NEGATIONS or _day(w) in _EXACT or bool(tx.numbers(w))


def _day(word: str) -> str:
    """A day's plural as the day ("tuesdays" is "tuesday": "on Tuesdays" says "Tuesday"), any
    other word as it is."""
    return word[:-1] if word.endswith("s") and word[:-1] in tx.DAYS else word


def _joined(words: Sequence[str]) -> str:
    """Merged word pieces as text again, a number's thousands back in one ("4 , 000": "4,000")."""
    return _THOUSANDS.sub(r"\1,\2", " ".join(words))


_THOUSANDS = re.compile(r"(\d) ?, ?(\d{3})\b")


def _said_number(word: str, said: frozenset[str]) -> bool:
    """``word`` is a number the evidence says in any form ("four" by "4", "50" by "50th")."""
    values = tx.numbers(word)
    return bool(values) and values <= said


def _litotes(words: Sequence[str], i: int) -> bool:
    """The negation ``words[i]`` comes before a word it turns positive ("never misses")."""
    return i + 1 < len(words) and words[i + 1].lower() in tx.LITOTES


def _negated_about(
    words: Sequence[str],
    keep: Iterable[int],
    evidence: Sequence[Sequence[str]],
    near: Sequence[npt.NDArray[np.bool_]] | None = None,
) -> bool:
    """The claim's negation is said: an evidence sentence with a negation says one of the claim's
    other content words (its stem, or, with ``near``, a word the token aligner finds close to one:
    ``near[k][n]`` for sentence k and the claim's n-th kept word). A "not" anywhere in the turns is
    no denial of this claim ("Does not swim in the sea in winter" / "I swim in the sea whenever I
    can, even in winter. ... Honestly, not having to set an alarm.")."""
    kept = [(n, i) for n, i in enumerate(keep) if words[i].lower() not in tx.NEGATIONS]
    stems = {tx.stem(words[i]) for _, i in kept}
    for k, e in enumerate(evidence):
        if not {w.lower() for w in e} & tx.NEGATIONS:
            continue
        if stems & {tx.stem(w) for w in e}:
            return True
        if near is not None and any(near[k][n] for n, _ in kept):
            return True
    return False


def _is_content(word: str) -> bool:
    w = word.lower()
    if w in tx.NEGATIONS:
        return True
    return (
        len(w) > 1 and w not in tx.STOPWORDS and w not in tx.HEDGES and any(c.isalnum() for c in w)
    )


def _doubled(
    words: Sequence[str],
    keep: Sequence[int],
    nearest: npt.NDArray[Any],
    ev_words: Sequence[str],
    ev_stems: set[str],
) -> tuple[str, ...]:
    """The claim's content words (``words[keep]``) the evidence does not say whose nearest
    evidence word (``nearest``) is one another of the claim's words says as it is: "milk" in "Is
    allergic to eggs and milk" is nearest to the "eggs" of "allergic to eggs", which "eggs" says.
    The evidence said one thing; the claim lists two."""
    said = {tx.stem(words[i]) for i in keep if tx.stem(words[i]) in ev_stems}
    out = [
        words[i] for n, i in enumerate(keep)
        if tx.stem(words[i]) not in ev_stems and not _needs_exact(words[i])
        and tx.stem(ev_words[int(nearest[n])]) in said - {tx.stem(words[i])}
    ]  # fmt: skip
    return tuple(dict.fromkeys(out))


class TokenAligner:
    """Aligns claim words to evidence words with MiniLM's contextual token embeddings."""

    def __init__(self, *, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def align(self, claim: TokenText, evidence: Sequence[TokenText]) -> Alignment:
        cw = words_of(claim)
        keep = [i for i, w in enumerate(cw.words) if _is_content(w)]
        if not keep:
            return Alignment(1.0, 1.0, 0.0, ())
        ev = [words_of(e) for e in evidence]
        ev_words = [w for e in ev for w in e.words]
        if not ev_words:
            return Alignment(0.0, 0.0, 1.0, tuple(dict.fromkeys(cw.words[i] for i in keep)))
        sims = cw.vectors[keep] @ np.concatenate([e.vectors for e in ev]).T
        best = sims.max(axis=1)
        ev_lower = set(ev_words)
        ev_days = {_day(w) for w in ev_lower}
        ev_stems = {tx.stem(w) for w in ev_words}
        ev_negated = False
        if any(cw.words[i] in tx.NEGATIONS for i in keep):  # only a negated claim needs it
            bounds = np.cumsum([0, *(len(e.words) for e in ev)])
            near = [
                sims[:, a:b].max(axis=1) >= self.threshold if b > a else np.zeros(len(keep), bool)
                for a, b in itertools.pairwise(bounds)
            ]
            ev_negated = _negated_about(cw.words, keep, [e.words for e in ev], near)
        ev_numbers = tx.numbers(_joined(ev_words))
        # every number of the claim said: its pieces are too ("€4,000" is "€4", ",", "000")
        claim_numbers = tx.numbers(_joined(cw.words))
        all_said = bool(claim_numbers) and claim_numbers <= ev_numbers
        for n, i in enumerate(keep):
            w = cw.words[i]
            if w in tx.NEGATIONS and _litotes(cw.words, i):
                best[n] = 1.0  # "Never misses a class": the claim says the positive
            elif w in tx.NEGATIONS:  # polarity: "does not" is said by "I don't", "never", "no"
                best[n] = 1.0 if ev_negated else 0.0
            elif _needs_exact(w):
                said = _day(w) in ev_days or _said_number(w, ev_numbers)
                best[n] = 1.0 if said or (all_said and bool(tx.numbers(w))) else 0.0
            elif tx.stem(w) in ev_stems:
                best[n] = 1.0
        low = [cw.words[i] for n, i in enumerate(keep) if best[n] < self.threshold]
        return Alignment(
            min_support=float(best.min()),
            mean_support=float(best.mean()),
            unsupported_share=len(low) / len(keep),
            unsupported_words=tuple(dict.fromkeys(low)),
            doubled_words=_doubled(cw.words, keep, sims.argmax(axis=1), ev_words, ev_stems),
        )


class LexicalAligner:
    """Method A without an encoder (fakes, tests): a claim word is supported when it is said."""

    def align_text(self, claim: str, evidence: Sequence[str]) -> Alignment:
        words = [w for w in tx.words(claim) if _is_content(w)]
        if not words:
            return Alignment(1.0, 1.0, 0.0, ())
        said_words = frozenset().union(*(tx.word_set(e) for e in evidence)) if evidence else set()
        said_days = {_day(w) for w in said_words}
        said = {tx.stem(w) for w in said_words}
        negated = _negated_about(words, range(len(words)), [tx.words(e) for e in evidence])
        said_numbers = tx.numbers(" ".join(evidence))
        claim_numbers = tx.numbers(claim)
        all_said = bool(claim_numbers) and claim_numbers <= said_numbers
        ok = [
            True if w in tx.NEGATIONS and _litotes(words, n)
            else negated if w in tx.NEGATIONS
            else (_day(w) in said_days or _said_number(w, said_numbers) or all_said)
            if _needs_exact(w)
            else (tx.stem(w) in said or w in said_words)
            for n, w in enumerate(words)
        ]  # fmt: skip
        low = tuple(dict.fromkeys(w for w, k in zip(words, ok, strict=True) if not k))
        share = sum(not k for k in ok) / len(words)
        return Alignment(float(all(ok)), 1.0 - share, share, low)


SUPPORT_FEATURES: tuple[str, ...] = (
    "sup_entailed",
    "sup_inferable",
    "sup_unsupported",
    "sup_contradicted",
    "sup_contradicted_max",
    "sup_superseded",  # P(contradicted) of a LATER turn than the one that supports the claim
    "align_min",
    "align_mean",
    "align_unsupported_share",
    "support_model",  # 1.0 when the model and the token alignment ran (0.0: lexical fallback)
)


@dataclass(frozen=True)
class ClaimVerdict:
    """The support signal for one claim against the user's turns."""

    features: dict[str, float]
    turn_index: int | None  # the best-supporting turn among those scored (None: no signal)
    unsupported_words: tuple[str, ...]
    model_ran: bool = False  # the support model and token alignment gave these (not lexical)
    doubled_words: tuple[str, ...] = ()  # Alignment.doubled_words


class PairModel(Protocol):
    """A support model that reads the texts of (turn, claim) pairs (method C, the cross-encoder)."""

    @property
    def sha256(self) -> str: ...

    def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> FloatArray: ...


def _superseded_by_later(
    claim: str, row: npt.NDArray[Any], pick: int, probs: FloatArray, turn_texts: Sequence[str]
) -> float:
    """P(contradicted) of the most contradicting turn said AFTER the supporting one that reads as
    a correction (turn indices follow the conversation's order): "we live in Boston" ... "we
    moved to Denver" makes "Lives in Boston" stale; a contradiction said before it is what the
    user has since corrected. A correction that gives every number, day and month of the claim
    is the claim's own value, not a contradiction of it ("Is 41 years old" / "I'm 41 actually")."""
    own = tx.exact_values(claim)
    later = [
        j for j in range(len(row))
        if row[j] > row[pick] and is_correction(text := turn_texts[int(row[j])])
        and not (own and own <= tx.exact_values(text))
    ]  # fmt: skip
    if not later:
        return 0.0
    return float(max(probs[j, SupportClass.CONTRADICTED] for j in later))


# where a compound claim joins what it asserts: "Lives in Seattle and votes progressive",
# "Votes progressive since they live in Seattle", "Is a nurse, works nights"
_JOINS = re.compile(
    r"\s*(?:,\s*|;\s*|\s)(?:and|but|since|because|so|while|though|although|who|which|where)\s+"
    r"|\s*[,;]\s+",
    re.IGNORECASE,
)


# a piece that starts with one of these is a clause of its own ("..., is divorced")
_CLAUSE_STARTS = frozenset(
    ("is", "isn't", "was", "wasn't", "are", "has", "hasn't", "have", "had", "does", "doesn't",
     "did", "didn't", "can", "can't", "will", "won't", "would", "never", "also", "not")
)  # fmt: skip


# a piece that starts with one of these is a noun phrase, the object of the verb before it ("owns
# climbing shoes and a chalk bag"), however many content words it has
_PHRASE_STARTS = frozenset(
    ("a", "an", "the", "some", "two", "three", "several", "many", "his", "her", "their", "its")
)


def _clause(piece: str) -> bool:
    words = tx.words(piece)
    if words and words[0] in _PHRASE_STARTS:
        return False
    return len(tx.content_stems(piece)) >= 2 or bool(words and words[0] in _CLAUSE_STARTS)


def claim_parts(claim: str) -> list[str]:
    """What a compound claim asserts, part by part; a claim of one part is itself. A piece that
    cannot stand alone ("salt and pepper", "since 2015": fewer than two content words and no verb
    to start it) stays with the piece before it, so only parts that assert something are judged
    alone."""
    parts: list[str] = []
    start = 0
    for m in _JOINS.finditer(claim):
        piece = claim[start : m.start()]
        if tx.content_stems(piece) and _clause(piece) and _clause(claim[m.end() :]):
            parts.append(piece.strip())
            start = m.end()
    parts.append(claim[start:].strip())
    return [p for p in parts if p] or [claim]


class ClaimSupport:
    """Both signals for a batch of claims: C over the top-k turns, A for the words.

    Without token embeddings (an embedder that only gives sentence vectors, as in tests) the
    alignment is lexical and the support classes are uninformative (uniform).
    """

    def __init__(
        self,
        model: PairModel | None = None,
        aligner: TokenAligner | None = None,
        *,
        top_k: int = 2,
    ) -> None:
        self.model = model
        self.aligner = aligner
        self.top_k = top_k
        # (turn texts, claim parts) of one model call -> its reading, inside remembering()
        self._memo: dict[tuple[tuple[str, ...], tuple[str, ...]], FloatArray] | None = None

    @property
    def wants_tokens(self) -> bool:
        return self.model is not None or self.aligner is not None

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """Within the block, a model call with the same pairs in the same order as one made
        before gets that call's reading back instead of reading them again, so the result is
        the one the first call gave, to the bit (a reading depends a little on the batch it was
        read in). For one job that decides the same claims several times with only the policy
        changed (`mirage calibrate stated-floor`); the memory is dropped at the end."""
        self._memo = {}
        try:
            yield
        finally:
            self._memo = None

    def _read(self, premises: list[str], claims: list[str]) -> FloatArray:
        assert self.model is not None
        if self._memo is None:
            return self.model.predict_text(premises, claims)
        key = (tuple(premises), tuple(claims))
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = self.model.predict_text(premises, claims)
        return got

    def assess(
        self,
        claims: Sequence[str],
        turn_texts: Sequence[str],
        turn_scores: FloatArray,
        *,
        claim_tokens: Sequence[TokenText] | None = None,
        turn_tokens: Sequence[Sequence[TokenText]] | None = None,
    ) -> list[ClaimVerdict]:
        """``turn_scores`` (n_claims, n_turns): the bi-encoder's similarity, used to pick top-k."""
        if not turn_texts:
            return [self._nothing(c) for c in claims]
        k = min(self.top_k, len(turn_texts))
        tops = np.argsort(-turn_scores, axis=1, kind="stable")[:, :k]
        probs = None
        if self.model is not None:
            probs = self._weakest_parts(claims, turn_texts, tops)
        out: list[ClaimVerdict] = []
        for i, claim in enumerate(claims):
            row = tops[i]
            stale = 0.0
            if probs is None:
                pick, p = 0, np.full(len(SupportClass), 1.0 / len(SupportClass), np.float32)
                cmax = float(p[SupportClass.CONTRADICTED])
            else:
                support = probs[i, :, SupportClass.ENTAILED] + probs[i, :, SupportClass.INFERABLE]
                pick = int(np.argmax(support))
                if support[pick] < SWITCH_MIN_SUPPORT:
                    pick = 0  # no turn supports it: keep the bi-encoder's nearest turn
                else:
                    stale = _superseded_by_later(claim, row, pick, probs[i], turn_texts)
                p = probs[i, pick]
                cmax = float(probs[i, :, SupportClass.CONTRADICTED].max())
            # the words: against the turn the claim is linked to and the bi-encoder's nearest
            near = list(dict.fromkeys([int(row[pick]), int(row[0])]))
            if self.aligner is not None and claim_tokens is not None and turn_tokens is not None:
                evidence = [s for j in near for s in turn_tokens[j]]
                al = self.aligner.align(claim_tokens[i], evidence)
            else:
                al = LexicalAligner().align_text(claim, [turn_texts[j] for j in near])
            feats = {
                "sup_entailed": float(p[SupportClass.ENTAILED]),
                "sup_inferable": float(p[SupportClass.INFERABLE]),
                "sup_unsupported": float(p[SupportClass.UNSUPPORTED]),
                "sup_contradicted": float(p[SupportClass.CONTRADICTED]),
                "sup_contradicted_max": cmax,
                "sup_superseded": stale,
                "align_min": al.min_support,
                "align_mean": al.mean_support,
                "align_unsupported_share": al.unsupported_share,
            }
            ran = probs is not None and self.aligner is not None and claim_tokens is not None
            feats["support_model"] = float(ran)
            out.append(
                ClaimVerdict(feats, int(row[pick]), al.unsupported_words, ran, al.doubled_words)
            )
        return out

    def _weakest_parts(
        self, claims: Sequence[str], turn_texts: Sequence[str], tops: npt.NDArray[Any]
    ) -> FloatArray:
        """(n_claims, k, classes): each claim read against each of its top turns; a compound
        claim is as strong as its least-supported part, so it takes that part's reading."""
        assert self.model is not None
        parts = [claim_parts(c) for c in claims]
        k = tops.shape[1]
        flat = self._read(
            [turn_texts[j] for i, ps in enumerate(parts) for _ in ps for j in tops[i]],
            [p for ps in parts for p in ps for _ in range(k)],
        ).reshape(-1, k, len(SupportClass))
        out = np.zeros((len(claims), k, len(SupportClass)), np.float32)
        at = 0
        for i, ps in enumerate(parts):
            block = flat[at : at + len(ps)]
            at += len(ps)
            # how much of a part is said: entailed counts fully, one step from it half, so an
            # inferable part is weaker than a restated one and an unsupported part weaker still
            said = block[:, :, SupportClass.ENTAILED] + 0.5 * block[:, :, SupportClass.INFERABLE]
            out[i] = block[int(np.argmin(said.max(axis=1)))]
        return out

    def _nothing(self, claim: str) -> ClaimVerdict:
        al = LexicalAligner().align_text(claim, [])
        feats = dict.fromkeys(SUPPORT_FEATURES, 0.0)
        feats.update(sup_unsupported=1.0, align_unsupported_share=al.unsupported_share)
        return ClaimVerdict(feats, None, al.unsupported_words)
