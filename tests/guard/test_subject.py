"""Another person's fact is not the user's: ``other_persons_fact`` and its decision.

The turns are the shapes the held-out sets and the support pairs showed the guard storing as the
user's own facts; the negative cases are the user's facts in the same sentences, and facts about
a relative that the claim says are the relative's.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
from mirage_guard.guard._decision import decide
from mirage_guard.guard._reasons import ReasonCode, render_reason
from mirage_guard.guard.evidence import (
    known_people,
    other_persons_fact,
    third_persons_fact,
    users_fact_given_to,
)
from mirage_guard.guard.evidence._subject import clauses
from tests.calibration.factories import make_profile


@pytest.mark.parametrize(
    ("claim", "turn", "person", "words"),
    [
        ("Is diabetic", "My sister is diabetic, she will be there, so I will boil some for her.",
         "sister", ["diabetic"]),
        ("User is vegan", "My girlfriend does her own thing, she's vegan and she makes fun of my "
         "chicken-and-rice boxes.", "girlfriend", ["vegan"]),
        ("Apparently lived in Kyoto for a year",
         "Lukas is the one who speaks it, he lived in Kyoto for a year.", "lukas",
         ["lived", "kyoto", "year"]),
        ("User does not eat beef", "Dad also doesn't eat beef, never has", "dad", ["eat", "beef"]),
        ("Has a tree nut allergy and carries an EpiPen",
         "My wife Claire has a severe tree nut allergy though, like EpiPen severe.", "claire",
         ["tree", "nut", "allergy", "epipen"]),
        ("Is vegetarian", "I'm not doing meat though, mum is strictly vegetarian", "mum",
         ["vegetarian"]),
        ("Has a glass of wine now and then",
         "Keisha has a glass of wine sometimes but we're doing mocktails.", "keisha",
         ["glass", "wine"]),
        ("Wants to wear a green tie at the wedding",
         "we're doing matching navy suits, but Sam wants a green tie and I want burgundy.", "sam",
         ["green", "tie"]),
        ("You work as a roofer", "i'll get my neighbour Dev to check, he's a roofer.", "dev",
         ["roofer"]),
        # "'s" as "is" or "has" after a person
        ("Is getting married in June", "my little brother's getting married in june and i'm "
         "the best man", "brother", ["getting", "married", "june"]),
        ("Is in hospital", "mum's in hospital again, so I'm doing all the school runs", "mum",
         ["hospital"]),
        # another person as the subject after other words
        ("Had a heart attack at 52", "main motivation is my dad had a heart attack at 52 and i "
         "don't want to go the same way.", "dad", ["heart", "attack", "52"]),
        # a name set off by commas is the subject of the clause after it
        ("Has a peanut allergy", "the younger one, Milo, has a peanut allergy so nothing with "
         "nuts at all", "milo", ["peanut", "allergy"]),
        # one clause about the other says all of it; the user's clauses say a word of it each
        ("Travels for work two weeks a month",
         "my in-laws are coming to stay with us for a month. i work from home. my husband Faisal "
         "travels for work 2 weeks of the month so it'll mostly be me with them.", "faisal",
         ["travels", "work", "two", "weeks", "month"]),
        # "same" is not the name Sam
        ("Uses the same password for everything",
         "my partner Sam is on the phone with him. he uses the same password for literally "
         "everything", "sam", ["uses", "password", "everything"]),
    ],
)  # fmt: skip
def test_a_fact_the_user_said_of_someone_else_is_found_with_the_person_and_words(
    claim: str, turn: str, person: str, words: list[str]
) -> None:
    found = other_persons_fact(claim, turn)
    assert found is not None
    assert found.person == person
    assert list(found.words) == words


@pytest.mark.parametrize(
    ("claim", "turn"),
    [
        # the claim says whose fact it is
        ("Has a sister who is diabetic", "My sister is diabetic, she will be there."),
        ("Wife Claire has a tree nut allergy", "My wife Claire has a severe tree nut allergy."),
        ("Mother has MS", "my mum uses a wheelchair, she has MS"),
        ("Owen dislikes hiking", "Sam hates hiking."),
        # the user's own fact, in a sentence that also gives someone else's
        ("Is a nurse", "I'm a nurse and my husband is a teacher."),
        ("Loves hiking", "My wife and I love hiking."),
        ("Works as a GP", "I'm a GP so my hours are awful. She works from home as a copywriter."),
        ("User is allergic to cats", "She has three cats though, and I'm allergic."),
        ("Was made head of product", "also they made me head of product here."),
        ("Inspects welds at the shipyard", "He was a welder at the shipyard, almost like me."),
        # a capitalised word that opens a sentence is not a name before an event's verb
        ("Has to keep their leg raised for two weeks",
         "Surgery went fine, just got to keep the leg up for 2 weeks."),
        # little of the claim is said of the other person: an inference, not their fact
        ("Stuck on a contradictory brief with a Friday deadline this week",
         "Client wants the logo bigger but also more minimal by Friday, so that's my week."),
        # the turn names nobody else
        ("Is vegan", "I went vegan in January."),
        # a possessive "'s" before what the person owns is not "is"
        ("Hopes to lose 15 lbs before October",
         "and hopefully lose 15 lbs before my sister's wedding in October"),
        # the user's words come before the person's: the user's clause
        ("Quit a job at the movie theater",
         "just quit my job at the movie theater bc my manager was screaming at ppl lol."),
        # "Thanks, Mel": a word that opens a sentence is not a name on its own
        ("Is vegan", "Thanks, I went vegan in January."),
        # a clause about the user says two of the claim's words: not only the other's
        ("Travels for work two weeks a month",
         "I travel a lot too, two weeks away at a time. My husband travels for work 2 weeks of "
         "the month."),
        # the claim names the person, possessive and all
        ("Sam's mum uses the same password for everything",
         "Sam says his mum uses the same password for everything"),
        # another person's words about the user are the user's fact, reported
        ("Was diagnosed with mild rosacea by a dermatologist",
         "Derm said I have mild rosacea last year."),
        ("Is too thin", "mum thinks im too thin, she keeps feeding me"),
        # a sentence's noun that says what follows is no one's name ("Reason is ...")
        ("Grew up in Shanghai", "Reason is my grandmother in Shanghai is very sick"),
        ("Drives a van", "Problem is the van broke down again."),
    ],
)  # fmt: skip
def test_the_users_own_facts_and_facts_about_a_named_relative_are_not_found(
    claim: str, turn: str
) -> None:
    assert other_persons_fact(claim, turn) is None


def test_a_pronoun_clause_is_the_person_named_before_it() -> None:
    parts = clauses("My girlfriend does her own thing, she's vegan and I eat chicken.")
    assert [(c.subject, c.person) for c in parts] == [
        ("other", "girlfriend"),
        ("other", "girlfriend"),
        ("user", None),
    ]


def test_a_name_alone_between_commas_makes_the_next_clause_theirs() -> None:
    parts = clauses("the other flatmate, Kwame, is never there, and I pay the bills.")
    assert [(c.subject, c.person) for c in parts] == [
        ("other", "flatmate"),
        ("other", "kwame"),
        ("other", "kwame"),
        ("user", None),
    ]


def _read_as_said(turn_id: str, span: str) -> EvidenceLink:
    """A link the scores and the support model read as a restatement."""
    return EvidenceLink(
        turn_id=turn_id, similarity=0.8, span=span,
        features={"support_model": 1.0, "sup_entailed": 0.9, "sup_inferable": 0.05,
                  "sup_unsupported": 0.03, "sup_contradicted": 0.02},
    )  # fmt: skip


def _stated_scores() -> dict[str, object]:
    return {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}


def test_another_persons_fact_that_the_scores_read_as_stated_is_generated() -> None:
    """The support model reads "User is vegan" as said (entailed 0.9: the word is there); the
    clause says it of the girlfriend, so it is generated and the reason names her and the word."""
    link = _read_as_said("u1", "she's vegan")
    turn = "No no, just me. My girlfriend does her own thing, she's vegan."
    kwargs = _stated_scores()
    d = decide(Candidate(text="User is vegan"), link, turn_text=turn, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    assert d.source_turn_id is None
    (other,) = [r for r in d.reasons if r.code is ReasonCode.OTHER_PERSONS_FACT]
    assert other.params == {"turn_id": "u1", "person": "girlfriend", "words": ["vegan"]}
    assert "girlfriend" in render_reason(other)
    # the relative's fact written as the relative's stays what the scores say
    d = decide(Candidate(text="Girlfriend is vegan"), link, turn_text=turn, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.STATED


def test_a_claim_that_opens_with_the_users_name_is_about_the_user() -> None:
    """ "Keiko enjoys cooking" from "he cooks, I burn water lol": with the user's name known, the
    claim is the user's and the cooking is his; without it, "Keiko" reads as another person and
    the rule stays out of it."""
    turn = "my husband is a chef. he cooks, I burn water lol"
    found = other_persons_fact("Keiko enjoys cooking", turn, user_name="Keiko Tanaka")
    assert found is not None
    assert found.person == "husband"
    assert list(found.words) == ["cooking"]
    assert other_persons_fact("Keiko enjoys cooking", turn) is None
    # her name as the subject of her own clause is the user
    assert (
        other_persons_fact("Keiko loves sushi", "Keiko loves sushi, he hates it.", "Keiko") is None
    )


def test_a_claim_that_opens_with_the_user_is_about_the_user() -> None:
    """ "The user gets seasick" is "User gets seasick": the user's own fact, so a turn that says
    it of Chris makes it his; "The user's sister" is still the sister's."""
    turn = "Chris gets seasick, so remove the dolphin boat trip."
    chris = frozenset({"chris"})
    for claim in ("The user gets seasick", "User gets seasick", "Gets seasick"):
        found = other_persons_fact(claim, turn, people=chris)
        assert found is not None, claim
        assert (found.person, found.words) == ("chris", ("gets", "seasick"))
    assert other_persons_fact("The user's husband gets seasick", turn, people=chris) is None


@pytest.mark.parametrize(
    ("claim", "turn", "person"),
    [
        ("Is gluten free", "And my mother-in-law is gluten free, she says", "mother-in-law"),
        ("You don't eat pork", "my sister in law is coeliac, my own mum doesnt eat pork", "mum"),
        ("Plans to do the Oodnadatta Track", "my mate Davo wants the Oodnadatta track", "davo"),
    ],
)  # fmt: skip
def test_in_laws_mates_and_my_own_mum_are_other_people(claim: str, turn: str, person: str) -> None:
    """ "my mother-in-law", "my mate Davo", "my own mum": someone else, whose fact it is."""
    found = other_persons_fact(claim, turn)
    assert found is not None, turn
    assert found.person == person


@pytest.mark.parametrize(
    ("turn", "person"),
    [
        ("she's with me weekdays and her mum Nicole lives even further out in Wigston", "nicole"),
        ("his dad lives in Wigston now", "dad"),
        ("mias dad moved to Wigston", "dad"),
    ],
)
def test_another_persons_relative_as_a_subject_is_theirs(turn: str, person: str) -> None:
    """ "her mum Nicole lives in Wigston", "his dad lives", a known name typed without its
    apostrophe ("mias dad moved"): the relative's fact, not the user's; the same words after a
    preposition ("for my boss and his wife on Friday") are no subject."""
    found = other_persons_fact("The user lives in Wigston", turn, people=frozenset({"mia"}))
    assert found is not None, turn
    assert found.person == person
    assert "wigston" in found.words
    dinner = "I'm doing a dinner for my boss and his wife on Friday, steak and a mushroom risotto."
    assert other_persons_fact("Knows how to cook steak and risotto", dinner) is None


def test_a_possessive_of_a_name_never_given_opening_a_clause_is_theirs() -> None:
    """ "mias dad is a mechanic so hes coming with me saturday": Mia is named nowhere else, so
    the apostrophe-less "mias" was no owner and "Works as a mechanic" read as the user's job.
    A possessive opening a clause before a person and a verb is someone's, named or not; "its",
    "this", "boss" and "parents" are no owners."""
    mechanic = "found a focus at a dealer in newbury. mias dad is a mechanic so hes coming with me"
    found = other_persons_fact("Works as a mechanic", mechanic)
    assert found is not None
    assert found.person == "dad"
    apostrophe = other_persons_fact("Works as a mechanic", "mia's dad is a mechanic")
    assert apostrophe is not None
    for turn in ("boss dad is a mechanic", "parents dad is a mechanic", "its dad is a mechanic"):
        assert other_persons_fact("Works as a mechanic", turn) is None, turn


def test_please_is_no_name_and_a_known_name_after_a_relative_is_theirs() -> None:
    """ "Please also mention that I am bilingual" is the user's own request, not someone called
    Please; "my husband felix and our baby" names the husband Felix, so "Is married to Felix" is
    the user's fact about him, not his."""
    assert (
        other_persons_fact(
            "Is bilingual in English and Yoruba",
            "Please also mention that I am bilingual in English and Yoruba.",
        )
        is None
    )
    felix = "it's me, my husband felix and our baby, she'll be 9 months by then"
    assert other_persons_fact("Is married to Felix", felix, people=frozenset({"felix"})) is None


@settings(max_examples=300, deadline=None)
@given(
    claim=st.text(max_size=80),
    turn=st.text(max_size=300),
    user_name=st.one_of(st.none(), st.text(max_size=20)),
)
def test_any_text_gives_a_finding_or_none_naming_only_the_claims_words(
    claim: str, turn: str, user_name: str | None
) -> None:
    """Whatever users type (punctuation only, unicode, empty), the rule answers; a finding names
    only words of the claim."""
    found = other_persons_fact(claim, turn, user_name)
    if found is not None:
        assert found.words
        assert set(found.words) <= {
            w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'\-]*|\d+(?:[.,]\d+)?", claim)
        }


@pytest.mark.parametrize(
    ("claim", "turn"),
    [("Is vegan", "My girlfriend is vegan."), ("Lived in Kyoto", "he lived in Kyoto")],
)
def test_the_rule_reads_what_people_type_in_any_case(claim: str, turn: str) -> None:
    assert other_persons_fact(claim, turn) is not None
    assert other_persons_fact(claim, turn.lower()) is not None
    assert other_persons_fact(claim, "") is None


def test_the_names_a_conversation_gives_others_are_gathered_and_read_in_any_case() -> None:
    turns = [
        "it's me and my girlfriend Jess and her 2 kids, Sam hates broccoli",
        "I moved to Lisbon, Portugal, and work remotely. It's a mess, that's fine.",
        "Priya here, Priya loves running",
    ]
    people = known_people(turns, user_name="Priya")
    assert people == frozenset({"jess", "sam"})  # not a place alone, "it", or the user
    # a word capitalised only where every word is (a sentence's start) is not a name
    assert known_people(["Rent is due friday. Lunch was great, Tom cooks."]) == {"tom"}
    turn = "oh and jess is training for a half marathon in june, i'm more of a sofa person"
    claim = "User is training for a half marathon in June"
    found = other_persons_fact(claim, turn, "Priya", people)
    assert found is not None
    assert found.person == "jess"
    assert other_persons_fact(claim, turn, "Priya") is None  # "jess" alone is just a word
    # a name given as "my <person> <Name>" anywhere names them, a possessive too
    best_man = "I'm best man at my brother Callum's wedding in August."
    assert known_people([best_man]) == {"callum"}
    later = "Callum's a firefighter, he's three years older than me"
    found = other_persons_fact("Works as a firefighter", later, people=known_people([best_man]))
    assert found is not None
    assert found.person == "callum"


def test_an_emoji_ends_a_clause() -> None:
    """ "Tolu's mum wants 500 guests ehn 😩 I'm an accountant": the mum's guests, the user's job."""
    turn = "Tolu's mum wants 500 guests ehn 😩 I'm an accountant so this is a headache"
    tolu = frozenset({"tolu"})
    assert other_persons_fact("Works as an accountant", turn, people=tolu) is None
    found = other_persons_fact("Expects 500 guests at the wedding", turn, people=tolu)
    assert found is not None
    assert found.person == "mum"


@pytest.mark.parametrize(
    ("claim", "turn", "person"),
    [
        ("Is allergic to bleach", "one prob, Kamil's allergic to bleach so he cant clean", "kamil"),
        ("Has a dodgy heart", "sue's got a dodgy heart so nothing too remote", "sue"),
    ],
)
def test_a_names_s_that_is_a_verb_makes_the_clause_theirs(
    claim: str, turn: str, person: str
) -> None:
    found = other_persons_fact(claim, turn, people=frozenset({"sue"}))
    assert found is not None
    assert found.person == person


def test_a_names_s_got_opening_a_sentence_is_theirs() -> None:
    """ "Sam's got a student loan, comes out of her pay." is Sam's, though every word opening a
    sentence is capitalised; another "'s" there stays unread ("Work's been crazy")."""
    found = other_persons_fact("The user is repaying a student loan", "Sam's got a student loan.")
    assert found is not None
    assert found.person == "sam"
    assert [c.subject for c in clauses("Work's been crazy lately")] == ["user"]


def test_a_name_alone_before_a_clause_without_a_verb_first_leaves_it_alone() -> None:
    turn = "I live in Lisbon, Portugal, and work remotely."
    assert [c.subject for c in clauses(turn) if "remotely" in c.text] == ["user"]
    assert other_persons_fact("Works remotely", turn) is None


def test_decide_reads_the_names_the_caller_gives() -> None:
    link = _read_as_said("u2", "jess is training for a half marathon")
    turn = "oh and jess is training for a half marathon in june"
    kwargs = _stated_scores()
    cand = Candidate(text="Is training for a half marathon")
    d = decide(cand, link, turn_text=turn, people=frozenset({"jess"}), **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    assert decide(cand, link, turn_text=turn, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]


def test_a_chat_because_ends_a_clause_and_a_known_name_takes_any_s_verb() -> None:
    turn = (
        "i do 12 hr shifts as a paramedic so hes alone a lot, nadia walks him on my long days bc "
        "she works from home (shes an illustrator)"
    )
    people = frozenset({"nadia"})
    subjects = [(c.subject, c.person) for c in clauses(turn, people=people)]
    assert subjects[2:] == [("other", "nadia"), ("other", "nadia"), ("other", "nadia")]
    found = other_persons_fact("You work from home as an illustrator", turn, people=people)
    assert found is not None
    assert (found.person, found.words) == ("nadia", ("work", "home", "illustrator"))
    # the user's own clause is still the user's: "I work from home" after a chat "cos"
    mine = "nadia walks him in the mornings cos i work from home"
    assert other_persons_fact("Works from home", mine, people=people) is None
    # a lower-case word the conversation gave nobody is no name before an "s" word
    assert [c.subject for c in clauses("traffic sucks bc i work late")] == ["user", "user"]


def test_a_preposition_the_user_also_says_does_not_make_the_fact_theirs() -> None:
    turn = "Dana works at the land registry till 5 so I keep the kids until about 6."
    found = other_persons_fact("Works at the land registry until 5", turn)
    assert found is not None
    assert found.person == "dana"
    assert "until" not in found.words


@pytest.mark.parametrize(
    ("claim", "predicates"),
    [
        ("User lives in Lisbon and is a vegan.", ("User lives in Lisbon", "User is a vegan.")),
        ("User lives in Lisbon, is divorced.", ("User lives in Lisbon", "User is divorced.")),
        ("Father is 71 and lives alone in Phoenix",
         ("Father is 71", "Father lives alone in Phoenix")),
        ("Is 78 and lives alone", ("Is 78", "lives alone")),
        # a hedge is not the subject
        ("Probably lives in Lisbon and works at a bank",
         ("Probably lives in Lisbon", "works at a bank")),
        ("Supports Kotoko and doesn't follow English football",
         ("Supports Kotoko", "doesn't follow English football")),
        # a noun phrase after "and" is the verb's object, a relative clause the noun's
        ("Went to Paris and Rome", ("Went to Paris and Rome",)),
        ("Likes cats and dogs", ("Likes cats and dogs",)),
        ("Has a son named Mateo who is turning 7", ("Has a son named Mateo who is turning 7",)),
    ],
)  # fmt: skip
def test_claim_predicates_carry_the_subject(claim: str, predicates: tuple[str, ...]) -> None:
    from mirage_guard.guard.evidence import claim_predicates

    assert claim_predicates(claim) == predicates


def test_a_person_of_mine_and_a_known_name_before_a_base_verb_are_subjects() -> None:
    """ "A colleague of mine suggested a cash-out refinance, as she did one last year" is the
    colleague's; "Zosia have allergy to nuts" (a second-language "have") is Zosia's; a name the
    conversation never gave anyone is no subject before a base verb."""
    colleague = "A colleague of mine suggested a cash-out refinance, as she did one last year."
    assert [(c.subject, c.person) for c in clauses(colleague)] == [("other", "colleague")] * 2
    found = other_persons_fact("The user did a cash-out refinance last year", colleague)
    assert found is not None
    assert found.person == "colleague"
    zosia = "Zosia have allergy to nuts, very serious, she have EpiPen."
    people = frozenset({"zosia"})
    assert [c.subject for c in clauses(zosia, people=people)] == ["other"] * 3
    claim = "Has a serious nut allergy and carries an EpiPen"
    found = other_persons_fact(claim, zosia, None, people)
    assert found is not None
    assert found.person == "zosia"
    assert [c.subject for c in clauses("Leeds have a good tram", people=people)] == ["user"]
    assert [c.subject for c in clauses("A friend suggested it")] == ["user"]


def test_a_name_given_after_my_person_is_who_they_are_not_what_is_said_of_them() -> None:
    """ "it's me, my husband felix and our baby" says who Felix is: "Is married to Felix" is the
    user's fact, not Felix's; what is said of him still is his ("Works as a nurse" / "my wife Jo
    works as a nurse")."""
    turn = "it's me, my husband felix and our baby, she'll be 9 months by then"
    assert other_persons_fact("Is married to Felix", turn) is None
    found = other_persons_fact("Works as a nurse", "my wife Jo works as a nurse")
    assert found is not None
    assert found.person == "jo"


def test_a_clause_that_says_what_there_is_says_it_of_nobody() -> None:
    """ "oh theres a co-op near the canal, my mate jonas volunteers there on wednesdays": the
    volunteering is the mate's; the existential clause's "co-op" does not make it the user's.
    A user clause that says the claim's own verb still does."""
    turn = "oh theres a co-op near the canal, my mate jonas volunteers there on wednesdays."
    fact = other_persons_fact("Volunteers at the bike co-op on Wednesdays", turn)
    assert fact is not None
    assert fact.words == ("volunteers", "wednesdays")
    mine = "there's a co-op near the canal, I volunteer there on wednesdays with my mate jonas"
    assert other_persons_fact("Volunteers at the bike co-op on Wednesdays", mine) is None


def test_a_clause_about_someone_else_that_says_all_of_the_claim_takes_its_people_too() -> None:
    """ "she's a single mum with two kids", said of the sister, says all of "You're a single mum
    with two kids": the claim's own person words ("mum", "kids") do not make it the user's fact
    about them. A claim that only shares a word with such a clause still names its own person."""
    turn = (
        "the annoying thing is my sister keeps asking to borrow money, she's a single mum with two"
        " kids and i hate saying no"
    )
    fact = other_persons_fact("You're a single mum with two kids", turn)
    assert fact is not None
    assert fact.person == "sister"
    assert other_persons_fact("Cooks dinner for her two kids", turn) is None


@pytest.mark.parametrize(
    ("claim", "turn", "person", "words"),
    [
        ("Wife Ngozi is a nurse", "My wife Ngozi is a teacher. I work as a nurse.",
         "Wife Ngozi", ["nurse"]),
        ("Wife is a nurse", "My wife Ngozi is a teacher. I work as a nurse.", "Wife", ["nurse"]),
        ("Brother Tom lives in York", "My brother Tom lives in Leeds and I live in York.",
         "Brother Tom", ["york"]),
        ("Husband plays the cello", "I play the cello on Sundays", "Husband", ["plays", "cello"]),
    ],
)  # fmt: skip
def test_the_users_own_fact_given_to_a_relative_is_found(
    claim: str, turn: str, person: str, words: list[str]
) -> None:
    found = users_fact_given_to(claim, turn)
    assert found is not None
    assert (found.person, list(found.words)) == (person, words)


@pytest.mark.parametrize(
    ("claim", "turn"),
    [
        # the relative's own fact, said of them
        ("Wife Ngozi is a teacher", "My wife Ngozi is a teacher. I work as a nurse."),
        ("Brother Tom lives in Leeds", "My brother Tom lives in Leeds and I live in York."),
        # what "we" do is the relative's too
        ("Husband plays the cello", "We play the cello together on Sundays"),
        # a user clause that names the relative says something of them
        ("Son goes to school in Hove", "I drive my son to school in Hove every morning"),
        # a clause with no subject is no one's in particular ("Born in 1940." after grandma)
        ("Grandma was born in 1940", "grandma is turning 85 not 80. Born in 1940."),
        # the relative's name is who they are, not what is said of them
        ("Partner is named Joel", "i'll send it tonight after joel reads it"),
        # a claim about the user, or about a named person with no relation word: not read
        ("Works as a nurse", "My wife is a teacher. I work as a nurse."),
        ("Ms Tan is a trauma surgeon", "I'm a trauma surgeon at a hospital in Manchester"),
    ],
)  # fmt: skip
def test_the_relatives_own_facts_shared_ones_and_the_users_are_not_found(
    claim: str, turn: str
) -> None:
    assert users_fact_given_to(claim, turn) is None


def test_the_users_own_fact_that_the_scores_read_as_stated_is_generated() -> None:
    """The support model reads "Wife Ngozi is a nurse" as said (the words are there); the turn
    says "nurse" of the user, so the claim is generated and the reason names the wife."""
    link = _read_as_said("u1", "My wife Ngozi is a teacher. I work as a nurse.")
    turn = "My wife Ngozi is a teacher. I work as a nurse."
    kwargs = _stated_scores()
    d = decide(Candidate(text="Wife Ngozi is a nurse"), link, turn_text=turn, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    (own,) = [r for r in d.reasons if r.code is ReasonCode.USERS_OWN_FACT]
    assert own.params == {"turn_id": "u1", "person": "Wife Ngozi", "words": ["nurse"]}
    assert "not of Wife Ngozi" in render_reason(own)
    d = decide(Candidate(text="Wife Ngozi is a teacher"), link, turn_text=turn, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.STATED


def test_a_pet_said_in_a_named_persons_clause_is_their_wish_not_the_users_pet() -> None:
    """ "Has a dog" from "No, but my partner really wants a dog.": the dog is what the claim says,
    and the turn says it of the partner. A pet in a clause about "she" or "they" (a nurse's
    advice "... a nuisance with the cat") may be the user's own: not read."""
    found = other_persons_fact("Has a dog", "No, but my partner really wants a dog.")
    assert found is not None
    assert (found.person, found.words) == ("partner", ("dog",))
    assert other_persons_fact("Wants a dog", "No, but my partner really wants a dog.") is not None
    nurse = (
        "The nurse said to use the drops for a week. She also said not to lift anything heavy "
        "for a fortnight, which will be a nuisance with the cat."
    )
    assert other_persons_fact("The user has a cat", nurse) is None
    # a person the claim names still makes it the user's fact about them
    assert other_persons_fact("Cooks vegan for his girlfriend", "my girlfriend is vegan") is None


TWINS = "my twins Arjun and Meera start year 3 in september, Arjun's fine but Meera gets anxious"
CRICKET = "drawing mostly, she'll draw for hours. Arjun just wants to play cricket"
DINNER = "planning a dinner party saturday for 6 people, one guest is allergic to nuts"


@pytest.mark.parametrize(
    ("claim", "turn", "expected"),
    [
        ("Arjun gets anxious", TWINS, ("meera", ("gets", "anxious"))),
        ("Meera plays cricket", CRICKET, ("arjun", ("plays", "cricket"))),
        # a person by their kind is not read: "my son" may be one of "the kids"
        ("Brother-in-law is allergic to nuts", DINNER, None),
        # said of the claim's person, of "she" (who may be them), or by another word for them
        ("Meera gets anxious", TWINS, None),
        ("Meera draws for hours", CRICKET, None),
        ("Arjun wants to play cricket", CRICKET, None),
        ("Father ran a small print shop", "My dad ran a small print shop and spent Sundays "
         "calling people who owed him money.", None),
        # a claim about the user is other_persons_fact's
        ("Is allergic to nuts", DINNER, None),
    ],
)  # fmt: skip
def test_a_third_persons_fact_given_to_someone_else(
    claim: str, turn: str, expected: tuple[str, tuple[str, ...]] | None
) -> None:
    """ "Arjun gets anxious" from "Arjun's fine but Meera gets anxious": one clause about another
    person the conversation names says every word of the claim after its subject, and no clause
    that names the claim's person says any of them."""
    found = third_persons_fact(claim, turn, people=frozenset({"arjun", "meera"}))
    assert (None if found is None else (found.person, found.words)) == expected


@pytest.mark.parametrize(
    ("turn", "person"),
    [
        (DINNER, "guest"),
        ("the landlord wants the flat back", "landlord"),
        ("one friend is vegan, the other eats everything", "friend"),
    ],
)
def test_a_person_after_an_article_is_a_subject(turn: str, person: str) -> None:
    """ "one guest is allergic to nuts" is the guest's fact, as "my friend is vegan" is the
    friend's: the user's "Is allergic to nuts" is not said (other_persons_fact)."""
    assert any(c.subject == "other" and c.person == person for c in clauses(turn))
    found = other_persons_fact("Is allergic to nuts", DINNER)
    assert found is not None
    assert found.person == "guest"


@pytest.mark.parametrize(
    ("claim", "sentences", "expected"),
    [
        ("Lives in Cardiff", ["I'm a pharmacist at Boots in Cardiff, been there 6 years"],
         ["cardiff"]),
        ("You live in or near Edinburgh", ["I want to book somewhere special in Edinburgh."],
         ["edinburgh"]),
        # said with a word of living there, anywhere the user names it
        ("Lives in Leeds", ["a tapas place in Leeds.", "we're up in Leeds so it's a trip"], []),
        ("Lives in Braga", ["not Porto, I'm staying in Braga"], []),
        ("Lives in Denver", ["Actually we moved to Denver"], []),
        # a name the user never says is the unsaid-names rule's; a name that is not the place's
        ("Lives in Paris", ["I work in Lyon"], []),
        ("Lives in the yellow house next door to Jamal", ["Jamal waved at me"], []),
        ("Lives in an old Victorian conversion", ["it's an old Victorian conversion"], []),
        ("Works in Cardiff", ["I'm a pharmacist at Boots in Cardiff"], []),
    ],
)  # fmt: skip
def test_a_home_the_user_names_only_as_somewhere_else(
    claim: str, sentences: list[str], expected: list[str]
) -> None:
    from mirage_guard.guard.evidence import home_unsaid

    assert home_unsaid(claim, sentences) == expected


def test_a_home_concluded_from_a_workplace_is_inferred() -> None:
    """ "Lives in Cardiff" read as a restatement of "I'm a pharmacist at Boots in Cardiff" is
    inferred when the user never says they live there (the linker's ``home_unsaid``)."""
    turn = "I'm a pharmacist at Boots in Cardiff, been there 6 years"
    link = _read_as_said("u1", turn).model_copy(update={"home_unsaid": ["cardiff"]})
    d = decide(Candidate(text="Lives in Cardiff"), link, turn_text=turn, **_stated_scores())  # type: ignore[arg-type]
    assert d.provenance is Provenance.INFERRED
    (home,) = [r for r in d.reasons if r.code is ReasonCode.HOME_UNSAID]
    assert home.params == {"turn_id": "u1", "places": ["cardiff"]}
    assert "never as where they live" in render_reason(home)
    d = decide(Candidate(text="Lives in Cardiff"), _read_as_said("u1", turn), turn_text=turn,
               **_stated_scores())  # type: ignore[arg-type]  # fmt: skip
    assert d.provenance is Provenance.STATED


def test_the_month_may_against_another_month_is_a_changed_value() -> None:
    """ "Car loan ends in May" / "car loan 180/mo till march": "may" after "in" is the month,
    which the token aligner never calls unsaid (it reads the modal, a stop word)."""
    turn = "car loan 180/mo till march. no cc debt"
    d = decide(Candidate(text="Car loan ends in May"), _read_as_said("u1", turn), turn_text=turn,
               **_stated_scores())  # type: ignore[arg-type]  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    (changed,) = [r for r in d.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed.params == {"turn_id": "u1", "said": "march", "claimed": "may"}
    d = decide(Candidate(text="Car loan ends in March"), _read_as_said("u1", turn),
               turn_text=turn, **_stated_scores())  # type: ignore[arg-type]  # fmt: skip
    assert d.provenance is Provenance.STATED


def test_a_run_on_sentence_goes_on_with_another_subject() -> None:
    """ "Rodrigo doesn't run at all he thinks I'm crazy", typed or dictated without a comma, is two
    clauses: Rodrigo's denial is not the user's. A word that joins them keeps one ("I know he
    thinks I'm crazy")."""
    from mirage_guard.guard.evidence._subject import _run_on, others_clauses

    turn = "Rodrigo doesn't run at all he thinks I'm crazy for waking up at 5 to run"
    assert _run_on(turn) == [
        "Rodrigo doesn't run at all",
        "he thinks I'm crazy for waking up at 5 to run",
    ]
    assert _run_on("I know he thinks I'm crazy") == ["I know he thinks I'm crazy"]
    assert others_clauses(turn) == "Rodrigo doesn't run at all"
    # "my <someone>" and a verb too: the father-in-law's diabetes is not the user's
    lunch = "there's six of us total my father-in-law is diabetic and I was thinking lamb"
    assert _run_on(lunch) == [
        "there's six of us total",
        "my father-in-law is diabetic and I was thinking lamb",
    ]
    found = other_persons_fact("Is diabetic", lunch)
    assert found is not None
    assert found.person == "father-in-law"
    assert _run_on("I think my dad is right") == ["I think my dad is right"]


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Has a cousin in Toronto", "his cousin is in toronto and keeps saying IT jobs are easy",
         ("someone else's cousin", "cousin")),
        ("Older sister lives in Leeds", "Jo's sister lives in Leeds",
         ("someone else's sister", "sister")),
        # the user's own, or a relative the claim does not give the user
        ("Has a cousin in Toronto", "my cousin is in toronto", None),
        ("Has children with two different mothers", "Thabo lives with his mom in Durban", None),
    ],
)  # fmt: skip
def test_a_relative_said_only_as_someone_elses_is_not_the_users(
    claim: str, evidence: str, expected: tuple[str, str] | None
) -> None:
    from mirage_guard.guard.evidence import relative_of_another

    assert relative_of_another(claim, evidence) == expected
