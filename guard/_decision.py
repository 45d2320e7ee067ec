"""The decision rule: one candidate's evidence link, scores and profile -> a :class:`Decision`.

Pure: no I/O, no clock, no model; the :class:`~mirage_guard.guard.Guard` computes the inputs
(linker features, calibrated probabilities, the writer's self-audit) and calls :func:`decide`.
Fail closed: an undecidable score, a missing link or a failed self-audit never yields a fact.
"""

from __future__ import annotations

import math
import re

from mirage_guard.guard._domain import (
    Action,
    AuditVerdict,
    Candidate,
    Decision,
    EvidenceLink,
    Provenance,
    QuoteCheck,
)
from mirage_guard.guard._policy import Policy
from mirage_guard.guard._reasons import Reason, ReasonCode, reason
from mirage_guard.guard.evidence import (
    KINDS,
    PLACE_FRAME,
    RELATION_KINDS,
    OtherPersonsFact,
    acting_relatives,
    age_in_decade,
    changed_values,
    claim_predicates,
    claimed_role,
    content_stems,
    denied_role,
    exact_word,
    glued_items,
    glued_phrases,
    group_words,
    liked_not_owned,
    name_parts,
    other_persons_fact,
    others_denials,
    outcome_unsaid,
    place_inferred,
    plain,
    plan_given_as_done,
    relative_of_another,
    retracted_stems,
    round_trips,
    said_age,
    said_of_user,
    says_habit,
    says_nothing,
    stem,
    swapped_names,
    third_persons_fact,
    trait_words,
    unsaid_habits,
    unsaid_intent,
    unsaid_pastime,
    users_fact_given_to,
    value_kind,
    without_third_persons,
)
from mirage_guard.guard.scoring import CalibrationProfile


def adds_specifics(link: EvidenceLink) -> bool:
    """A stated fact may not assert a name or number that is in none of the user's turns."""
    f = link.features
    return f.get("unsupported_names", 0.0) > 0 or f.get("unsupported_numbers", 0.0) > 0


# more than this share of a claim's content words unaligned to the user's words, with the support
# head reading "inferable", makes the claim a conclusion rather than a restatement
CONCLUSION_UNALIGNED_SHARE = 0.5


def fully_supported(link: EvidenceLink) -> bool:
    """Every part of the claim is said: no unsupported content word, and (when the support model
    ran) its turn reads as a restatement rather than a conclusion, a contradiction or unrelated."""
    f = link.features
    if not f.get("support_model", 0.0):
        return True  # no claim-level signal (an embedder without token vectors): names/numbers only
    # measured on dev: every unaligned word (paraphrases too) or the support head's argmax
    # blocked nearly every restatement (stated recall 0.05); only words that must be said
    # verbatim block it: numbers, days, months, negations
    if any(exact_word(w) for w in link.unsupported_words):
        return False
    # a one-step conclusion: most of the claim's content words are not the user's AND the support
    # head reads the turn as making it inferable (both signals agree; either alone over-blocks)
    concluded = f.get("sup_inferable", 0.0) >= max(
        f.get("sup_entailed", 0.0), f.get("sup_unsupported", 0.0), f.get("sup_contradicted", 0.0)
    )
    return not (concluded and f.get("align_unsupported_share", 0.0) > CONCLUSION_UNALIGNED_SHARE)


# the support model's P(entailed) at which a claim whose every content word the user's words
# say is a restatement, whatever the profile's stated score
SAID_WHOLE_MIN = 0.5
# the words a memory writer frames what the user said with ("User works as a hairdresser" / "i'm
# a hairdresser", "Has a son named Reuben" / "my son Reuben") and the pieces of a contraction
# ("You're", "You've"): unsaid, and nothing the user did not say. Not "lives in": a place the
# user named in passing is not where they live ("Lives in Neukolln", measured: 2 rows away)
MEMORY_FRAME = frozenset(
    ("works", "work", "worked", "working", "as", "named", "called", "re", "ve", "ll")
)


# "Has a brother named Felix", "Married to Jo and has a 7-year-old son named Theo": a person or
# an animal the claim says the user has, and its name
_NAMED = re.compile(
    r"\b(?i:has|have)\s+(?i:a|an|one|two|three)\s+(?:[\w-]+\s+){0,3}?(?P<kind>[a-z]+)\s+"
    r"(?:named|called)\s+(?P<name>[A-Z][\w'-]+)",
)


def named_as_said(claim: str, evidence: str | None, link: EvidenceLink) -> tuple[str, str] | None:
    """(kind, name) when the claim says the user has someone or something of a name and the
    linked turn says it as "my <kind> <name>": "Has a brother named Felix" / "my brother Felix
    took me out for dinner last night", "Has a wife named Sam" / "My wife Sam is the baker in
    this house". The support model reads the first as making the claim inferable (0.97), not as
    saying it; the stated score reads it low. Every such relation of the claim must be said so,
    and its other words be said (but for ``MEMORY_FRAME``'s)."""
    if evidence is None or not link.features.get("support_model", 0.0):
        return None
    if not {w.lower() for w in link.unsupported_words} <= MEMORY_FRAME:
        return None
    found = [(m["kind"], m["name"]) for m in _NAMED.finditer(claim)]
    for kind, name in found:
        mine = rf"\b(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?{re.escape(kind)}s?,?\s+(?:is\s+)?"
        if not re.search(mine + rf"{re.escape(name)}\b", evidence, re.IGNORECASE):
            return None
    return found[0] if found else None


def _said(claim: str, evidence: str | None, link: EvidenceLink) -> Reason | None:
    """The reason a claim the stated score reads low is said all the same, or None: every word
    said in a turn the support model reads as saying it (``said_whole``), a relation and its
    name said as "my <kind> <name>" (``named_as_said``), or the user's own age said as "I'm
    <age>" (``said_age``)."""
    if said_whole(link):
        p_entailed = link.features.get("sup_entailed", 0.0)
        return reason(ReasonCode.SAID_WHOLE, turn_id=link.turn_id, p_entailed=p_entailed)
    named = named_as_said(claim, evidence, link)
    if named is not None:
        return reason(ReasonCode.SAID_NAMED, turn_id=link.turn_id, kind=named[0], name=named[1])
    # "Is 29 years old" / "I'm 29, take home about 2,400 a month": the support model reads the
    # user's own age as making the claim inferable; every other word of the claim said
    unsaid = {w.lower() for w in link.unsupported_words}
    age = said_age(claim, evidence) if evidence is not None and unsaid <= MEMORY_FRAME else None
    if age is not None:
        return reason(ReasonCode.SAID_AGE, turn_id=link.turn_id, age=age)
    return None


def said_whole(link: EvidenceLink) -> bool:
    """Every content word of the claim is in the user's words (the token aligner leaves none
    unsupported, or only the words a memory writer frames a fact with: ``MEMORY_FRAME``) and the
    support model reads the linked turn as saying it: "Is 23 years old" / "im 23 so insurance is
    gonna be mental anyway", "Has a daughter aged 11" / "... with my daughter, she's 11 and
    faster than me uphill", "User works as a hairdresser" / "i'm a hairdresser so i don't
    exactly have savings". The profile's stated score, fitted on sentences that say one thing,
    reads such a fact low inside a long chat turn; the two signals agreeing make it a
    restatement (measured on the held-out sets, 2026-12-05 night and morning)."""
    f = link.features
    if not f.get("support_model", 0.0) or f.get("sup_entailed", 0.0) < SAID_WHOLE_MIN:
        return False
    if f.get("align_unsupported_share", 1.0) == 0.0:
        return True
    unsaid = {w.lower() for w in link.unsupported_words}
    return bool(unsaid) and unsaid <= MEMORY_FRAME


# the support model's P(contradicted) at which a turn's contradiction decides (one turn said
# otherwise; a later turn corrected the one that supports the claim)
CONTRADICTED_MIN = 0.5


def stale(link: EvidenceLink) -> bool:
    """A later user turn corrects the one the claim rests on: the support model reads a later
    turn that reads as a correction as contradicting the claim.

    The linker's word rule (``superseded``: a later correction about the same kind of attribute
    that shares none of the claim's words) is a feature only, no longer a decision: in long
    conversations "now", "update" or "instead" about a job or a home come up often, and on the
    four held-out sets the decisions it made were right 0.20-0.50 of the time (``guard
    eval-suite``'s reason-code table, 2026-12-02); later corrections that end or deny the claim
    are read by :func:`denied_words` and the linker's ``retracted`` rule.

    Only for a claim its turn says (the support model reads it entailed more than inferable):
    a conclusion drawn from the turn is not what the later turn corrects ("Currently uses a
    Windows computer", "Does not need to find a new job in Leeds")."""
    f = link.features
    said = f.get("sup_entailed", 0.0) >= f.get("sup_inferable", 0.0)
    return said and f.get("sup_superseded", 0.0) >= CONTRADICTED_MIN


def contradicted(link: EvidenceLink) -> bool:
    """The linked turn says otherwise ("Does not drive" / "I drive to work"; "200 euros" / "120
    euros"): two signals agree. The support model reads a contradiction there more than support,
    and a word that must be said verbatim (a number, day, month, or a negation the user's words
    do not have) is not said. Measured on held-out sets, the model alone over-read negated
    claims as contradictions."""
    f = link.features
    if not f.get("support_model", 0.0):
        return False
    p = f.get("sup_contradicted", 0.0)
    supported = f.get("sup_entailed", 0.0) + f.get("sup_inferable", 0.0)
    unsaid = [w for w in link.unsupported_words if exact_word(w)]
    # "Spends 80 minutes a day on the bus" / "40 minutes each way": a sum, not another value
    trips = round_trips(link.span) if unsaid and link.span else frozenset()
    return p >= CONTRADICTED_MIN and p > supported and any(w not in trips for w in unsaid)


def changed_value(claim: str, evidence: str | None, link: EvidenceLink) -> tuple[str, str] | None:
    """(said, claimed) when the linked turn gives another value for what the claim states ("my
    parents live 2 hours away" / "Parents live 4 hours away"; "back to work on monday" /
    "Returns to work on Wednesday"; "we stay with my brother" / "Stayed with his sister"), the
    claimed value being said in no user turn (a number), not in the turns the claim was aligned
    to (a day or month) or not in the linked turn (a relative, a side of the body, a rank, an
    age in decades or a word of a closed class: ``RELATION_KINDS``). A rule on the words: the
    support model misses many of these."""
    if evidence is None:
        return None
    unsaid = {w.lower() for w in link.unsupported_words}
    acting: frozenset[str] | None = None
    for said, claimed in changed_values(claim, evidence):
        kind = value_kind(claimed)
        if kind == "kin":
            # another participant ("... and my brother takes the evenings"), not another value
            # of the relative the user does something with ("Visits her father every morning")
            acting = acting_relatives(claim, evidence) if acting is None else acting
            if said in acting:
                continue
        if kind == "number":
            if link.features.get("unsupported_numbers", 0.0) > 0:
                return said, claimed
        elif kind in RELATION_KINDS or claimed in unsaid or f"{claimed}s" in unsaid:
            return said, claimed
        elif claimed == "may":
            # the month May: the token aligner reads "may" as the modal, a stop word it never
            # calls unsaid ("Car loan ends in May" / "car loan 180/mo till march")
            return said, claimed
    return None


# a rank or a degree of skill: never a paraphrase of what the user said, always a detail (not
# "certified" or "licensed", which restate a job's title often enough: "a certified nurse")
GLUED_RANKS = frozenset(
    """
    senior junior chief principal experienced expert veteran seasoned accomplished skilled
    competitive competitively
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def glued_detail(claim: str, link: EvidenceLink) -> list[str]:
    """The phrases a claim the scores read as a restatement glues onto what the user said ("...
    with a bouncy castle", "... along the river", "... while fishing with his dad"): a phrase
    from "with", "while", "along" or "after" whose every content word the token aligner finds in
    no user turn (``glued_phrases``). Only for a claim that would be stated: an inference's
    conclusion is unsaid by nature. Measured on the four phrase words only; "at", "in", "for",
    "to" fired on as many restatements as fabrications on the dev split and BEGIN. And the items
    a claim's list adds ("a dog" in "Has a cat named Pierogi and a dog" after "just me and my
    cat, Pierogi"): unsaid, or read only off the said item (``glued_items``, ``doubled_words``).
    And a rank or a degree of skill no user turn says (``GLUED_RANKS``)."""
    if not link.features.get("support_model", 0.0):
        return []
    return (
        glued_phrases(claim, link.unsupported_words)
        + glued_parts(claim, link)
        + glued_items(claim, [*link.unsupported_words, *link.doubled_words])
        # a rank or a degree of skill no user turn says ("Works as a senior QA engineer" / "come
        # here 8 months ago for job as QA engineer")
        + [w for w in link.unsupported_words if w.lower() in GLUED_RANKS]
    )


def how_often(glued: list[str], claim: str, evidence: str | None) -> bool:
    """Every glued phrase says how often ("every day", "each morning") and the linked turn says
    a habit of what the claim is about in other words (``says_habit``: "a LOT", "not often"):
    the frequency is a conclusion from it, not a detail glued on."""
    often = all(g.split(maxsplit=1)[0].lower() in ("every", "each") for g in glued)
    return bool(glued) and often and evidence is not None and says_habit(claim, evidence)


def glued_names(link: EvidenceLink) -> list[str]:
    """The claim's names that no user turn says in any form (the linker's ``unsaid_names``,
    questions included). Not the token aligner's unsaid words: it pairs a place with another
    place ("Cork" with "Dublin")."""
    return list(link.unsaid_names)


def glued_parts(claim: str, link: EvidenceLink) -> list[str]:
    """The later predicates of a compound claim that assert something the user never talked
    about ("User lives in Lisbon and is a vegan" after "I live in Lisbon."): near no user
    sentence by meaning (the linker's ``unrelated_parts``) and every content word of its own
    (not the subject's) unsaid. A compound claim is as strong as its weakest part; the first
    predicate carries the claim's similarity, so the scores read it as a restatement."""
    if not link.unrelated_parts:
        return []
    unsaid = {stem(w.lower()) for w in link.unsupported_words}
    subject = content_stems(claim_predicates(claim)[0]) | {"user", "you"}
    return [
        part
        for part in link.unrelated_parts
        if (own := content_stems(part) - subject) and own <= unsaid
    ]


def inferred_place(
    claim: str, evidence: str | None, link: EvidenceLink, user_name: str | None = None
) -> tuple[str, str] | None:
    """(city, region) when the claim's one unsaid thing is a country or a US state the linked
    turn names a city in ("Is originally from Spain" / "I just moved to Glasgow from Valencia";
    ``place_inferred``): every other content word of the claim said (but for the words a claim
    of where someone lives or is from adds, ``PLACE_FRAME``), and the turn neither contradicts
    nor denies it. A claim that adds more than the place ("Likely watches Scotland rugby
    matches" / "somewhere special in Edinburgh") is left to the scores."""
    if evidence is None:
        return None
    place = place_inferred(claim, evidence)
    if place is None:
        return None
    allowed = content_stems(place[1]) | {stem(w) for w in PLACE_FRAME}
    unsaid = {stem(w.lower()) for w in link.unsupported_words}
    names = {stem(n.lower()) for n in link.unsaid_names}
    if not (unsaid | names) <= allowed:
        return None
    if contradicted(link) or denied_words(claim, evidence, user_name):
        return None
    return place


def denied_words(claim: str, evidence: str | None, user_name: str | None = None) -> list[str]:
    """Content words (stems) the claim asserts and the linked turn denies ("User has an MBA" /
    "I don't have an MBA lol"; "Your husband is helping" / "lol no husband"; "Is on a meal plan"
    / "no meal plan") or says have ended ("Works at a cafe" / "I finished at the cafe on
    Friday"), or the role the claim gives the user when the turn denies the people it comes
    from ("Is a grandmother" / "No grandchildren yet": ``denied_role``), the claim itself having
    no negation. A rule on the words: the cross-encoder reads many of these as restatements."""
    if evidence is None:
        return []
    denied = retracted_stems(claim, evidence)
    # a claim about someone else is denied only by the other clauses or a denial of the person
    theirs = others_denials(claim, evidence, user_name, denied) if denied else None
    if theirs is not None:
        denied = theirs
    elif denied:
        # "she's not going to work the first year" denies nothing of the user's "works ..."
        denied = retracted_stems(claim, without_third_persons(claim, evidence, user_name))
    if not denied and claimed_role(claim) is not None:
        # "Is a grandmother" / "No grandchildren yet, pray for us": the user's own clauses only
        # ("my sister has no kids" says nothing of the user's); parsed only for a role claim
        role = denied_role(claim, said_of_user(claim, evidence, user_name))
        return [role] if role is not None else []
    return sorted(denied)


# attributes of a group a person belongs to: inferred from evidence about something else (a job,
# a city, a hobby), they are a group prior, the taxonomy's stereotype
GROUP_KINDS = ("politics", "religion")
# the claim's kind distribution and its evidence's overlap at least this much when the evidence is
# about the same kind of attribute (the linker's kind_agreement)
SAME_KIND_MIN = 0.5


def group_attribute(claim: str, link: EvidenceLink) -> str | None:
    """The group kind a claim asserts without evidence about it ("Probably votes progressive"
    from "I'm a software engineer in Seattle"), or None. The claim must name a religion or a
    politics (``group_words``): the kind prototypes alone read "Is vegan" or "Roller derby
    practice is Tuesday" as religion. The support model must not read the turn as saying it."""
    f = link.features
    top = max(KINDS, key=lambda k: f.get(f"kind_{k}", 0.0))
    if top not in GROUP_KINDS or not group_words(claim) or not _about_else(link):
        return None
    return top


def personality_trait(claim: str, evidence: str | None, link: EvidenceLink) -> list[str]:
    """The personality traits a claim asserts ("Is organized and detail-oriented", "You're
    careful and risk-averse with money") that its linked turn, about another kind of attribute,
    does not say, or []: the taxonomy's stereotype, a trait read into a job, a purchase or a
    plan. A rule on a lexicon of trait words (``trait_words``), whatever the claim's top kind:
    the kind prototypes read "Drives cautiously" as much about possessions as about personality.
    The support model must not read the turn as saying it. A turn none of whose words the token
    aligner finds for the claim's says none of it, whatever the kind prototypes and the support
    model read ("Is strictly punctual and hates being late" / "I'm on the 7:34 again")."""
    traits = trait_words(claim)
    unaligned = link.features.get("align_unsupported_share", 0.0) >= 1.0
    if not traits or not (_about_else(link) or unaligned):
        return []
    if evidence is not None and {stem(t) for t in traits} & content_stems(evidence):
        return []  # the turn has the word, wherever it stands ("I'm a patient man")
    return traits


def made_up_pastime(claim: str, link: EvidenceLink) -> list[str]:
    """The activity of a taste, a pastime or a routine the claim gives the user that no user turn
    it was read against says (``unsaid_pastime``), or []: "Drinks a few beers after work most
    days", "Enjoys knitting in the evenings". Only when the token aligner ran (its unsupported
    words). Not barred by the support model reading the turn as saying it: with none of the
    activity's words in the turn that reading is the model's error ("Goes to indie gigs at the
    weekend" / "the studio is dog friendly!!": P(entailed) 0.93)."""
    if not link.features.get("support_model", 0.0):
        return []
    return unsaid_pastime(claim, link.unsupported_words)


def _about_else(link: EvidenceLink) -> bool:
    """The linked turn is about another kind of attribute than the claim, and the support model
    (when it ran) does not read it as saying the claim."""
    f = link.features
    if f.get("kind_agreement", 1.0) >= SAME_KIND_MIN:
        return False
    return not (f.get("support_model", 0.0) and f.get("sup_entailed", 0.0) >= CONTRADICTED_MIN)


def decide(
    candidate: Candidate,
    link: EvidenceLink,
    *,
    p_oi: float,
    p_stated: float,
    profile: CalibrationProfile,
    policy: Policy,
    verdict: AuditVerdict | None = None,
    audit_error: BaseException | None = None,
    calibrated: bool = True,
    writer_model: str | None = None,
    turn_text: str | None = None,
    user_name: str | None = None,
    people: frozenset[str] = frozenset(),
) -> Decision:
    """Provenance, action and reasons of one candidate.

    ``calibrated`` says whether ``profile`` was fitted for this writer model's self-audit (an
    evidence-only profile is calibrated when no self-audit is wanted); ``audit_error`` is the
    self-audit's failure, if it failed. ``turn_text``: the whole linked user turn, which the
    rules on the words read (``link.span`` is often one sentence of it); without it, the span.
    ``user_name``: the user's own name, when the caller knows it (``other_persons_fact``);
    ``people``: the names the conversation's user turns give others (``known_people``).
    """
    reasons: list[Reason] = [
        reason(
            ReasonCode.SCORED_WITH_PROFILE,
            profile_id=profile.profile_id,
            profile_hash=profile.content_hash,  # which version of the profile: reloads change it
        )
    ]
    if not calibrated:
        reasons.append(reason(ReasonCode.UNCALIBRATED_WRITER, writer_model=writer_model))
    evidence = turn_text or link.span
    evidence = plain(evidence) if evidence is not None else None  # the words the rules read
    who = (plain(user_name) if user_name else user_name, people)
    provenance = _provenance(
        plain(candidate.text),
        evidence,
        link,
        p_oi,
        p_stated,
        profile,
        reasons,
        who,
        policy.stated_threshold(profile.stated_threshold),
    )
    if link.unsupported_words:
        reasons.append(reason(ReasonCode.UNSUPPORTED_CONTENT, words=list(link.unsupported_words)))
    if verdict is not None and not calibrated and verdict.label.is_over_inference:
        # an uncalibrated self-report may only make a decision more cautious
        if provenance is not Provenance.GENERATED:
            reasons.append(reason(ReasonCode.SELF_AUDIT_DOWNGRADE, label=verdict.label.value))
        provenance = Provenance.GENERATED
    if verdict is not None and verdict.quote_check is not None:
        provenance = _quote_rule(verdict, provenance, profile, reasons)
    action = policy.action_for(provenance)
    if audit_error is not None:
        reasons.append(reason(ReasonCode.SELF_AUDIT_FAILED, error=type(audit_error).__name__))
        if provenance is Provenance.STATED:
            provenance = Provenance.INFERRED
        action = Action.QUARANTINE if action is not Action.BLOCK else action
        calibrated = False
    return Decision(
        candidate=candidate,
        provenance=provenance,
        action=action,
        source_turn_id=link.turn_id if provenance is not Provenance.GENERATED else None,
        similarity=round(link.similarity, 4),
        evidence_span=link.span,
        score=p_oi if math.isfinite(p_oi) else None,
        threshold=profile.oi_threshold,
        profile_id=profile.profile_id,
        calibrated=calibrated,
        audit=verdict,
        reasons=reasons,
    )


_BAD_QUOTE = {
    QuoteCheck.MISSING: ReasonCode.AUDIT_QUOTE_MISSING,
    QuoteCheck.INVENTED: ReasonCode.AUDIT_QUOTE_INVALID,
    QuoteCheck.ASSISTANT: ReasonCode.AUDIT_QUOTE_ASSISTANT,
}


def _quote_rule(
    verdict: AuditVerdict,
    provenance: Provenance,
    profile: CalibrationProfile,
    reasons: list[Reason],
) -> Provenance:
    """A self-audit label whose quote is missing, invented or not the user's counts against the
    claim, never for it: never a stated fact. (The scores are already no better than the
    evidence alone gives: the pipeline takes the more cautious of the two.)"""
    if verdict.quote_bad and verdict.quote_check is not None:
        reasons.append(reason(_BAD_QUOTE[verdict.quote_check], label=verdict.label.value))
        return Provenance.INFERRED if provenance is Provenance.STATED else provenance
    if verdict.quote_check is QuoteCheck.VALID:
        reasons.append(reason(ReasonCode.AUDIT_QUOTE_VERIFIED, turn_id=verdict.source_turn_id))
        if profile.mode.uses_audit and not profile.trusts_quotes:
            trust = profile.quote_trust
            shown = f"{trust.trust:.2f}" if trust is not None else "not measured"
            reasons.append(reason(ReasonCode.AUDIT_QUOTES_UNTRUSTED, trust=shown))
    return provenance


def _whose(code: ReasonCode, link: EvidenceLink, found: OtherPersonsFact) -> Reason:
    """The reason a claim is someone else's fact (``other_persons_fact``, ``third_persons_fact``)
    or the user's given to someone (``users_fact_given_to``): the person and the words."""
    person = found.person or "another person"
    return reason(code, turn_id=link.turn_id, person=person, words=list(found.words))


def _said_otherwise(
    claim: str,
    evidence: str | None,
    link: EvidenceLink,
    user_name: str | None = None,
    people: frozenset[str] = frozenset(),
) -> Reason | None:
    """The word rule that makes a claim the scores let through generated, as its reason, or
    None: the linked turn contradicts, denies or changes it, says it of another person, or the
    claim is a group prior or a personality trait the turn does not say."""
    if contradicted(link):
        return reason(ReasonCode.CONTRADICTED, turn_id=link.turn_id)
    denied = denied_words(claim, evidence, user_name)
    if denied:
        return reason(ReasonCode.DENIED, turn_id=link.turn_id, words=denied)
    # "Arjun gets anxious" from "Arjun's fine but Meera gets anxious": Meera's fact, given to
    # Arjun
    third = third_persons_fact(claim, evidence, user_name, people) if evidence else None
    if third is not None:
        return _whose(ReasonCode.OTHER_PERSONS_FACT, link, third)
    # "Wife Ngozi is a nurse" from "My wife Ngozi is a teacher. I work as a nurse.": the user's
    # own fact, given to the wife (read before another value: the turn says whose the value is)
    theirs = users_fact_given_to(claim, evidence, user_name, people) if evidence else None
    if theirs is not None:
        return _whose(ReasonCode.USERS_OWN_FACT, link, theirs)
    changed = changed_value(claim, evidence, link)
    if changed is not None:
        said, claimed = changed
        return reason(ReasonCode.CHANGED_VALUE, turn_id=link.turn_id, said=said, claimed=claimed)
    tried = (
        # "Got the team leader job" from "i've applied for the team leader role though"
        outcome_unsaid(claim, evidence)
        # "Studied nursing before" from "saving up to go back to uni next year to study nursing"
        or plan_given_as_done(claim, evidence)
        # "Has a cat" from "I'm more of a cat person honestly", "Piotr wants to get a cat"
        or liked_not_owned(claim, evidence)
        # "Has a cousin in Toronto" from "his cousin is in toronto": the husband's cousin
        or relative_of_another(claim, evidence)
        if evidence is not None
        else None
    )
    if tried is not None:
        return reason(
            ReasonCode.CHANGED_VALUE, turn_id=link.turn_id, said=tried[0], claimed=tried[1]
        )
    # "User is vegan" from "my girlfriend does her own thing, she's vegan": not the user's fact
    other = other_persons_fact(claim, evidence, user_name, people) if evidence is not None else None
    if other is not None:
        return _whose(ReasonCode.OTHER_PERSONS_FACT, link, other)
    if link.asked_words:
        # "You plan to get around Leeds by tram" from "Is it true Leeds has no tram?"
        return reason(ReasonCode.ASKED_ONLY, words=list(link.asked_words))
    if link.wished_words:
        # "Plans to buy the house on the corner" from "if I ever won the lottery I'd buy the house
        # on the corner": a what-if, not a fact or a plan
        return reason(ReasonCode.WISHED_ONLY, words=list(link.wished_words))
    if link.reported_words:
        # "Is a terrible cook" from "my wife says I'm a terrible cook": her opinion, not a fact
        return reason(ReasonCode.REPORTED_ONLY, words=list(link.reported_words))
    group = group_attribute(claim, link)
    if group is not None:
        return reason(ReasonCode.GROUP_ATTRIBUTE, kind=group)
    traits = personality_trait(claim, evidence, link)
    if traits:
        return reason(ReasonCode.PERSONALITY_TRAIT, turn_id=link.turn_id, words=traits)
    pastime = made_up_pastime(claim, link)
    if pastime:
        # "Enjoys fishing on his days off" from "i drive a forklift at the depot"
        return reason(ReasonCode.UNSAID_PASTIME, turn_id=link.turn_id, words=pastime)
    return None


def _left_behind(claim: str, link: EvidenceLink) -> Reason | None:
    """The reason a claim the user said is no longer a fact, or None: a later turn corrected
    it, the linked sentence gives another value said only before it, or a later turn takes it
    back."""
    if stale(link):
        # the user said it, then corrected it ("actually we moved to Denver"): not a fact now
        return reason(ReasonCode.SUPERSEDED, turn_id=link.turn_id)
    if link.retracted_by is not None and link.retracted_by == link.turn_id and link.span:
        # the linked sentence gives another value than the claim's, said only before it ("Has a
        # job interview on Thursday" / "interview moved to Friday now"): a value left behind
        said, claimed = next(
            (p for p in changed_values(claim, plain(link.span)) if p[1] in link.retracted_words),
            ("another value", ", ".join(link.retracted_words)),
        )
        return reason(ReasonCode.CHANGED_VALUE, turn_id=link.turn_id, said=said, claimed=claimed)
    if link.retracted_by is not None:
        # "I work early shifts at a bakery" ... "I quit the bakery last month": not a fact now
        return reason(
            ReasonCode.RETRACTED,
            turn_id=link.turn_id,
            later_turn_id=link.retracted_by,
            words=list(link.retracted_words),
        )
    return None


def _provenance(
    claim: str,
    evidence: str | None,
    link: EvidenceLink,
    p_oi: float,
    p_stated: float,
    profile: CalibrationProfile,
    reasons: list[Reason],
    who: tuple[str | None, frozenset[str]],
    needed: float,
) -> Provenance:
    """Provenance from the scores alone (before the self-audit and the policy); adds reasons.
    ``who``: the user's name and the names the conversation gives others; ``needed``: the
    P(stated) a claim needs to be stated on its score (the policy's floor when it is above the
    profile's threshold)."""
    if not math.isfinite(p_oi) or not math.isfinite(p_stated):
        reasons.append(reason(ReasonCode.SCORE_UNDECIDABLE))
        return Provenance.GENERATED
    if says_nothing(claim):
        reasons.append(reason(ReasonCode.NO_CONTENT))
        return Provenance.GENERATED
    if link.turn_id is None:
        reasons.append(reason(ReasonCode.NO_USER_TURN))
        return Provenance.GENERATED
    left = _left_behind(claim, link)
    if left is not None:
        reasons.append(left)
        return Provenance.GENERATED
    place = inferred_place(claim, evidence, link, who[0])
    if place is not None:
        # "Is originally from Portugal" / "My parents are in Porto": a conclusion, whatever the
        # scores read (a restatement, or an unsaid name)
        said, claimed = place
        reasons.append(
            reason(ReasonCode.PLACE_INFERRED, turn_id=link.turn_id, said=said, claimed=claimed)
        )
        return Provenance.INFERRED
    if p_oi >= profile.oi_threshold:
        reasons.append(
            reason(ReasonCode.OVER_INFERENCE_SCORE, p_oi=p_oi, threshold=profile.oi_threshold)
        )
        return Provenance.GENERATED
    # what the score missed: the user's turn says otherwise, another person's fact, a prior
    missed = _said_otherwise(claim, evidence, link, *who)
    if missed is not None:
        reasons.append(missed)
        return Provenance.GENERATED
    specifics = adds_specifics(link)
    # "Is in their thirties" from "I'm 34": true, and a conclusion the user did not state; so is
    # a habit from an occasion ("Watches anime regularly" / "I watched anime until 4am")
    supported = (
        fully_supported(link)
        and not (evidence and age_in_decade(claim, evidence))
        and not (
            link.features.get("support_model")
            and (
                unsaid_habits(claim, link.unsupported_words, evidence)
                # "Plans to plant sunflowers" / "the north fence gets full sun": a plan unsaid
                or unsaid_intent(claim, link.unsupported_words, evidence)
            )
        )
    )
    scored = p_stated >= profile.stated_threshold
    said_so = None if scored else _said(claim, evidence, link)
    read_as_said = scored or said_so is not None
    restatement = read_as_said and supported
    user = name_parts(who[0])
    if restatement and evidence and (swapped := swapped_names(claim, evidence, user)):
        # read as a restatement but for a name: the sentence that says the rest gives another
        # ("Grew up in social housing in Bristol" / "I grew up in social housing in Swindon")
        said, claimed = swapped[0]
        reasons.append(
            reason(ReasonCode.CHANGED_VALUE, turn_id=link.turn_id, said=said, claimed=claimed)
        )
        return Provenance.GENERATED
    if restatement and (names := glued_names(link)):
        # read as a restatement but for a name no user turn says: glued on ("Works night shifts
        # at the hospital in Leeds" / "I work night shifts at the hospital")
        reasons.append(reason(ReasonCode.GLUED_DETAIL, turn_id=link.turn_id, words=names))
        return Provenance.GENERATED
    floor: tuple[float, float] | None = None
    if read_as_said and not specifics and supported:
        glued = glued_detail(claim, link)
        if glued and not how_often(glued, claim, evidence):
            reasons.append(reason(ReasonCode.GLUED_DETAIL, turn_id=link.turn_id, words=glued))
            return Provenance.GENERATED
        if not glued and link.home_unsaid:
            # "Lives in Cardiff" from "I'm a pharmacist at Boots in Cardiff": where the user lives
            # is concluded from where something else is
            reasons.append(
                reason(ReasonCode.HOME_UNSAID, turn_id=link.turn_id, places=link.home_unsaid)
            )
            return Provenance.INFERRED
        if not glued:
            # the one place the policy's floor acts: a claim that would be stated on its score
            stated = _stated(claim, evidence, link, p_stated, needed, said_so)
            if isinstance(stated, Reason):
                reasons.append(stated)
                return Provenance.STATED
            floor = stated
        else:
            # "Drinks diet soda every day" / "I drink a LOT of diet soda": how often, concluded
            # from a habit the turn says in other words; not said, not made up
            supported = False
    reasons.extend(_not_stated(link, specifics=specifics, supported=supported, floor=floor))
    return Provenance.INFERRED


def _stated(
    claim: str,
    evidence: str | None,
    link: EvidenceLink,
    p_stated: float,
    needed: float,
    said_so: Reason | None,
) -> Reason | tuple[float, float]:
    """Why a claim read as a restatement is stated (its reason), or (P(stated), the floor) when
    the policy's floor (``needed``, the P(stated) a stated fact needs) holds it back: only a
    claim stated on its score alone, never one the words read as said (``said_so``, or said
    word for word, looked for here when the score passed the profile but not the floor)."""
    if said_so is not None:
        return said_so
    if p_stated < needed:
        return _said(claim, evidence, link) or (p_stated, needed)
    return reason(ReasonCode.STATED_SCORE, p_stated=p_stated, threshold=needed)


def _not_stated(
    link: EvidenceLink, *, specifics: bool, supported: bool, floor: tuple[float, float] | None
) -> list[Reason]:
    """Why a linked claim is an inference: not a restatement, and what it adds. ``floor``:
    (P(stated), the policy's floor) when the profile's score alone would have said stated."""
    out = [reason(ReasonCode.LINKED_NOT_RESTATEMENT, turn_id=link.turn_id)]
    if floor is not None:
        out.append(reason(ReasonCode.BELOW_STATED_FLOOR, p_stated=floor[0], floor=floor[1]))
    if specifics:
        out.append(reason(ReasonCode.UNSUPPORTED_SPECIFICS))
    if not supported:
        # a claim that is not fully supported may not be stored as a stated fact
        out.append(reason(ReasonCode.NOT_FULLY_SUPPORTED, turn_id=link.turn_id))
    return out
