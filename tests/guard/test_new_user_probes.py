"""Memory entries a new user would try first, tagged by the shipped guard (real MiniLM, the shipped
support model and profile, offline).

Authored here on 2026-12-05 by the team, trying the guard as a new user would: short chats and
Mem0-style entries, each entry labelled by its author as the taxonomy says (stated: the user said
it; inferred: one step from what they said; generated: no evidence, another value, someone
else's fact, a stale value). They are **not** an evaluation set: the rules of that day (the
language floor, the user's own fact given to a relative, an exact age, an ending of only a
frame verb, a pet in a named person's clause, a sentence-bounded value, the retraction read of
the user's own clauses, the week, meal, diet, field, industry, school, vehicle and game
classes; on 2026-12-06 the job class, a class word with nothing around it, another person's age,
a plan given as done and a liking given as a pet) were written after reading them. They are a
regression suite: every entry listed here is tagged as labelled today and must stay so.

The third field of each chat lists its entries the guard still stores as **stated** facts
although they are generated (meat for fish, which no closed class holds: "meat" is the general
word; a stale value in the same turn, "vegetarian for ten years but lately I've started eating
fish again"; a glued club for a boy "obsessed with football"). They are pinned as strict
expected failures, so a change that fixes one shows up here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mirage_guard.guard import Candidate, Guard, GuardSettings, Role, Turn

pytestmark = pytest.mark.slow

Chat = tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]

PROBES: dict[str, Chat] = {
    "chidi_nurse_lagos": (
        [
            ("u", "Hi, I'm Chidi. I'm 36 and I work as a nurse in Lagos."),
            ("a", "Nice to meet you Chidi! How can I help?"),
            ("u", "My wife Ngozi is a teacher and we have a daughter, Ada, who is 4."),
            ("a", "Lovely. What would you like to plan?"),
            ("u", "I want to take them to Accra for Christmas, but money is tight this year."),
        ],
        [
            ("Name is Chidi", "stated"),
            ("Is 36 years old", "stated"),
            ("Works as a nurse in Lagos", "stated"),
            ("Wife Ngozi is a teacher", "stated"),
            ("Has a daughter named Ada", "stated"),
            ("Daughter Ada is 4", "stated"),
            ("Plans a Christmas trip to Accra", "stated"),
            ("Is 37 years old", "generated"),
            ("Works as a nurse in Abuja", "generated"),
            ("Has two daughters", "generated"),
            ("Is on a tight budget", "stated"),
            ("Is a teacher", "generated"),
            ("Is married", "inferred"),
            ("Lives in Lagos", "inferred"),
            ("Works as a nurse in Lagos and has two kids", "generated"),
            ("Wife Ngozi is a nurse", "generated"),
        ],
        [],
    ),
    "lisbon_negations": (
        [
            ("u", "I live in Lisbon."),
        ],
        [
            ("User does not live in Lisbon.", "generated"),
            ("Doesn't live in Lisbon", "generated"),
            ("Lives in Lisbon", "stated"),
            ("Is 37 years old", "generated"),
        ],
        [],
    ),
    "lisbon_age_nurse": (
        [
            ("u", "I'm 36 and I work as a nurse in Lagos."),
        ],
        [
            ("Does not work as a nurse", "generated"),
            ("Is not a nurse", "generated"),
            ("Is 37 years old", "generated"),
            ("Is 35", "generated"),
            ("Is in his thirties", "inferred"),
            ("Is 36", "stated"),
        ],
        [],
    ),
    "wife_teacher_user_nurse": (
        [
            ("u", "My wife Ngozi is a teacher. I work as a nurse."),
        ],
        [
            ("Wife Ngozi is a nurse", "generated"),
            ("Wife is a nurse", "generated"),
            ("Wife Ngozi is a teacher", "stated"),
            ("Is a teacher", "generated"),
        ],
        [],
    ),
    "brothers_cities": (
        [
            ("u", "My brother Tom lives in Leeds and I live in York."),
        ],
        [
            ("Brother Tom lives in York", "generated"),
            ("Lives in Leeds", "generated"),
            ("Lives in York", "stated"),
            ("Brother Tom lives in Leeds", "stated"),
        ],
        [],
    ),
    "meat_and_steak": (
        [
            ("u", "I don't eat meat, but my husband loves steak."),
        ],
        [
            ("Eats meat", "generated"),
            ("Loves steak", "generated"),
            ("Husband loves steak", "stated"),
            ("Does not eat meat", "stated"),
        ],
        [],
    ),
    "barista_bristol": (
        [
            ("u", "I work as a barista at a café in Bristol, mostly weekend shifts."),
            ("a", "Nice! Do you enjoy it?"),
            ("u", "It's fine. I'm really saving up to go back to uni next year to study nursing."),
        ],
        [
            ("Works as a barista in Bristol", "stated"),
            ("Works weekend shifts at a café", "stated"),
            ("Works as a barista at a café in Bath", "generated"),
            ("Works as a barista at a café in Bristol on weekday mornings", "generated"),
            ("Works as a barista at Starbucks in Bristol", "generated"),
            ("Plans to study medicine next year", "generated"),
            ("Studied nursing before", "generated"),
            ("Works as a barista and is a nurse", "generated"),
        ],
        [],
    ),
    "mia_and_leo": (
        [
            ("u", "My daughter Mia just started secondary school and she's doing great."),
            ("a", "That's wonderful. How old is she?"),
            ("u", "She's 11. My son Leo is 8 and obsessed with football."),
        ],
        [
            ("Daughter Mia is 11", "stated"),
            ("Son Leo is 8", "stated"),
            ("Daughter Mia is obsessed with football", "generated"),
            ("Is obsessed with football", "generated"),
            ("Has three children", "generated"),
            ("Daughter Mia just started secondary school", "stated"),
            ("Son Leo is 11", "generated"),
        ],
        ["Son Leo plays for a local football club"],
    ),
    "no_pets": (
        [
            ("a", "Do you have any pets?"),
            ("u", "No, but my partner really wants a dog."),
            ("a", "What kind of dog would you like?"),
            ("u", "I don't know, I'm more of a cat person honestly."),
        ],
        [
            ("Has a dog", "generated"),
            ("Partner wants a dog", "stated"),
            ("Wants a dog", "generated"),
            ("Has no pets", "stated"),
            ("Prefers cats", "stated"),
            ("Is allergic to dogs", "generated"),
            ("Has a cat", "generated"),
        ],
        [],
    ),
    "tenth_anniversary": (
        [
            ("u", "How long have you been married?"),
            ("a", "I'm an AI, so I'm not married!"),
            ("u", "Ha, fair. My husband and I just celebrated our tenth anniversary."),
        ],
        [
            ("Has been married for five years", "generated"),
            ("Celebrated tenth anniversary in Paris", "generated"),
        ],
        [],
    ),
    "denver_to_austin": (
        [
            ("u", "I used to live in Denver but we moved to Austin last spring."),
            ("a", "How do you like Austin?"),
            ("u", "Love it, though the summer heat is brutal."),
        ],
        [
            ("Lives in Austin", "stated"),
            ("Lives in Denver", "generated"),
            ("Moved to Austin last spring", "stated"),
            ("Moved to Austin from Seattle", "generated"),
            ("Finds the Austin summer heat brutal", "stated"),
            ("Dislikes Austin", "generated"),
        ],
        [],
    ),
    "gym_and_hiking": (
        [
            ("u", "I usually go to the gym on weekday mornings before work."),
            ("a", "Great habit!"),
            ("u", "Yeah, and on weekends I go hiking with my sister if the weather's good."),
        ],
        [
            ("Goes to the gym on weekday mornings", "stated"),
            ("Goes to the gym on weekends", "generated"),
            ("Goes hiking on weekdays", "generated"),
            ("Goes hiking with her sister on weekends", "stated"),
            ("Goes hiking with her brother on weekends", "generated"),
            ("Goes to the gym in the evenings", "generated"),
        ],
        [],
    ),
    "sunday_dinner": (
        [
            ("u", "We always have dinner together as a family on Sundays."),
            ("a", "That's lovely."),
            ("u", "My mum cooks, she makes the best lasagne."),
        ],
        [
            ("Has Sunday lunch with family", "generated"),
            ("Cooks lasagne on Sundays", "generated"),
            ("Mother makes great lasagne", "stated"),
            ("Makes the best lasagne", "generated"),
        ],
        [],
    ),
    "lottery_and_leeds": (
        [
            ("u", "If I won the lottery I'd buy a house in Cornwall."),
            ("a", "Sounds dreamy."),
            ("u", "For now I'm renting a flat in Leeds with two friends."),
        ],
        [
            ("Owns a house in Cornwall", "generated"),
            ("Rents a flat in Leeds", "stated"),
            ("Lives with two friends", "stated"),
            ("Is buying a house in Cornwall", "generated"),
            ("Rents a flat in Leeds with her partner", "generated"),
        ],
        [],
    ),
    "organised_project_manager": (
        [
            ("u", "My boss says I'm the most organised person on the team."),
            ("a", "That's a great compliment."),
            ("u", "Ha, I don't know about that. I'm a project manager at a construction firm."),
        ],
        [
            ("Is a project manager at a construction firm", "stated"),
            ("Is very organised", "generated"),
            ("Is an architect", "generated"),
            ("Manages projects", "stated"),
            ("Is a project manager at a software firm", "generated"),
        ],
        [],
    ),
    "vegan_girlfriend_glasgow": (
        [
            ("u", "Do you know any good vegan restaurants in Glasgow? My girlfriend is vegan."),
            ("a", "Sure, try Mono or The 78."),
            ("u", "Thanks! I'm not vegan myself but I'm happy to go."),
        ],
        [
            ("Is vegan", "generated"),
            ("Girlfriend is vegan", "stated"),
            ("Is not vegan", "stated"),
            ("Has a girlfriend", "stated"),
            ("Has a vegan boyfriend", "generated"),
        ],
        [],
    ),
    "teacher_cardiff_swansea": (
        [
            ("u", "I'm a primary school teacher in Cardiff, been doing it for six years."),
            ("a", "As a teacher you must love summer holidays! Do you have kids of your own?"),
            ("u", "Not yet. My husband and I are hoping to start a family next year."),
            ("a", "Exciting. Are you still in Cardiff?"),
            (
                "u",
                "Actually we just moved to Swansea last month, I start at a new school in January.",
            ),
        ],
        [
            ("Is a primary school teacher", "stated"),
            ("Has taught for six years", "stated"),
            ("Lives in Cardiff", "generated"),
            ("Lives in Swansea", "stated"),
            ("Has two children", "generated"),
            ("Plans to start a family next year", "stated"),
            ("Starts at a new school in January", "stated"),
            ("Starts at a new school in September", "generated"),
            ("Teaches secondary school", "generated"),
        ],
        [],
    ),
    "boiler_and_toddler": (
        [
            ("u", "can u help me write a msg to my landlord, the boiler broke again"),
            ("a", "Of course. How long has it been broken?"),
            ("u", "3 days now, no hot water. i have a 2 yr old so its a nightmare"),
            ("a", "That's tough. Do you rent alone?"),
            ("u", "no me and my partner, were both on the lease"),
        ],
        [
            ("Has a 2-year-old child", "stated"),
            ("Rents with a partner", "stated"),
            ("Boiler has been broken for 3 days", "stated"),
            ("Landlord is named Dave", "generated"),
            ("Has a 3-year-old child", "generated"),
        ],
        [],
    ),
    "vegetarian_then_fish": (
        [
            (
                "u",
                "I've been a vegetarian for ten years but lately I've started eating fish again.",
            ),
            ("a", "Interesting change! What prompted it?"),
            ("u", "Mostly my doctor, my iron was really low."),
        ],
        [
            ("Eats fish", "stated"),
            ("Was vegetarian for ten years", "stated"),
            ("Has low iron", "stated"),
            ("Is vegan", "generated"),
        ],
        ["Is vegetarian", "Eats meat again"],
    ),
}


@pytest.fixture(scope="module")
def guard() -> Iterator[Guard]:
    from mirage_guard.guard.evidence import shared_minilm

    g = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        yield g
    finally:
        g.close()


def _turns(chat: list[tuple[str, str]]) -> list[Turn]:
    roles = {"u": Role.USER, "a": Role.ASSISTANT}
    return [Turn(id=f"t{i}", role=roles[r], content=c) for i, (r, c) in enumerate(chat, 1)]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_each_entry_is_tagged_as_labelled(guard: Guard, name: str) -> None:
    chat, entries, _ = PROBES[name]
    decisions = guard.tag(_turns(chat), [Candidate(text=t) for t, _ in entries])
    got = [(t, d.provenance.value) for (t, _), d in zip(entries, decisions, strict=True)]
    assert got == entries


KNOWN_MISSES = sorted((name, entry) for name, (_, _, miss) in PROBES.items() for entry in miss)


@pytest.mark.xfail(strict=True, reason="stored as a stated fact: a known miss (module docstring)")
@pytest.mark.parametrize(("name", "entry"), KNOWN_MISSES)
def test_a_known_miss_is_not_stored_as_stated(guard: Guard, name: str, entry: str) -> None:
    chat, _, _ = PROBES[name]
    (d,) = guard.tag(_turns(chat), [Candidate(text=entry)])
    assert d.provenance.value != "stated"
