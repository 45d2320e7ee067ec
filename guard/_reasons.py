"""Why a decision came out as it did: reason codes with parameters, words only when rendered.

A :class:`Reason` is a :class:`ReasonCode` plus parameters (numbers, ids, labels, lists of
words). The guard produces codes; logs, reports and HTTP answers render them with
:func:`render_reason` (a serialized ``Reason`` carries its rendered ``text`` next to the code).
Nothing parses the text back: dashboards and reports count codes.

Adding a code: one enum member, one template in ``_TEMPLATES`` and one description in
``_DESCRIPTIONS`` (a test checks every code has both). Parameters are JSON values: str, int,
float, bool, None, or a list of str (e.g. the unsupported words of a claim).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

ReasonParam = str | int | float | bool | None | list[str]


class ReasonCode(StrEnum):
    SCORED_WITH_PROFILE = "scored_with_profile"  # profile_id, profile_hash (content hash)
    UNCALIBRATED_WRITER = "uncalibrated_writer"  # writer_model
    SCORE_UNDECIDABLE = "score_undecidable"
    NO_USER_TURN = "no_user_turn"
    NO_CONTENT = "no_content"  # only stopwords, frame verbs, "user": a fact about no one
    OVER_INFERENCE_SCORE = "over_inference_score"  # p_oi, threshold
    STATED_SCORE = "stated_score"  # p_stated, threshold
    BELOW_STATED_FLOOR = "below_stated_floor"  # p_stated, floor: the policy's stated_min
    SAID_WHOLE = "said_whole"  # turn_id, p_entailed: every content word said, read as said
    PLACE_INFERRED = "place_inferred"  # turn_id, said, claimed: a country from a city in it
    HOME_UNSAID = "home_unsaid"  # turn_id, places: named, never as where the user lives
    SAID_NAMED = "said_named"  # turn_id, kind, name: "my brother Felix" says "named Felix"
    SAID_AGE = "said_age"  # turn_id, age: "I'm 29" says "Is 29 years old"
    LINKED_NOT_RESTATEMENT = "linked_not_restatement"  # turn_id
    UNSUPPORTED_SPECIFICS = "unsupported_specifics"
    SUPERSEDED = "superseded"  # turn_id: a later user turn corrected what this one said
    CONTRADICTED = "contradicted"  # turn_id: the user's turn says otherwise
    CHANGED_VALUE = "changed_value"  # turn_id, said, claimed: another number / day / month
    DENIED = "denied"  # turn_id, words: the linked turn denies what the claim asserts
    OTHER_PERSONS_FACT = "other_persons_fact"  # turn_id, person, words: said of someone else
    USERS_OWN_FACT = "users_own_fact"  # turn_id, person, words: the user's, given to someone
    RETRACTED = "retracted"  # turn_id, later_turn_id, words: a later turn denies or ends it
    GROUP_ATTRIBUTE = "group_attribute"  # kind: politics/religion/demographics from other evidence
    PERSONALITY_TRAIT = "personality_trait"  # turn_id, words: a trait no turn about it says
    UNSAID_PASTIME = "unsaid_pastime"  # turn_id, words: a habit whose activity no turn says
    GLUED_DETAIL = "glued_detail"  # turn_id, words: a phrase whose every content word is unsaid
    ASKED_ONLY = "asked_only"  # words: the user says them only in questions or remarks to others
    WISHED_ONLY = "wished_only"  # words: the user says them only while imagining or wishing
    REPORTED_ONLY = "reported_only"  # words: only someone else's opinion of the user, reported
    UNSUPPORTED_CONTENT = "unsupported_content"  # words: claim words no linked user turn says
    NOT_FULLY_SUPPORTED = "not_fully_supported"  # turn_id: related to the turn, not all said
    SELF_AUDIT_DOWNGRADE = "self_audit_downgrade"  # label
    SELF_AUDIT_FAILED = "self_audit_failed"  # error (exception type name)
    AUDIT_QUOTE_VERIFIED = "audit_quote_verified"  # turn_id: the audit's quote is the user's
    AUDIT_QUOTE_MISSING = "audit_quote_missing"  # label: a label that needs a quote has none
    AUDIT_QUOTE_INVALID = "audit_quote_invalid"  # label: the quote is in no turn (invented)
    AUDIT_QUOTE_ASSISTANT = "audit_quote_assistant"  # label: the quote is not a user's words
    AUDIT_QUOTES_UNTRUSTED = "audit_quotes_untrusted"  # trust: profile does not trust quotes
    VERBATIM_USER_MESSAGE = "verbatim_user_message"  # (infer=False) turn_id
    NOT_USER_WORDS = "not_user_words"  # (infer=False) role
    EDITED = "edited"  # memory_id, by: a client changed a memory's text; re-tagged
    ADOPTED = "adopted"  # status: a memory Mem0 stored before the guard, taken into a tenant
    UNSUPPORTED_LANGUAGE = "unsupported_language"  # language, covered: fail closed
    NOTE = "note"  # text: free text from a caller that has no code for it


_TEMPLATES: dict[ReasonCode, str] = {
    ReasonCode.SCORED_WITH_PROFILE: "scored with profile {profile_id}",
    ReasonCode.UNCALIBRATED_WRITER: (
        "no self-audit profile for model {writer_model!r} (the writer, or the independent "
        "auditor): evidence-only scoring (uncalibrated for this model)"
    ),
    ReasonCode.SCORE_UNDECIDABLE: "score undecidable: failing closed",
    ReasonCode.NO_USER_TURN: "no user turn to link: generated",
    ReasonCode.NO_CONTENT: "no word of the claim says anything about the user: not a fact",
    ReasonCode.OVER_INFERENCE_SCORE: "P(over-inference)={p_oi:.3f} >= {threshold:.3f}",
    ReasonCode.STATED_SCORE: "P(stated)={p_stated:.3f} >= {threshold:.3f}",
    ReasonCode.BELOW_STATED_FLOOR: (
        "P(stated)={p_stated:.3f} is below the policy's floor {floor:.3f}: not a stated fact"
    ),
    ReasonCode.SAID_WHOLE: (
        "every content word said in {turn_id}, which reads as saying it "
        "(P(entailed)={p_entailed:.3f})"
    ),
    ReasonCode.PLACE_INFERRED: (
        "{turn_id} names {said}, which is in {claimed}: the claim's place is inferred from it"
    ),
    ReasonCode.HOME_UNSAID: (
        "the user names {places} only as where something else is, never as where they live: "
        "where the user lives is inferred"
    ),
    ReasonCode.SAID_NAMED: "{turn_id} says the user's {kind} {name} as the claim does",
    ReasonCode.SAID_AGE: "{turn_id} is the user saying they are {age}, as the claim does",
    ReasonCode.LINKED_NOT_RESTATEMENT: "linked to {turn_id} but not a restatement",
    ReasonCode.UNSUPPORTED_SPECIFICS: "names or numbers the user never said: not a stated fact",
    ReasonCode.SUPERSEDED: "what {turn_id} said was corrected in a later user turn: stale",
    ReasonCode.CONTRADICTED: "{turn_id} says otherwise: generated",
    ReasonCode.CHANGED_VALUE: "{turn_id} says {said}, the claim says {claimed}: generated",
    ReasonCode.DENIED: "{turn_id} denies {words}, which the claim asserts: generated",
    ReasonCode.OTHER_PERSONS_FACT: (
        "{turn_id} says {words} of {person}, not of the user: another person's fact, generated"
    ),
    ReasonCode.USERS_OWN_FACT: (
        "{turn_id} says {words} of the user, not of {person}: the user's own fact, generated"
    ),
    ReasonCode.RETRACTED: (
        "{later_turn_id}, said after {turn_id}, denies or ends {words}, which the claim asserts: "
        "stale"
    ),
    ReasonCode.GROUP_ATTRIBUTE: (
        "a {kind} attribute that no user turn about {kind} says: a group prior, generated"
    ),
    ReasonCode.PERSONALITY_TRAIT: (
        "a personality trait {words} that {turn_id}, about something else, does not say: a "
        "stereotype, generated"
    ),
    ReasonCode.UNSAID_PASTIME: (
        "a taste or routine whose activity {words} neither {turn_id} nor the user turn nearest "
        "to it says: a stereotype, generated"
    ),
    ReasonCode.GLUED_DETAIL: (
        "{words} glued onto what {turn_id} says: no user turn says any of its words, generated"
    ),
    ReasonCode.ASKED_ONLY: (
        "{words} only in the user's questions or remarks to the other party, never said of "
        "themselves: generated"
    ),
    ReasonCode.WISHED_ONLY: (
        "{words} only in what the user imagines or wishes, stated as a fact or a plan: generated"
    ),
    ReasonCode.REPORTED_ONLY: (
        "{words} only in someone else's opinion of the user, reported, not agreed with: generated"
    ),
    ReasonCode.UNSUPPORTED_CONTENT: "words the user never said: {words}",
    ReasonCode.NOT_FULLY_SUPPORTED: "{turn_id} does not say all of it: not a stated fact",
    ReasonCode.SELF_AUDIT_DOWNGRADE: "writer's own audit says {label}: downgraded",
    ReasonCode.SELF_AUDIT_FAILED: "self-audit failed ({error}): failing closed",
    ReasonCode.AUDIT_QUOTE_VERIFIED: "the self-audit's quote is the user's words in {turn_id}",
    ReasonCode.AUDIT_QUOTE_MISSING: (
        "self-audit says {label} without quoting the user: counted against it, not a stated fact"
    ),
    ReasonCode.AUDIT_QUOTE_INVALID: (
        "self-audit says {label} quoting words no one said: counted against it, not a stated fact"
    ),
    ReasonCode.AUDIT_QUOTE_ASSISTANT: (
        "self-audit says {label} quoting a non-user turn: counted against it, not a stated fact"
    ),
    ReasonCode.AUDIT_QUOTES_UNTRUSTED: (
        "the profile does not trust this writer's quotes (trust {trust}): its self-audit may only "
        "make the decision more cautious"
    ),
    ReasonCode.VERBATIM_USER_MESSAGE: "stored verbatim (infer=False): the user's own message",
    ReasonCode.NOT_USER_WORDS: "{role} message (infer=False): not the user's words",
    ReasonCode.EDITED: (
        "memory {memory_id} edited by {by}: the new text was tagged against its conversation"
    ),
    ReasonCode.ADOPTED: (
        "stored by Mem0 before the guard, with no conversation left to check it against: "
        "adopted as {status}, never a stated fact"
    ),
    ReasonCode.UNSUPPORTED_LANGUAGE: (
        "written in {language!r}, which the evidence model does not read ({covered}): "
        "not a stated fact"
    ),
    ReasonCode.NOTE: "{text}",
}

# What a code means without its parameters (reports group by code; no ids, no numbers).
_DESCRIPTIONS: dict[ReasonCode, str] = {
    ReasonCode.SCORED_WITH_PROFILE: "scored with a calibration profile",
    ReasonCode.UNCALIBRATED_WRITER: "no self-audit profile for the writer model: uncalibrated",
    ReasonCode.SCORE_UNDECIDABLE: "score undecidable: failing closed",
    ReasonCode.NO_USER_TURN: "no user turn to link: generated",
    ReasonCode.NO_CONTENT: "no content word in the claim: not a fact",
    ReasonCode.OVER_INFERENCE_SCORE: "P(over-inference) at or above the profile's threshold",
    ReasonCode.STATED_SCORE: "P(stated) at or above the profile's threshold",
    ReasonCode.BELOW_STATED_FLOOR: (
        "P(stated) above the profile's threshold, below the policy's floor"
    ),
    ReasonCode.SAID_WHOLE: "every word of the claim said in a user turn that reads as saying it",
    ReasonCode.PLACE_INFERRED: "a country or US state concluded from a city the user named in it",
    ReasonCode.HOME_UNSAID: "where the user lives, from a place they named as something else's",
    ReasonCode.SAID_NAMED: "someone the user has and their name, said as 'my <kind> <name>'",
    ReasonCode.SAID_AGE: "the user's age, said by the user as 'I'm <age>'",
    ReasonCode.LINKED_NOT_RESTATEMENT: "linked to a user turn but not a restatement",
    ReasonCode.UNSUPPORTED_SPECIFICS: "names or numbers the user never said",
    ReasonCode.SUPERSEDED: "corrected by a later user turn: stale",
    ReasonCode.CONTRADICTED: "the user's own turn says otherwise",
    ReasonCode.CHANGED_VALUE: "the user's turn gives another number, day or month for it",
    ReasonCode.DENIED: "the user's turn denies what the claim asserts",
    ReasonCode.OTHER_PERSONS_FACT: "the user's turn says it of another person, not the user",
    ReasonCode.USERS_OWN_FACT: "the user's turn says it of the user, not of the claim's person",
    ReasonCode.RETRACTED: "a later user turn denies it or says it ended: stale",
    ReasonCode.GROUP_ATTRIBUTE: "politics, religion or demographics inferred from other evidence",
    ReasonCode.PERSONALITY_TRAIT: "a personality trait read from evidence about something else",
    ReasonCode.UNSAID_PASTIME: "a taste, pastime or routine whose activity the user never named",
    ReasonCode.GLUED_DETAIL: "a detail glued onto what the user said, none of its words said",
    ReasonCode.ASKED_ONLY: "a word the user only asked about or said of the other party",
    ReasonCode.WISHED_ONLY: "a wish or a what-if of the user's stated as a fact or a plan",
    ReasonCode.REPORTED_ONLY: "someone else's opinion of the user, reported, stated as a fact",
    ReasonCode.UNSUPPORTED_CONTENT: "the claim has words no linked user turn supports",
    ReasonCode.NOT_FULLY_SUPPORTED: "related to a user turn but not fully supported by it",
    ReasonCode.SELF_AUDIT_DOWNGRADE: "the writer's own audit says over-inference: downgraded",
    ReasonCode.SELF_AUDIT_FAILED: "self-audit failed: failing closed",
    ReasonCode.AUDIT_QUOTE_VERIFIED: "the self-audit's quote was found in a user turn",
    ReasonCode.AUDIT_QUOTE_MISSING: "a self-audit label that needs a quote came without one",
    ReasonCode.AUDIT_QUOTE_INVALID: "the self-audit quoted words that are in no turn",
    ReasonCode.AUDIT_QUOTE_ASSISTANT: "the self-audit quoted an assistant (non-user) turn",
    ReasonCode.AUDIT_QUOTES_UNTRUSTED: "the profile does not trust the writer's quotes",
    ReasonCode.VERBATIM_USER_MESSAGE: "stored verbatim (infer=False): the user's own message",
    ReasonCode.NOT_USER_WORDS: "a non-user message (infer=False): not the user's words",
    ReasonCode.EDITED: "an edit of a memory's text, tagged against the memory's conversation",
    ReasonCode.ADOPTED: "a memory stored before the guard, adopted unchecked (never stated)",
    ReasonCode.UNSUPPORTED_LANGUAGE: "a language the evidence model and profile do not cover",
    ReasonCode.NOTE: "free-text note",
}


class Reason(BaseModel):
    """One reason of a decision: a code and its parameters."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    code: ReasonCode
    params: dict[str, ReasonParam] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def text(self) -> str:
        """The reason in words (rendered, never parsed back)."""
        return render_reason(self)

    def as_stored(self) -> dict[str, Any]:
        """Code and parameters only: what a log keeps (the text is re-rendered on read)."""
        return {"code": self.code.value, "params": dict(self.params)}


def as_reasons(value: object) -> object:
    """Validator input for a list of reasons: words from a caller that has no code for them are
    kept verbatim as :attr:`ReasonCode.NOTE` (never parsed); anything else passes through."""
    if isinstance(value, list | tuple):
        return [
            Reason(code=ReasonCode.NOTE, params={"text": v}) if isinstance(v, str) else v
            for v in value
        ]
    return value


def reason(code: ReasonCode, **params: ReasonParam) -> Reason:
    return Reason(code=code, params=params)


def render_reason(r: Reason) -> str:
    """The reason in English; a template whose parameters are missing falls back to the code."""
    try:
        return _TEMPLATES[r.code].format(**r.params)
    except (KeyError, ValueError, TypeError, IndexError):
        details = ", ".join(f"{k}={v!r}" for k, v in sorted(r.params.items()))
        return f"{r.code.value}({details})"


def describe_reason_code(code: ReasonCode) -> str:
    """What a code means, without parameters (for reports that group decisions by code)."""
    return _DESCRIPTIONS[code]
