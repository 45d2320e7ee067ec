"""The shipped claim-support signal on hand-made pairs (real MiniLM + shipped weights, offline)."""

from __future__ import annotations

import pytest

from mirage_guard.guard import Candidate, Decision, EvidenceLink, Role, Turn
from mirage_guard.guard._decision import fully_supported
from mirage_guard.guard.evidence import (
    CrossSupportModel,
    EvidenceLinker,
    SupportClass,
    cross_model_dir,
    shared_cross_model,
    shipped_linker,
    verify_support_dir,
)

pytestmark = pytest.mark.slow

TURNS = (
    Turn(id="u1", role=Role.USER, content="I live in Lisbon with my two cats."),
    Turn(id="u2", role=Role.USER, content="I train jiu-jitsu four nights a week."),
    Turn(id="u3", role=Role.USER, content="Do you play any instruments?"),
    Turn(id="u4", role=Role.USER, content="I went rock climbing last weekend."),
)


def _tag_shipped(turns: list[Turn], claims: list[str]) -> list[Decision]:
    """The claims tagged against the turns by a guard with the shipped models and profile."""
    from mirage_guard.guard import Guard, GuardSettings
    from mirage_guard.guard.evidence import shared_minilm

    guard = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        return guard.tag(turns, [Candidate(text=c) for c in claims])
    finally:
        guard.close()


@pytest.fixture(scope="module")
def linker() -> EvidenceLinker:
    return shipped_linker()


def _one(linker: EvidenceLinker, text: str) -> EvidenceLink:
    return linker.link(TURNS, [Candidate(text=text)])[0]


def test_shipped_weights_match_their_manifest() -> None:
    manifest = verify_support_dir(cross_model_dir())
    assert CrossSupportModel().sha256 == manifest["sha256"]
    assert (cross_model_dir() / "model.safetensors").stat().st_size < 50_000_000


def test_the_cross_encoder_reads_pairs_it_was_not_trained_on() -> None:
    model = shared_cross_model()
    probs = model.predict_text(
        ["I train jiu-jitsu four nights a week.", "I live in Lisbon."],
        ["Trains jiu-jitsu four nights a week", "Lives in Lisbon and works at a bank in Porto"],
    )
    assert probs.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-4)
    assert int(probs[0].argmax()) == SupportClass.ENTAILED  # a restatement
    assert probs[1, SupportClass.ENTAILED] < 0.5  # a glued detail is not a restatement


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        ("I went climbing last weekend.", "User went climbing last weekend"),
        ("I went climbing last weekend.", "Went climbing last weekend"),
        ("I'm a vet in Leeds.", "Is a vet in Leeds"),
        ("I have two kids, 4 and 7.", "The user has two kids"),
    ],
)
def test_a_verbatim_restatement_is_read_as_said(said: str, claim: str) -> None:
    """Copying the user's words is a restatement, not a contradiction: trained only on
    hand-written pairs (whose restatements mostly paraphrase while glued and negated claims copy),
    the model had read "User went climbing last weekend" as contradicted (0.84)."""
    probs = shared_cross_model().predict_text([said], [claim])[0]
    assert int(probs.argmax()) == SupportClass.ENTAILED
    assert probs[SupportClass.CONTRADICTED] < 0.3


def test_a_negated_restatement_is_not_generated(linker: EvidenceLinker) -> None:
    """ "Does not eat pork" from "I don't eat pork": the model alone still reads many negated
    claims as contradictions (measured); the decision needs an unsaid word for that."""
    from mirage_guard.guard._decision import contradicted

    turns = (Turn(id="p1", role=Role.USER, content="I don't eat pork, never have."),)
    link = linker.link(turns, [Candidate(text="Does not eat pork")])[0]
    assert "not" not in link.unsupported_words
    assert not contradicted(link)


def test_a_restatement_is_fully_supported(linker: EvidenceLinker) -> None:
    link = _one(linker, "Lives in Lisbon with two cats")
    assert link.turn_id == "u1"
    assert link.unsupported_words == []
    assert link.features["support_model"] == 1.0


def test_a_glued_detail_is_named(linker: EvidenceLinker) -> None:
    link = _one(linker, "Went rock climbing in Sintra last weekend")
    assert link.turn_id == "u4"
    assert "sintra" in link.unsupported_words


def test_a_changed_number_is_named(linker: EvidenceLinker) -> None:
    link = _one(linker, "Trains jiu-jitsu two nights a week")
    assert "two" in link.unsupported_words
    assert not fully_supported(link)


def test_a_negated_claim_is_not_fully_supported(linker: EvidenceLinker) -> None:
    plain = _one(linker, "Lives in Lisbon")
    negated = _one(linker, "Does not live in Lisbon")
    assert "not" in negated.unsupported_words
    assert not fully_supported(negated)
    assert negated.features["sup_contradicted_max"] > plain.features["sup_contradicted_max"]


def test_a_question_to_the_other_party_supports_nothing(linker: EvidenceLinker) -> None:
    link = _one(linker, "Plays the clarinet")
    assert link.turn_id != "u3"
    assert "clarinet" in link.unsupported_words


def test_the_guard_reads_what_the_user_denies_or_gives_otherwise() -> None:
    """End to end with the shipped models and profile: the cross-encoder reads these claims as
    said; the user's own words deny them or give another value, so they are generated."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    turns = [
        Turn(id="u1", role=Role.USER,
             content="I don't have an MBA lol. Just a bachelor's in communications from UNAM."),
        Turn(id="a1", role=Role.ASSISTANT, content="With your MBA, a strategy role fits you."),
        Turn(id="u2", role=Role.USER,
             content="My parents live 2 hours away by train, in the mountains."),
        Turn(id="u3", role=Role.USER, content="We paid 1,500,000 pesos for the flat in 2019."),
    ]  # fmt: skip
    claims = ["User has an MBA", "Parents live 4 hours away by train",
              "Has a bachelor's in communications from UNAM",
              "Paid 1,500 pesos for the flat"]  # fmt: skip
    mba, parents, degree, flat = _tag_shipped(turns, claims)
    assert mba.provenance is Provenance.GENERATED
    (denied,) = [r for r in mba.reasons if r.code is ReasonCode.DENIED]
    assert denied.params["words"] == ["mba"]
    assert parents.provenance is Provenance.GENERATED
    (changed,) = [r for r in parents.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert (changed.params["said"], changed.params["claimed"]) == ("2", "4")
    # "1,500,000" is one number: 1,500 is not what the user said
    assert flat.provenance is Provenance.GENERATED
    (changed,) = [r for r in flat.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert (changed.params["said"], changed.params["claimed"]) == ("1500000", "1500")
    # the control: what the user did say is not caught by either rule
    assert degree.provenance is not Provenance.GENERATED
    assert degree.source_turn_id == "u1"


def test_a_fact_a_later_user_turn_says_has_ended_is_stale() -> None:
    """End to end: the user said it, then said in a later session that it ended."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    turns = [
        Turn(id="u1", role=Role.USER,
             content="I work early shifts at a bakery, so I'm up at 4 most days."),
        Turn(id="a1", role=Role.ASSISTANT, content="That's an early start! How do you sleep?"),
        Turn(id="u2", role=Role.USER,
             content="Other news: I quit the bakery last month. I'm starting a sourdough stall "
                     "at the Saturday market."),
    ]  # fmt: skip
    claims = ["Works early shifts at a bakery", "Is starting a sourdough stall"]
    bakery, stall = _tag_shipped(turns, claims)
    assert bakery.provenance is Provenance.GENERATED
    (retracted,) = [r for r in bakery.reasons if r.code is ReasonCode.RETRACTED]
    assert retracted.params == {"turn_id": "u1", "later_turn_id": "u2", "words": ["bakery"]}
    # the control: what the later turn says now is not retracted by it
    assert stall.provenance is not Provenance.GENERATED
    assert stall.source_turn_id == "u2"


def test_a_compound_claim_is_as_strong_as_its_weakest_part() -> None:
    """The issue's examples, end to end: from the single turn "I live in Lisbon." the shipped
    models read "User lives in Lisbon and is a vegan" as a restatement (its first part carries
    the similarity, and the cross-encoder reads "User is a vegan" as one step from Lisbon). The
    glued part is near no user sentence and the user said none of its words: generated."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    turns = [
        Turn(id="u1", role=Role.USER, content="I live in Lisbon."),
        Turn(id="u2", role=Role.USER, content="I work as a nurse and I volunteer at the shelter."),
    ]
    claims = ["User lives in Lisbon and is a vegan.", "User lives in Lisbon, is divorced.",
              "Lives in Lisbon", "Works as a nurse and volunteers at the shelter"]  # fmt: skip
    vegan, divorced, lives, both = _tag_shipped(turns, claims)
    for decision, part in ((vegan, "User is a vegan."), (divorced, "User is divorced.")):
        assert decision.provenance is Provenance.GENERATED
        (glued,) = [r for r in decision.reasons if r.code is ReasonCode.GLUED_DETAIL]
        assert glued.params["words"] == [part]
    # the controls: one said predicate, and two predicates the user said
    assert lives.provenance is Provenance.STATED
    assert both.provenance is Provenance.STATED


def test_glued_times_other_relatives_and_a_move_said_in_passing() -> None:
    """End to end, each read as a restatement by the shipped scores before its rule: a time, an
    occasion, a source or a name glued on ("... on weekends", "... for her birthday", "... from a
    shelter", "... in Leeds"), a relative the sentence gives
    otherwise further apart than the context words reach (the issue's "Got the necklace from
    grandfather" / "a gift from my grandma"), a move whose sentence names the old place again,
    and an age in decades from the exact age (a conclusion: inferred)."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    turns = [
        Turn(id="u1", role=Role.USER, content="I work night shifts at the hospital."),
        Turn(id="u2", role=Role.USER,
             content="This necklace was a gift from my grandma, I wear it every day."),
        Turn(id="u3", role=Role.USER, content="We moved to Boston in 2019 for my job."),
        Turn(id="a1", role=Role.ASSISTANT, content="Nice, how do you like it?"),
        Turn(id="u4", role=Role.USER,
             content="Actually we moved to Denver last spring, Boston was too cold."),
        Turn(id="u5", role=Role.USER, content="I'm 34 and just started learning piano."),
        Turn(id="u6", role=Role.USER, content="We adopted a cat last month, her name is Mochi."),
    ]  # fmt: skip
    claims = ["Works night shifts at the hospital on weekends", "Got the necklace for her birthday",
              "Adopted a cat named Mochi from a shelter",
              "Works night shifts at the hospital in Leeds",
              "Got the necklace from grandfather", "Lives in Boston", "Is in their thirties",
              "Works night shifts at the hospital", "Wears the necklace every day",
              "Received a necklace from grandma", "Has a cat named Mochi",
              "Is 34 years old"]  # fmt: skip
    out = _tag_shipped(turns, claims)
    weekends, birthday, shelter, leeds, grandfather, boston, thirties, *said, age = out
    for decision, phrase in (
        (weekends, "on weekends"), (birthday, "for her birthday"), (shelter, "from a shelter"),
        (leeds, "leeds"),
    ):  # fmt: skip
        assert decision.provenance is Provenance.GENERATED
        (glued,) = [r for r in decision.reasons if r.code is ReasonCode.GLUED_DETAIL]
        assert glued.params["words"] == [phrase]
    assert grandfather.provenance is Provenance.GENERATED
    (changed,) = [r for r in grandfather.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert (changed.params["said"], changed.params["claimed"]) == ("grandmother", "grandfather")
    assert boston.provenance is Provenance.GENERATED
    assert {r.code for r in boston.reasons} & {ReasonCode.RETRACTED, ReasonCode.SUPERSEDED}
    assert (thirties.provenance, thirties.source_turn_id) == (Provenance.INFERRED, "u5")
    # the controls: what the user said stays stated
    assert [d.provenance for d in said] == [Provenance.STATED] * 4
    # the age itself: no rule touches it (the scores read it as inferred among these turns, as
    # stated among fewer: a weakness of the score on "N years old", not of a rule)
    assert age.provenance is not Provenance.GENERATED


def test_a_list_item_added_to_what_the_user_listed_is_generated() -> None:
    """End to end with the shipped models: an item a claim's list adds to the user's ("a dog"
    after "just me and my cat"; "milk" after "allergic to eggs, that's it") was stated: the
    aligner reads "dog" off "cat", "milk" off "eggs". Another word for a said item ("kids" for
    "boys"), a list the user gave, and an item another user turn says stay stated."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    def tag(turns: list[str], claims: list[str]) -> list[tuple[Provenance, list[str]]]:
        out = _tag_shipped(
            [Turn(id=f"u{i}", role=Role.USER, content=t) for i, t in enumerate(turns)], claims
        )
        return [
            (d.provenance,
             [w for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL for w in r.params["words"]])
            for d in out
        ]  # fmt: skip

    glued = tag(
        ["just me and my cat, Pierogi.", "he's allergic to eggs, that's it.",
         "I can't stand mushrooms."],
        ["Has a cat named Pierogi and a dog", "Son is allergic to eggs and milk",
         "Dislikes mushrooms and olives"],
    )  # fmt: skip
    assert glued == [(Provenance.GENERATED, ["a dog"]), (Provenance.GENERATED, ["milk"]),
                     (Provenance.GENERATED, ["olives"])]  # fmt: skip
    said = tag(
        ["my husband and our two boys are coming", "I cook a lot, mostly pasta and curries.",
         "just me and my cat, Pierogi.", "My sister looks after my dog when I travel."],
        ["Has a husband and two kids", "Cooks curries and pasta",
         "Has a cat named Pierogi and a dog"],
    )  # fmt: skip
    assert said == [(Provenance.STATED, [])] * 3


def test_a_habit_from_one_occasion_is_inferred_and_a_said_habit_stated() -> None:
    """End to end with the shipped models: "User watches anime regularly" from one night was
    stated (P(stated) 0.83); "regularly" unsaid makes it a conclusion. A habit the user says in
    other words ("most mornings") and the occasion itself stay stated."""
    from mirage_guard.guard import Provenance

    turns = [
        Turn(id="u1", role=Role.USER, content="I watched anime until 4am yesterday."),
        Turn(id="u2", role=Role.USER, content="I go to the gym most mornings before work."),
    ]
    claims = ["User watches anime regularly", "Usually goes to the gym before work",
              "Watched anime until 4am"]  # fmt: skip
    out = _tag_shipped(turns, claims)
    assert [(d.provenance, d.source_turn_id) for d in out] == [
        (Provenance.INFERRED, "u1"), (Provenance.STATED, "u2"), (Provenance.STATED, "u1")
    ]  # fmt: skip


def test_a_swapped_name_a_negation_elsewhere_and_an_answer_after_a_comma() -> None:
    """End to end with the shipped models. A restatement whose sentence gives another name where
    the claim has one was stated ("Bristol" / "Swindon": Bristol said in another turn); a "not"
    in another sentence of the linked turns said the claim's negation ("Does not swim ..." was
    stated); and a reply that opens on its answer ("Glasgow, so not far at all") was read as
    addressing someone named Glasgow, so it was no evidence."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    turns = [
        Turn(id="u1", role=Role.USER, content="I'm applying for a job at a charity in Bristol."),
        Turn(id="u2", role=Role.USER, content="Also I grew up in social housing in Swindon."),
        Turn(id="u3", role=Role.USER,
             content="I swim in the sea whenever I can, even in winter. Honestly, not having "
                     "to set an alarm is the best part."),
        Turn(id="a4", role=Role.ASSISTANT, content="Since you're driving up from Leeds, plan "
                                                   "for five hours."),
        Turn(id="u5", role=Role.USER, content="Glasgow, so not far at all."),
    ]  # fmt: skip
    claims = ["Grew up in social housing in Bristol", "Grew up in social housing in Swindon",
              "Does not swim in the sea in winter", "Lives in Glasgow"]  # fmt: skip
    out = _tag_shipped(turns, claims)
    assert out[0].provenance is Provenance.GENERATED
    changed = [r.params for r in out[0].reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed == [{"turn_id": "u2", "said": "swindon", "claimed": "bristol"}]
    assert (out[1].provenance, out[1].source_turn_id) == (Provenance.STATED, "u2")
    assert out[2].provenance is not Provenance.STATED
    assert out[3].source_turn_id == "u5"
    assert "glasgow" not in [
        w for r in out[3].reasons if r.code is ReasonCode.UNSUPPORTED_CONTENT
        for w in r.params["words"]
    ]  # fmt: skip


def test_the_shipped_evidence_profile_records_the_shipped_support_model() -> None:
    from mirage_guard.guard.scoring import ProfileStore

    profile = ProfileStore().evidence_only()
    assert profile.support_model == CrossSupportModel().sha256


def test_a_value_a_later_correction_gives_is_stated_from_that_turn() -> None:
    """End to end with the shipped models: the claim with the value the user corrected to is
    linked to the correction and read against both turns, so it is stated from the correction
    (before, the first turn's other value made it generated); the old value is stale; a value
    no turn gives, and a later sentence that gives the value about something else, change
    nothing."""
    from mirage_guard.guard import Provenance
    from mirage_guard.guard._reasons import ReasonCode

    turns = [
        Turn(id="u1", role=Role.USER,
             content="I'm a photographer, I shoot about 20 weddings a year, mostly in Kent."),
        Turn(id="a1", role=Role.ASSISTANT, content="That's a busy season!"),
        Turn(id="u2", role=Role.USER, content="My dentist appointment is on Monday."),
        Turn(id="u3", role=Role.USER, content="I'm getting 25 new prints framed for the studio."),
        Turn(id="u4", role=Role.USER,
             content="Correction on my numbers: I said 20 weddings, it's 30 a year now."),
        Turn(id="u5", role=Role.USER,
             content="Quick correction, the dentist moved it to Thursday, not Monday."),
    ]  # fmt: skip
    claims = ["Shoots about 30 weddings a year", "Has a dentist appointment on Thursday",
              "Shoots about 20 weddings a year", "Has a dentist appointment on Monday",
              "Shoots about 25 weddings a year"]  # fmt: skip
    thirty, thursday, twenty, monday, twenty_five = _tag_shipped(turns, claims)
    assert (thirty.provenance, thirty.source_turn_id) == (Provenance.STATED, "u4")
    assert (thursday.provenance, thursday.source_turn_id) == (Provenance.STATED, "u5")
    for stale in (twenty, monday):
        assert stale.provenance is Provenance.GENERATED
        assert {r.code for r in stale.reasons} & {ReasonCode.RETRACTED, ReasonCode.SUPERSEDED}
    # "25 new prints" is about something else (not a correction, not a turn about weddings)
    assert twenty_five.provenance is not Provenance.STATED
    # a write whose every claim is so read (no other claim to batch with)
    (alone,) = _tag_shipped(turns, ["Shoots about 30 weddings a year"])
    assert (alone.provenance, alone.source_turn_id) == (Provenance.STATED, "u4")
