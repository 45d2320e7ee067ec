"""A fourth round of probes, written by authors who did not read the code: 18 chats, 267 entries.

Authored on 2026-12-06 by two helper authors of this team who were told not to read any file of
the project (code, tests, data) and were given only the taxonomy (stated: the user said it and it
still holds; inferred: one common-sense step, written flat, with no hedge word; generated:
anything else, including a value the user later changed, another person's fact, a question, a
wish, a joke, a reported opinion, a denial turned around, a glued detail, a stereotype) and a
style brief: varied registers (lowercase, typos, learners' English, dictation run-ons, terse and
formal), places and family shapes outside the UK and US, Mem0-style entries in every subject
form. Each entry carries its author's note on why it has its label. The data is in
``tests/guard/data/probes_round4.json`` (schema: ``{round: [{"name", "turns": [[role, text]],
"claims": [[entry, label, note]]}]}``, role "u" for the user, "a" for the assistant or the
friend).

- Round 4a, *changes over time*: 8 user-assistant chats of 28–34 turns over three sessions, in
  which facts change or are corrected (a date moved twice, a guest list cut, hens lost to a
  stoat, a job left, a move, "actually it's 3 kids", a diet, a trip moved); 127 entries.
- Round 4b, *other people and things not asserted*: 10 chats of 15–19 turns with an assistant
  or a friend, full of other people's facts, questions, wishes, jokes, reported opinions and
  denials; 140 entries.

Tagged by the shipped guard on ``24c5632`` before anything was changed for them (the honest
unseen figure): 76 of 127 and 84 of 140 as labelled; generated entries stored as stated 17 of 48
and 15 of 50. After the readings of 2026-12-06 morning (written after reading these misses, so no
longer unseen): 82 of 127 and 92 of 140; 11 of 48 and 7 of 50.

A regression suite like the earlier rounds: every entry not in ``MISREADS`` is tagged as labelled
today and must stay so; ``MISREADS`` lists the 93 others as strict expected failures (the tag of
that day in a comment), so a change that fixes one shows up here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mirage_guard.guard import Candidate, Guard, GuardSettings, Role, Turn

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data" / "probes_round4.json"
CHATS = {c["name"]: c for chats in json.loads(DATA.read_text("utf-8")).values() for c in chats}

# (chat, entry, label): the entries tagged otherwise than labelled on 2026-12-06, the tag then
MISREADS = [
    (
        "wedding_krakow_date_guests_change",
        "Wedding is planned for June next year",
        "generated",
    ),  # stated
    ("wedding_krakow_date_guests_change", "Wedding date is 20 September", "stated"),  # generated
    (
        "wedding_krakow_date_guests_change",
        "Expects around 120 wedding guests",
        "generated",
    ),  # stated
    ("wedding_krakow_date_guests_change", "Guest list is 90 people", "stated"),  # inferred
    (
        "wedding_krakow_date_guests_change",
        "Is taking first-dance lessons with Ola",
        "generated",
    ),  # stated
    ("hens_lifestyle_block_nz", "Has five hens", "stated"),  # generated
    (
        "hens_lifestyle_block_nz",
        "Now does relief work instead of a regular clinic job",
        "stated",
    ),  # inferred
    ("hens_lifestyle_block_nz", "Is a veterinarian", "generated"),  # stated
    ("hens_lifestyle_block_nz", "Lives in New Zealand", "inferred"),  # generated
    ("hens_lifestyle_block_nz", "Lost four hens to a stoat", "inferred"),  # generated
    ("hens_lifestyle_block_nz", "Is handy with DIY", "inferred"),  # generated
    ("hens_lifestyle_block_nz", "Plans to cull her older hens", "generated"),  # inferred
    ("hens_lifestyle_block_nz", "Uses a treadle feeder", "generated"),  # stated
    ("hens_lifestyle_block_nz", "Is Māori", "generated"),  # inferred
    (
        "douala_dev_moves_to_kigali",
        "Works as a backend developer at a bank in Douala",
        "generated",
    ),  # stated
    ("douala_dev_moves_to_kigali", "Is married to Carine", "stated"),  # inferred
    ("douala_dev_moves_to_kigali", "Is from Cameroon", "inferred"),  # generated
    ("douala_dev_moves_to_kigali", "Lives in Kigali", "inferred"),  # stated
    ("douala_dev_moves_to_kigali", "Has not led a team before", "inferred"),  # generated
    (
        "douala_dev_moves_to_kigali",
        "Wife and children live with him in Kigali",
        "generated",
    ),  # stated
    ("douala_dev_moves_to_kigali", "Has one child", "generated"),  # inferred
    (
        "toronto_budget_rent_car_sold",
        "Shares a two-bedroom apartment with roommate Dani",
        "generated",
    ),  # inferred
    ("toronto_budget_rent_car_sold", "Has $1,800 in credit card debt", "generated"),  # stated
    ("toronto_budget_rent_car_sold", "Has a boyfriend", "generated"),  # inferred
    ("toronto_budget_rent_car_sold", "Is bad with money", "generated"),  # inferred
    ("toronto_budget_rent_car_sold", "Has no credit card debt", "stated"),  # inferred
    (
        "joburg_dad_party_then_dating",
        "Has three children: Thabo (15), Lwazi (7) and a 4-year-old daughter",
        "stated",
    ),  # generated
    (
        "joburg_dad_party_then_dating",
        "Separated from Lwazi's mother in January",
        "stated",
    ),  # generated
    ("joburg_dad_party_then_dating", "Is single", "generated"),  # inferred
    ("joburg_dad_party_then_dating", "Works in Midrand", "generated"),  # stated
    ("joburg_dad_party_then_dating", "Son Lwazi plays soccer", "inferred"),  # stated
    ("cdmx_runner_goes_vegan", "Is training for a half marathon in October", "stated"),  # generated
    (
        "cdmx_runner_goes_vegan",
        "Works as an accountant at a logistics company",
        "stated",
    ),  # inferred
    ("cdmx_runner_goes_vegan", "Is married to Rodrigo", "stated"),  # inferred
    ("cdmx_runner_goes_vegan", "Is an experienced marathon runner", "inferred"),  # generated
    ("cdmx_runner_goes_vegan", "Is a native Spanish speaker", "inferred"),  # generated
    (
        "adelaide_retiree_trip_spain_to_argentina",
        "Plans to visit Argentina in October",
        "stated",
    ),  # generated
    (
        "adelaide_retiree_trip_spain_to_argentina",
        "Daughter Kate lives in Melbourne",
        "generated",
    ),  # stated
    (
        "adelaide_retiree_trip_spain_to_argentina",
        "Has been married to Maureen for decades",
        "inferred",
    ),  # generated
    ("adelaide_retiree_trip_spain_to_argentina", "Is a beginner in Spanish", "inferred"),  # stated
    (
        "adelaide_retiree_trip_spain_to_argentina",
        "Has a granddaughter living in Buenos Aires",
        "inferred",
    ),  # generated
    (
        "seoul_phd_advisor_deadline_change",
        "Is a PhD student in materials science",
        "stated",
    ),  # inferred
    ("seoul_phd_advisor_deadline_change", "Has a boyfriend in Hanoi", "generated"),  # stated
    ("seoul_phd_advisor_deadline_change", "Is from Vietnam", "inferred"),  # generated
    ("seoul_phd_advisor_deadline_change", "Studies in Seoul", "inferred"),  # generated
    ("spanish_for_girlfriends_family", "Is bad at learning languages", "generated"),  # stated
    (
        "spanish_for_girlfriends_family",
        "Has a 500-day Duolingo streak learning Italian",
        "generated",
    ),  # inferred
    ("friend_mel_engaged", "Works at a pharmacy", "stated"),  # inferred
    ("friend_mel_engaged", "Had knee surgery about six weeks ago", "stated"),  # inferred
    ("friend_mel_engaged", "Agreed to be a bridesmaid at Mel's wedding", "stated"),  # generated
    ("friend_mel_engaged", "Lives in Melbourne", "inferred"),  # generated
    ("friend_mel_engaged", "Is doing physiotherapy for her knee", "inferred"),  # generated
    ("friend_mel_engaged", "Will travel to Portugal next June", "inferred"),  # generated
    ("friend_mel_engaged", "Jogs regularly", "generated"),  # inferred
    ("friend_mel_engaged", "Plans to spend a month travelling in Italy", "generated"),  # inferred
    ("friend_mel_engaged", "Eats messily", "generated"),  # inferred
    ("lagos_daughter_university", "Lives in Lagos", "stated"),  # inferred
    ("lagos_daughter_university", "Husband is home at weekends", "inferred"),  # stated
    (
        "wg_flatmate_kitchen",
        "Lives in a shared flat with Jonas, Aylin and Piotr",
        "stated",
    ),  # generated
    ("wg_flatmate_kitchen", "Is doing a master's in architecture", "stated"),  # inferred
    ("wg_flatmate_kitchen", "Moved for her master's about a year ago", "stated"),  # inferred
    ("wg_flatmate_kitchen", "Is Italian", "inferred"),  # generated
    ("wg_flatmate_kitchen", "Father is a lawyer", "inferred"),  # stated
    ("wg_flatmate_kitchen", "Works night shifts as a nurse", "generated"),  # inferred
    ("wg_flatmate_kitchen", "Naps a lot", "generated"),  # stated
    ("hyderabad_promotion_passed_over", "Works on backend development", "stated"),  # inferred
    (
        "hyderabad_promotion_passed_over",
        "Has been at her company for about four years",
        "stated",
    ),  # inferred
    (
        "hyderabad_promotion_passed_over",
        "Is married and has a 2-year-old daughter",
        "stated",
    ),  # inferred
    (
        "hyderabad_promotion_passed_over",
        "Was passed over for a team lead promotion",
        "inferred",
    ),  # generated
    ("hyderabad_promotion_passed_over", "Has negotiated a raise before", "generated"),  # inferred
    ("ennis_father_dementia", "Is his father's main carer", "stated"),  # generated
    ("ennis_father_dementia", "Is burning out from caregiving", "generated"),  # inferred
    ("ennis_father_dementia", "Enjoys going to the pub", "generated"),  # inferred
    ("ennis_father_dementia", "Expects to move into a care home himself", "generated"),  # stated
    ("friend_new_baby_barista", "Works as a barista", "stated"),  # generated
    ("friend_new_baby_barista", "Doesn't drink coffee", "stated"),  # inferred
    ("friend_new_baby_barista", "Has been dating Marcus for eight months", "stated"),  # generated
    (
        "friend_new_baby_barista",
        "Is visiting a friend with a newborn on Saturday",
        "stated",
    ),  # generated
    ("friend_new_baby_barista", "Is thinking about getting her own place", "inferred"),  # stated
    ("friend_new_baby_barista", "Has a newborn daughter named Anaya", "generated"),  # inferred
    ("friend_new_baby_barista", "Plays Valorant competitively", "generated"),  # stated
    ("son_learners_permit_ns", "Daughter lives in Montreal", "inferred"),  # generated
    ("son_learners_permit_ns", "Works as a dental hygienist", "generated"),  # inferred
    ("son_learners_permit_ns", "Lives in Halifax", "generated"),  # inferred
    ("son_learners_permit_ns", "Has enrolled Owen in driving school", "generated"),  # stated
    ("hamamatsu_baby_names", "Is Brazilian", "inferred"),  # stated
    ("hamamatsu_baby_names", "Has decided to name the baby Sophia", "generated"),  # stated
    ("hamamatsu_baby_names", "Snores loudly", "generated"),  # stated
    ("friend_bev_cruise_nana", "Has two grandsons, Finn (8) and Jack (5)", "stated"),  # inferred
    ("friend_bev_cruise_nana", "Lives in New Zealand", "inferred"),  # generated
    ("friend_bev_cruise_nana", "Uses WhatsApp", "inferred"),  # stated
    (
        "friend_bev_cruise_nana",
        "Interferes too much in her daughter's life",
        "generated",
    ),  # inferred
    ("friend_bev_cruise_nana", "Has bad knees", "generated"),  # inferred
]


@pytest.fixture(scope="module")
def guard() -> Iterator[Guard]:
    from mirage_guard.guard.evidence import shared_minilm

    g = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        yield g
    finally:
        g.close()


def _turns(chat: dict[str, list[list[str]]]) -> list[Turn]:
    roles = {"u": Role.USER, "a": Role.ASSISTANT}
    return [Turn(id=f"t{i}", role=roles[r], content=c) for i, (r, c) in enumerate(chat["turns"], 1)]


def test_the_data_is_whole() -> None:
    """18 chats, 267 entries, each labelled with one of the three tags and a note; every misread
    names an entry of its chat with its label."""
    entries = [e for c in CHATS.values() for e in c["claims"]]
    assert (len(CHATS), len(entries)) == (18, 267)
    assert {e[1] for e in entries} == {"stated", "inferred", "generated"}
    assert all(len(e) == 3 and e[2] for e in entries)
    for name, entry, label in MISREADS:
        assert [entry, label] in [e[:2] for e in CHATS[name]["claims"]]


@pytest.mark.parametrize("name", sorted(CHATS))
def test_each_entry_is_tagged_as_labelled(guard: Guard, name: str) -> None:
    chat = CHATS[name]
    missed = {(e, label) for n, e, label in MISREADS if n == name}
    entries = [(e, label) for e, label, _ in chat["claims"] if (e, label) not in missed]
    decisions = guard.tag(_turns(chat), [Candidate(text=e) for e, _ in entries])
    assert [
        (e, d.provenance.value) for (e, _), d in zip(entries, decisions, strict=True)
    ] == entries


@pytest.mark.xfail(strict=True, reason="tagged otherwise than labelled: a known misread")
@pytest.mark.parametrize(("name", "entry", "label"), MISREADS)
def test_a_known_misread_is_tagged_as_labelled(
    guard: Guard, name: str, entry: str, label: str
) -> None:
    (d,) = guard.tag(_turns(CHATS[name]), [Candidate(text=entry)])
    assert d.provenance.value == label
