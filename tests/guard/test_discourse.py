"""Questions to and remarks about the other party are not evidence about the user."""

from __future__ import annotations

import pytest

from mirage_guard.guard import Role, Turn
from mirage_guard.guard.evidence._discourse import SentenceUse, sentence_use
from mirage_guard.guard.evidence._linker import evidence_units


@pytest.mark.parametrize(
    ("sentence", "use"),
    [
        ("How long have you been married?", SentenceUse.QUESTION_TO_OTHER),
        ("You play any instruments?", SentenceUse.QUESTION_TO_OTHER),
        ("Is it safe to take ibuprofen with coffee?", SentenceUse.QUESTION_TO_OTHER),
        # typed as chat, without "?": an auxiliary and its subject open it, after a filler
        (
            "also is the museum pass worth it or is that a tourist trap",
            SentenceUse.QUESTION_TO_OTHER,
        ),
        ("btw does it get cold there in march", SentenceUse.QUESTION_TO_OTHER),
        ("was it worth the drive", SentenceUse.QUESTION_TO_OTHER),
        # ... or a question word and its verb
        ("how's the diabetes stuff going", SentenceUse.QUESTION_TO_OTHER),
        ("so when are they back from Spain", SentenceUse.QUESTION_TO_OTHER),
        ("how come he left early", SentenceUse.QUESTION_TO_OTHER),
        ("whats the plan for saturday", SentenceUse.QUESTION_TO_OTHER),
        ("Who knew sourdough was this hard.", SentenceUse.EVIDENCE),
        ("when the kids are asleep we watch films", SentenceUse.EVIDENCE),
        # ... but a chat's own news with its subject dropped is not one
        ("Was a great trip, the kids loved it.", SentenceUse.EVIDENCE),
        ("Was the best weekend in ages", SentenceUse.EVIDENCE),
        ("did the sums again, still short", SentenceUse.EVIDENCE),
        ("will do", SentenceUse.EVIDENCE),
        ("That charity race sounds great, Mel!", SentenceUse.REMARK_ABOUT_OTHER),
        ("Mel, that looks amazing.", SentenceUse.REMARK_ABOUT_OTHER),
        ("That looks amazing, Zoë!", SentenceUse.REMARK_ABOUT_OTHER),  # a name of any alphabet
        ("Ciarán, that looks amazing.", SentenceUse.REMARK_ABOUT_OTHER),
        ("Mel, congrats on the new job!", SentenceUse.REMARK_ABOUT_OTHER),
        ("Congrats on the new job!", SentenceUse.REMARK_ABOUT_OTHER),
        ("Hope your knee is better.", SentenceUse.REMARK_ABOUT_OTHER),
        ("You must be exhausted after that shift.", SentenceUse.REMARK_ABOUT_OTHER),
        # the speaker's own facts stay evidence, negated ones included (scored elsewhere)
        ("I haven't done pottery yet.", SentenceUse.EVIDENCE),
        ("Went climbing last weekend.", SentenceUse.EVIDENCE),
        ("Can you help me plan my wedding?", SentenceUse.EVIDENCE),
        ("Should I quit my job at the bakery?", SentenceUse.EVIDENCE),
        ("My sister is a nurse.", SentenceUse.EVIDENCE),
        ("Finally finished the marathon.", SentenceUse.EVIDENCE),
        # a word set off at the start is read past: an answer, a name opening one's own news
        ("Leeds, so about an hour away.", SentenceUse.EVIDENCE),
        ("Yes, still driving the night bus.", SentenceUse.EVIDENCE),
        ("Biscuit, 4, a very fat tabby.", SentenceUse.EVIDENCE),
        ("Tom, first tomatoes of the year!", SentenceUse.EVIDENCE),
        # an acronym by a comma is no one addressed by name
        ("New York, UBE.", SentenceUse.EVIDENCE),
        ("BP, sugar, the usual tests.", SentenceUse.EVIDENCE),
    ],
)
def test_sentence_use(sentence: str, use: SentenceUse) -> None:
    assert sentence_use(sentence) is use


def test_evidence_units_keep_only_the_users_own_sentences_in_order() -> None:
    turns = [
        Turn(id="t1", role=Role.USER, content="How long have you been married? I got engaged!"),
        Turn(id="t2", role=Role.ASSISTANT, content="Five years. I play the clarinet."),
        Turn(id="t3", role=Role.USER, content="You play any instruments?"),
        Turn(id="t4", role=Role.USER, content="I teach piano. Congrats on the anniversary!"),
    ]
    units = evidence_units(turns)
    assert [(u.turn_id, u.text) for u in units] == [
        ("t1", "I got engaged!"),
        ("t4", "I teach piano."),
    ]


def test_a_superseded_link_is_never_a_fact() -> None:
    """A later correction the support model reads as contradicting the claim makes it stale; the
    linker's word rule (``superseded``) is a feature only: it no longer decides alone."""
    from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
    from mirage_guard.guard._decision import decide
    from mirage_guard.guard._reasons import ReasonCode
    from tests.calibration.factories import make_profile

    link = EvidenceLink(turn_id="m1", similarity=0.9, span="We live in Boston.",
                        features={"sup_superseded": 0.9})  # fmt: skip
    fresh = link.model_copy(update={"features": {"sup_superseded": 0.1}})
    words_only = link.model_copy(update={"features": {"superseded": 1.0, "sup_superseded": 0.1}})
    profile = make_profile()
    kwargs = {"p_oi": 0.01, "p_stated": 0.99, "profile": profile, "policy": Policy()}
    cand = Candidate(id="c", text="Lives in Boston")
    stale = decide(cand, link, **kwargs)  # type: ignore[arg-type]
    assert stale.provenance is Provenance.GENERATED
    assert stale.source_turn_id is None
    assert ReasonCode.SUPERSEDED in [r.code for r in stale.reasons]
    assert decide(cand, fresh, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]
    kept = decide(cand, words_only, **kwargs)  # type: ignore[arg-type]
    assert kept.provenance is Provenance.STATED
    assert ReasonCode.SUPERSEDED not in [r.code for r in kept.reasons]


def test_a_word_the_user_only_asked_about_is_not_the_users_fact() -> None:
    """A claim's unsupported word that the user says only in a question or a remark to the other
    party ("Is it true Leeds has no tram?") is taken from what they asked: generated, its reason
    naming the words. Said of themselves anywhere, or in a negated claim, it is left alone."""
    from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
    from mirage_guard.guard._decision import decide
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.evidence._linker import _with_asked_words
    from mirage_guard.guard.evidence._text import content_stems
    from tests.calibration.factories import make_profile

    turns = [
        Turn(id="t1", role=Role.USER, content="We're moving to Leeds in March."),
        Turn(id="t2", role=Role.USER, content="Is it true Leeds has no tram?"),
    ]
    said = content_stems("We're moving to Leeds in March.")
    link = EvidenceLink(turn_id="t1", similarity=0.6, span=turns[0].content,
                        unsupported_words=["plans", "tram"])  # fmt: skip
    cands = [
        Candidate(id="a", text="Plans to get around Leeds by tram"),
        Candidate(id="b", text="Has never ridden a tram in Leeds"),
    ]
    out = _with_asked_words(turns, cands, [link, link], said)
    assert [x.asked_words for x in out] == [["tram"], []]
    # said of themselves in another turn: the user's own word
    own = [*turns, Turn(id="t3", role=Role.USER, content="I take the tram to work.")]
    assert _with_asked_words(own, cands[:1], [link], said | {"tram"})[0].asked_words == []
    kwargs = {"p_oi": 0.01, "p_stated": 0.99, "profile": make_profile(), "policy": Policy()}
    decision = decide(cands[0], out[0], **kwargs)  # type: ignore[arg-type]
    assert decision.provenance is Provenance.GENERATED
    asked = [r for r in decision.reasons if r.code is ReasonCode.ASKED_ONLY]
    assert [r.params["words"] for r in asked] == [["tram"]]
    assert decide(cands[0], link, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]

    # a frame verb the user asked with ("Do you still work weekends?") is the claim's frame, not
    # what was asked: "Has worked as a line cook for 8 years" from "I've been a line cook"
    cook = [
        Turn(id="t1", role=Role.USER, content="I've been a line cook for 8 years."),
        Turn(id="t2", role=Role.USER, content="Do you still work weekends?"),
    ]
    worked = link.model_copy(update={"unsupported_words": ["worked"], "span": cook[0].content})
    line = [Candidate(id="c", text="Has worked as a line cook for 8 years")]
    said = content_stems(cook[0].content)
    assert _with_asked_words(cook, line, [worked], said)[0].asked_words == []


@pytest.mark.parametrize(
    ("sentence", "imagined"),
    [
        ("If I ever won the lottery I'd buy the house on the corner.", True),
        ("I wish I'd studied law instead.", True),
        ("what if i just quit and went travelling for a year", True),
        ("Someday I'll open a little bakery.", True),
        ("One day we'll retire to the coast.", True),
        ("In another life I'd be a vet.", True),
        ("My dream is a cabin in Norway.", True),
        ("I'd love to learn the cello.", True),
        ("honestly if I win lottery tomorrow I will just build a house in Lekki", True),
        ("sometimes i think we should just move to canada", True),
        ("If I were twenty years younger I'd go to Japan on my own.", True),
        # what happens, however it is worded
        ("If I get the job I start in May.", False),
        ("I work one day a week from home.", False),
        ("We're buying the house on the corner.", False),
        ("I'd rather have the window seat.", False),
    ],
)
def test_a_sentence_that_imagines_or_wishes_is_told_apart(sentence: str, imagined: bool) -> None:
    from mirage_guard.guard.evidence._discourse import is_hypothetical

    assert is_hypothetical(sentence) is imagined


def test_a_wish_stated_as_a_fact_or_a_plan_is_not_the_users_fact() -> None:
    """A claim about the user whose own words the user says only while imagining or wishing
    ("if I ever won the lottery I'd buy the house on the corner") is generated, its reason naming
    the words; a claim that keeps the wish a wish, one the user also tells as a fact, or one
    about someone else is left alone."""
    from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
    from mirage_guard.guard._decision import decide
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.evidence._linker import _with_wished_words
    from tests.calibration.factories import make_profile

    turns = [
        Turn(id="t1", role=Role.USER, content="I rent a flat on Elm Street with my partner."),
        Turn(id="t2", role=Role.USER,
             content="Honestly if I ever won the lottery I'd buy the house on the corner."),
    ]  # fmt: skip
    link = EvidenceLink(turn_id="t2", similarity=0.7, span=turns[1].content)
    cands = [
        Candidate(id="a", text="Plans to buy the house on the corner"),
        Candidate(id="b", text="Dreams of buying the house on the corner"),
        Candidate(id="c", text="Rents a flat on Elm Street"),
        Candidate(id="d", text="Sister is buying the house on the corner"),
    ]
    out = _with_wished_words(turns, cands, [link] * 4, None)
    assert [x.wished_words for x in out] == [["buy", "house", "corner"], [], [], []]
    # told as a fact in another turn: the user's own plan
    told = [*turns, Turn(id="t3", role=Role.USER, content="We put an offer on the corner house.")]
    assert _with_wished_words(told, cands[:1], [link], None)[0].wished_words == []
    kwargs = {"p_oi": 0.01, "p_stated": 0.99, "profile": make_profile(), "policy": Policy()}
    decision = decide(cands[0], out[0], **kwargs)  # type: ignore[arg-type]
    assert decision.provenance is Provenance.GENERATED
    wished = [r for r in decision.reasons if r.code is ReasonCode.WISHED_ONLY]
    assert [r.params["words"] for r in wished] == [["buy", "house", "corner"]]
    assert decide(cands[0], link, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sentence", "reported"),
    [
        ("my wife says I'm a terrible cook but I make great pasta", " a terrible cook "),
        ("Mum thinks im lazy.", " lazy."),
        ("My brother calls me a hoarder lol", " a hoarder lol"),
        # what the user does, in someone else's opinion; "say" as a learner writes it
        ("my mother in law says I spoil the children too much", " spoil the children too much"),
        ("and Mariana say I snore like tractor", " snore like tractor"),
        ("she cooks all day and say I am too thin.", " too thin."),
        # a diagnosis the user reports as theirs, and the user's own voice
        ("The derm said I have mild rosacea.", None),
        ("I'm a terrible cook.", None),
        # a need, a start or a can the user was told, and the user's own "I think"
        ("The vet says I need to cut his food down.", None),
        ("She said I start on Monday.", None),
        ("I think I snore.", None),
        ("I said I'm tired.", None),
    ],
)
def test_someone_elses_opinion_of_the_user_is_told_apart(
    sentence: str, reported: str | None
) -> None:
    from mirage_guard.guard.evidence._discourse import reported_opinion

    found = reported_opinion(sentence)
    assert (found[0] if found else None) == reported


def test_someone_elses_opinion_stated_as_a_fact_is_not_the_users_fact() -> None:
    """A claim about the user whose own words the user says only as someone else's opinion of
    them ("my wife says I'm a terrible cook") is generated, its reason naming the words; not when
    the user agrees with it, says it in their own voice, or the claim is about someone else."""
    from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
    from mirage_guard.guard._decision import decide
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.evidence._linker import _with_reported_words
    from tests.calibration.factories import make_profile

    turns = [
        Turn(id="t1", role=Role.USER, content="My wife says I'm a terrible cook but I make pasta."),
    ]
    link = EvidenceLink(turn_id="t1", similarity=0.7, span=turns[0].content)
    cands = [
        Candidate(id="a", text="Is a terrible cook"),
        Candidate(id="b", text="Makes pasta"),
        Candidate(id="c", text="Wife is a terrible cook"),
    ]
    out = _with_reported_words(turns, cands, [link] * 3, None)
    assert [x.reported_words for x in out] == [["terrible", "cook"], [], []]
    # agreed with, or said in the user's own voice elsewhere: the user's own
    for also in ("Which is fair, honestly.", "I'm a terrible cook, I burn toast."):
        more = [Turn(id="t1", role=Role.USER, content=f"{turns[0].content} {also}")]
        assert _with_reported_words(more, cands[:1], [link], None)[0].reported_words == []
    kwargs = {"p_oi": 0.01, "p_stated": 0.99, "profile": make_profile(), "policy": Policy()}
    decision = decide(cands[0], out[0], **kwargs)  # type: ignore[arg-type]
    assert decision.provenance is Provenance.GENERATED
    reported = [r for r in decision.reasons if r.code is ReasonCode.REPORTED_ONLY]
    assert [r.params["words"] for r in reported] == [["terrible", "cook"]]


def test_a_wish_that_is_all_the_user_says_of_a_claim_needs_one_word() -> None:
    """ "Plans to travel to Japan on her own" from "If I were twenty years younger I'd go to
    Japan": the one word of the claim the user says ("Japan"), said only in the what-if. Not
    when the user also tells a word of it, and not for another person's opinion of the user,
    which keeps its share."""
    from mirage_guard.guard import Candidate, EvidenceLink
    from mirage_guard.guard.evidence._linker import _with_reported_words, _with_wished_words

    japan = "I've never been further than Sydney. If I were twenty years younger I'd go to Japan."
    turns = [Turn(id="t1", role=Role.USER, content=japan)]
    link = EvidenceLink(turn_id="t1", similarity=0.6, span=japan)
    claim = [Candidate(id="a", text="Plans to travel to Japan on her own")]
    assert _with_wished_words(turns, claim, [link], None)[0].wished_words == ["japan"]
    travel = [*turns, Turn(id="t2", role=Role.USER, content="We travel every spring.")]
    assert _with_wished_words(travel, claim, [link], None)[0].wished_words == []
    told = "My mum says I'm hopeless at languages. I speak English at home."
    turns = [Turn(id="t1", role=Role.USER, content=told)]
    langs = [Candidate(id="b", text="Speaks hopeless English and loves languages at home")]
    assert _with_reported_words(turns, langs, [link], None)[0].reported_words == []
