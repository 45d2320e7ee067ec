"""Probes written by authors who did not read the code: three rounds, 56 chats, 801 entries.

Authored on 2026-12-06 by helper authors of this team who were told not to read any file of the
project (code, tests, data) and were given only the taxonomy (stated: the user said it and it
still holds; inferred: one common-sense step, written flat, with no hedge word; generated:
anything else, including a value the user later changed, another person's fact, a question, a
wish, a joke, a reported opinion, a denial turned around, a glued detail, a stereotype) and a
style brief: varied registers (lowercase, typos, learners' English, dictation run-ons, terse and
formal), places and family shapes outside the UK and US, Mem0-style entries in every subject
form. Each entry carries its author's note on why it has its label. The data is in
``tests/guard/data/probes_round4.json``, ``probes_round5.json`` and ``probes_round6.json``
(schema: ``{round: [{"name", "turns": [[role, text]], "claims": [[entry, label, note]]}]}``,
role "u" for the user, "a" for the assistant or the friend; a later session is marked in the
text, "[3 weeks later]").

- 4a, *changes over time*: 8 user-assistant chats of 28–34 turns over three sessions; 127 entries.
- 4b, *other people and things not asserted*: 10 chats of 15–19 turns; 140 entries.
- 5a, *life admin over sessions*: 8 chats of 22–30 turns over two or three sessions (rent, a
  knee, a school place, a bathroom, a used car, a job search, a trip, a father with dementia);
  128 entries.
- 5b, *short chats, dense entries*: 14 chats of 7–9 turns, many facts per turn; 168 entries.
- 6a, *hobbies, health and food with an assistant*: 8 chats of 16–18 turns; 120 entries.
- 6b, *texts between two friends*: 8 chats of 17–21 turns, the user's facts said in passing;
  118 entries. Both written after every reading of 2026-12-06.

Tagged by the shipped guard before anything was changed for each round (the honest unseen
figure), and after (benchmark/GUARD_MEASUREMENTS.md, "Probes by authors who did not read the code"):

| round | commit before | before | after |
|---|---|---|---|
| 4a | ``24c5632`` | 76 of 127 | 82 |
| 4b | ``24c5632`` | 84 of 140 | 93 |
| 5a | ``f0d68d4``, ``24c5632`` and ``5c1b99b`` | 75 of 128 | 75 (nothing changed for it) |
| 5b | ``5c1b99b`` (``f0d68d4``: 101) | 103 of 168 | 111 |
| 6a | ``f0d68d4`` and ``5f517cc`` | 72 of 120 | 72 (nothing changed for it) |
| 6b | ``f0d68d4`` and ``5f517cc`` | 65 of 118 | 65 (nothing changed for it) |

A regression suite like the earlier rounds: every entry not in ``MISREADS`` is tagged as labelled
today and must stay so; ``MISREADS`` lists the 303 others as strict expected failures (the tag
of that day in a comment), so a change that fixes one shows up here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirage_guard.guard import Candidate, Guard
from tests.guard.conftest import chat_turns

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"
ROUNDS = {
    name: json.loads((DATA / f"probes_round{n}.json").read_text("utf-8"))[name]
    for n, names in ((4, ("round_4a_changes_over_time", "round_4b_other_people")),
                     (5, ("round_5a_life_admin_over_sessions", "round_5b_short_dense_chats")),
                     (6, ("round_6a_hobbies_health_food", "round_6b_texts_between_friends")))
    for name in names
}  # fmt: skip
CHATS = {c["name"]: c for chats in ROUNDS.values() for c in chats}

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
    (
        "lagos_freelancer_rent_budget",
        "Pays younger brother's school fees at UNILAG",
        "generated",
    ),  # stated
    ("lagos_freelancer_rent_budget", "Has at least two siblings", "inferred"),  # generated
    ("lagos_freelancer_rent_budget", "Wants to buy a car", "generated"),  # inferred
    (
        "lagos_freelancer_rent_budget",
        "Keeps rent savings in a locked PiggyVest account",
        "generated",
    ),  # stated
    ("lagos_freelancer_rent_budget", "Has a client who still owes ₦150k", "generated"),  # stated
    (
        "lagos_freelancer_rent_budget",
        "Pays rent as one lump sum each year",
        "inferred",
    ),  # generated
    ("lagos_freelancer_rent_budget", "Plans to buy land in the village", "generated"),  # stated
    (
        "hamburg_bus_driver_knee",
        "Injured his knee playing football with his son",
        "inferred",
    ),  # stated
    ("hamburg_bus_driver_knee", "Is on sick leave from work", "generated"),  # inferred
    ("hamburg_bus_driver_knee", "Had arthroscopic surgery on his knee", "generated"),  # stated
    ("hamburg_bus_driver_knee", "Works shifts", "generated"),  # inferred
    (
        "brisbane_prep_enrolment_mum",
        "Has three children: Lachlan, Ava and Tom",
        "stated",
    ),  # generated
    (
        "brisbane_prep_enrolment_mum",
        "Lachlan will start prep at St Joseph's Catholic school",
        "generated",
    ),  # inferred
    (
        "brisbane_prep_enrolment_mum",
        "Thinks Lachlan isn't ready for prep and should be held back a year",
        "generated",
    ),  # stated
    (
        "brisbane_prep_enrolment_mum",
        "Partner Dave works FIFO at a mine in the Bowen Basin",
        "generated",
    ),  # stated
    ("brisbane_prep_enrolment_mum", "Lives in Brisbane", "inferred"),  # generated
    ("brisbane_prep_enrolment_mum", "Ava will be in Year 5 next year", "inferred"),  # stated
    ("brisbane_prep_enrolment_mum", "No longer needs before-school care", "generated"),  # inferred
    (
        "brisbane_prep_enrolment_mum",
        "Youngest child Tom starts daycare three days a week in February",
        "stated",
    ),  # inferred
    ("brisbane_prep_enrolment_mum", "Tom is under two years old", "inferred"),  # stated
    (
        "krakow_bathroom_renovation",
        "Bathroom renovation will cost 42,000 zł with a firm",
        "stated",
    ),  # generated
    ("krakow_bathroom_renovation", "Tomek's parents live in Wieliczka", "inferred"),  # generated
    ("krakow_bathroom_renovation", "Has no children", "inferred"),  # stated
    (
        "krakow_bathroom_renovation",
        "Will hold back 10% of the final payment until the work is checked",
        "generated",
    ),  # inferred
    ("pune_used_car_purchase", "Is married to Sneha", "stated"),  # inferred
    ("pune_used_car_purchase", "Car budget is 5–6 lakh", "generated"),  # stated
    (
        "pune_used_car_purchase",
        "Bought a 2018 Baleno Zeta automatic from Spinny",
        "inferred",
    ),  # stated
    ("pune_used_car_purchase", "Bought a Swift from colleague Akash", "generated"),  # stated
    ("pune_used_car_purchase", "Has a colleague named Akash", "stated"),  # generated
    ("pune_used_car_purchase", "Prefers automatic cars", "generated"),  # stated
    (
        "pune_used_car_purchase",
        "Paid 4 lakh in cash and took a 3-year HDFC loan for the rest",
        "stated",
    ),  # inferred
    ("pune_used_car_purchase", "Father owns a diesel Innova", "generated"),  # stated
    ("pune_used_car_purchase", "Recently got a pay raise", "inferred"),  # generated
    (
        "pune_used_car_purchase",
        "Parks in an open, uncovered spot in his housing society",
        "stated",
    ),  # inferred
    ("cape_town_retrenched_accountant", "Has advanced Excel skills", "generated"),  # inferred
    (
        "cape_town_retrenched_accountant",
        "Is considering relocating to Johannesburg",
        "generated",
    ),  # inferred
    (
        "cape_town_retrenched_accountant",
        "Has a 7-year-old daughter in Grade 2",
        "stated",
    ),  # generated
    (
        "cape_town_retrenched_accountant",
        "Will commute to Stellenbosch three days a week",
        "inferred",
    ),  # generated
    (
        "cape_town_retrenched_accountant",
        "Starts the new job at the beginning of next month",
        "inferred",
    ),  # generated
    (
        "cdmx_family_japan_trip",
        "Lives in Mexico City; husband is Rodrigo and son Emiliano is 10",
        "stated",
    ),  # generated
    (
        "cdmx_family_japan_trip",
        "Is travelling to Japan in April for the cherry blossoms",
        "generated",
    ),  # stated
    (
        "cdmx_family_japan_trip",
        "Sister Fernanda, 28, is coming on the Japan trip",
        "stated",
    ),  # inferred
    ("cdmx_family_japan_trip", "Son Emiliano speaks some Japanese", "generated"),  # stated
    ("cdmx_family_japan_trip", "Son Emiliano is into anime", "inferred"),  # stated
    ("cdmx_family_japan_trip", "Speaks Spanish", "inferred"),  # generated
    ("cdmx_family_japan_trip", "Will fly to Japan from Mexico City", "inferred"),  # generated
    ("dublin_daughter_dad_alzheimers_cork", "Father is a widower", "inferred"),  # stated
    ("dublin_daughter_dad_alzheimers_cork", "Is widowed", "generated"),  # inferred
    (
        "dublin_daughter_dad_alzheimers_cork",
        "Thinks father should move into a nursing home",
        "generated",
    ),  # stated
    ("dublin_daughter_dad_alzheimers_cork", "Receives Carer's Allowance", "generated"),  # inferred
    ("dublin_daughter_dad_alzheimers_cork", "Works at a school", "inferred"),  # generated
    ("dublin_daughter_dad_alzheimers_cork", "Father is Catholic", "inferred"),  # generated
    (
        "dublin_daughter_dad_alzheimers_cork",
        "Father attends a day care centre",
        "generated",
    ),  # stated
    ("gift_wife_40th_porto", "User's wife is turning 40 and wants a kiln", "stated"),  # generated
    ("gift_wife_40th_porto", "Works as a nurse", "stated"),  # inferred
    ("gift_wife_40th_porto", "Wife also works", "inferred"),  # stated
    (
        "valencia_marathon_friend",
        "Runs three times a week, on Tuesdays, Thursdays and Saturdays",
        "stated",
    ),  # generated
    ("valencia_marathon_friend", "Marathon is about 16 weeks away", "inferred"),  # generated
    ("valencia_marathon_friend", "Is following the Hansons marathon plan", "generated"),  # inferred
    ("valencia_marathon_friend", "Finishes work at 5:30", "stated"),  # generated
    (
        "valencia_marathon_friend",
        "Has started running in new Novablast 4 shoes",
        "generated",
    ),  # stated
    ("valencia_marathon_friend", "Ordered ASICS running shoes", "inferred"),  # generated
    ("munich_landlord_email", "Is Vietnamese", "inferred"),  # generated
    ("munich_landlord_email", "Rents their apartment", "inferred"),  # stated
    (
        "munich_landlord_email",
        "Emailed landlord Herr Vogel about the heating being broken for five days",
        "stated",
    ),  # inferred
    (
        "munich_landlord_email",
        "Sent the landlord photos of the bathroom mould last week",
        "generated",
    ),  # stated
    ("munich_landlord_email", "Is a member of the Mieterverein", "generated"),  # inferred
    ("inlaws_sunday_lamb", "Has a nut allergy", "generated"),  # inferred
    ("inlaws_sunday_lamb", "Is making pavlova for dessert", "generated"),  # inferred
    (
        "joburg_sql_interview",
        "Has a data analyst interview at a bank in Johannesburg tomorrow at 10am",
        "stated",
    ),  # generated
    (
        "joburg_sql_interview",
        "Has 5 years of experience in retail analytics",
        "generated",
    ),  # inferred
    ("joburg_sql_interview", "Uses PostgreSQL daily at work", "stated"),  # inferred
    ("joburg_sql_interview", "Is familiar with SQL window functions", "inferred"),  # stated
    ("joburg_sql_interview", "Works at Woolworths", "inferred"),  # generated
    ("joburg_sql_interview", "Has been offered the bank job", "generated"),  # stated
    (
        "joburg_sql_interview",
        "Plans to stay at their current job for stability",
        "generated",
    ),  # inferred
    ("joburg_sql_interview", "Lives in South Africa", "inferred"),  # generated
    ("japan_trip_friend", "Has booked accommodation in Kyoto", "generated"),  # inferred
    ("japan_trip_friend", "Is staying 4 nights in Kyoto", "generated"),  # inferred
    ("japan_trip_friend", "Has a printed Japanese gluten-free card", "generated"),  # inferred
    ("wroclaw_flat_reno", "Has completed the purchase of the flat", "generated"),  # stated
    ("wroclaw_flat_reno", "Will move in after the renovation is finished", "generated"),  # stated
    ("glasgow_greyhound_biscuit", "Lives in Scotland", "inferred"),  # generated
    ("glasgow_greyhound_biscuit", "Has a cat named Mochi", "generated"),  # stated
    ("glasgow_greyhound_biscuit", "Flatmate's cat is called Mochi", "inferred"),  # stated
    (
        "glasgow_greyhound_biscuit",
        "Works from home Monday to Wednesday and from the office Thursday and Friday",
        "stated",
    ),  # generated
    (
        "glasgow_greyhound_biscuit",
        "Is out of the house on Thursdays and Fridays",
        "inferred",
    ),  # generated
    ("gcse_completing_square", "Is predicted a 7 in maths", "generated"),  # stated
    ("gcse_completing_square", "Is in Year 11", "inferred"),  # generated
    ("gcse_completing_square", "Has a maths tutor on Fridays", "stated"),  # generated
    ("gcse_completing_square", "Lives in the UK", "inferred"),  # generated
    ("gcse_completing_square", "Has mastered completing the square", "generated"),  # stated
    (
        "best_man_accra",
        "Brother Kofi is marrying Esi, whom he met at university in Kumasi",
        "stated",
    ),  # generated
    ("best_man_accra", "Studied at university in Kumasi", "generated"),  # inferred
    ("best_man_accra", "Failed his driving test three times", "generated"),  # stated
    ("best_man_accra", "Lives in Manchester", "stated"),  # inferred
    ("best_man_accra", "Plans to fly out to Accra on the 5th", "stated"),  # inferred
    ("best_man_accra", "Speaks Twi", "inferred"),  # stated
    ("best_man_accra", "Has Ghanaian heritage", "inferred"),  # generated
    ("chromebook_for_daughter", "Is comfortable with technology", "generated"),  # inferred
    (
        "chromebook_for_daughter",
        "Bought the Acer Chromebook from Currys for £329",
        "generated",
    ),  # stated
    ("chromebook_for_daughter", "Regretted declining insurance on a TV", "stated"),  # generated
    (
        "chromebook_for_daughter",
        "Daughter is in her last year of primary school",
        "inferred",
    ),  # generated
    ("lucia_amsterdam_job", "Speaks Spanish", "inferred"),  # generated
    ("lucia_amsterdam_job", "Is learning Dutch on Duolingo", "inferred"),  # stated
    ("ontario_candle_side_hustle", "Works as a dental hygienist", "stated"),  # inferred
    ("ontario_candle_side_hustle", "Works as a dentist", "generated"),  # inferred
    ("ontario_candle_side_hustle", "Lives in Ontario", "stated"),  # inferred
    ("ontario_candle_side_hustle", "Is an accountant", "generated"),  # stated
    (
        "ontario_candle_side_hustle",
        "Partner is quitting his job to join the business full time",
        "generated",
    ),  # stated
    ("lagos_10k_training", "Lives in Lagos, Nigeria", "inferred"),  # generated
    ("lagos_10k_training", "Runs about 9 km a week", "inferred"),  # generated
    (
        "lagos_10k_training",
        "Works as an auditor, with a busy season in January and February",
        "stated",
    ),  # generated
    ("lagos_10k_training", "Wife is named Funmi", "stated"),  # generated
    (
        "lagos_10k_training",
        "Funmi is going to run the 5k with him next year",
        "generated",
    ),  # stated
    ("lagos_10k_training", "Goal is to finish the 10k in under an hour", "generated"),  # inferred
    (
        "tampere_rye_sourdough",
        "Is lactose intolerant and avoids all dairy including butter",
        "generated",
    ),  # inferred
    ("tampere_rye_sourdough", "Bakes bread in her bread machine", "generated"),  # stated
    (
        "tampere_rye_sourdough",
        "Thinks bread machines are better than hand baking",
        "generated",
    ),  # stated
    (
        "tampere_rye_sourdough",
        "Keeps her sourdough starter in the oven with the light on",
        "generated",
    ),  # stated
    (
        "tampere_rye_sourdough",
        "Plans to bake a wheat loaf at about 70% hydration",
        "inferred",
    ),  # generated
    ("tampere_rye_sourdough", "Has kept a sourdough starter before", "inferred"),  # stated
    ("melbourne_veggie_patch", "Lost her tomato crop to possums last summer", "inferred"),  # stated
    (
        "melbourne_veggie_patch",
        "Uses chilli-and-garlic spray to deter possums",
        "generated",
    ),  # inferred
    (
        "melbourne_veggie_patch",
        "Grandson Jayden, 8, helps her in the garden on Saturdays",
        "stated",
    ),  # generated
    (
        "melbourne_veggie_patch",
        "Planted about forty garlic cloves bought at a garden centre",
        "generated",
    ),  # stated
    ("melbourne_veggie_patch", "Keeps backyard chickens", "generated"),  # inferred
    ("melbourne_veggie_patch", "Has a backyard", "inferred"),  # stated
    ("curitiba_japanese_learner", "Takes Japanese classes with a teacher", "generated"),  # inferred
    ("curitiba_japanese_learner", "Plans to take the JLPT N4 in December", "generated"),  # stated
    ("curitiba_japanese_learner", "Plans to take the JLPT N5 in December", "stated"),  # inferred
    (
        "curitiba_japanese_learner",
        "Practises speaking Japanese with her boyfriend's grandmother",
        "inferred",
    ),  # stated
    ("curitiba_japanese_learner", "Subscribes to WaniKani", "generated"),  # inferred
    ("curitiba_japanese_learner", "Is a pharmacist", "generated"),  # inferred
    ("curitiba_japanese_learner", "Plans to move to Osaka after the exam", "generated"),  # stated
    ("krakow_cat_kidney", "Miś is a 15-year-old grey British Shorthair", "stated"),  # generated
    ("krakow_cat_kidney", "Miś eats dry renal food", "generated"),  # stated
    ("krakow_cat_kidney", "Owns a labrador named Bruno", "generated"),  # stated
    ("krakow_cat_kidney", "Travels to his parents by car", "inferred"),  # stated
    ("first_guitar_dad", "Is a beginner guitar player", "inferred"),  # stated
    ("first_guitar_dad", "Practises guitar about 20 minutes a night", "stated"),  # generated
    ("first_guitar_dad", "Plays a left-handed guitar", "generated"),  # stated
    ("first_guitar_dad", "Steve's 40th birthday party is on May 31", "stated"),  # generated
    ("first_guitar_dad", "Grew up in Nova Scotia", "inferred"),  # generated
    ("first_guitar_dad", "Played banjo as a child", "generated"),  # stated
    ("first_guitar_dad", "Younger son plays drums in the school band", "generated"),  # stated
    ("penang_family_meal_plan", "Name is Nurul", "stated"),  # generated
    (
        "penang_family_meal_plan",
        "Household eats halal only, no pork and no alcohol",
        "stated",
    ),  # generated
    ("penang_family_meal_plan", "Is Muslim", "inferred"),  # generated
    ("penang_family_meal_plan", "Fasts during Ramadan", "inferred"),  # generated
    ("penang_family_meal_plan", "Lives in Penang", "inferred"),  # generated
    ("penang_family_meal_plan", "Family eats brown rice", "generated"),  # stated
    ("pune_home_to_gym", "Works out at home and has no gym membership", "generated"),  # stated
    ("pune_home_to_gym", "Works in Pune", "inferred"),  # generated
    ("pune_home_to_gym", "Trains Monday, Wednesday and Friday at 7am", "stated"),  # generated
    ("pune_home_to_gym", "Is vegan", "generated"),  # inferred
    ("pune_home_to_gym", "Takes whey protein shakes", "generated"),  # stated
    (
        "pune_home_to_gym",
        "Is currently in physiotherapy for a back injury",
        "generated",
    ),  # inferred
    ("friends_moving_day_nairobi", "Got the keys to a new flat in Kilimani", "stated"),  # generated
    ("friends_moving_day_nairobi", "Is 34 years old", "stated"),  # generated
    ("friends_moving_day_nairobi", "Lives in Nairobi", "inferred"),  # generated
    ("friends_moving_day_nairobi", "Likes music while doing chores", "inferred"),  # generated
    ("friends_moving_day_nairobi", "Has a boyfriend named Brian", "generated"),  # inferred
    ("friends_moving_day_nairobi", "User has back problems", "generated"),  # inferred
    ("friends_football_and_feijoada", "Supports Benfica", "generated"),  # stated
    ("friends_football_and_feijoada", "Works in logistics", "generated"),  # inferred
    (
        "friends_football_and_feijoada",
        "Plans to make feijoada for Sunday lunch using his mother's recipe",
        "stated",
    ),  # inferred
    ("friends_football_and_feijoada", "His sister lives in São Paulo", "inferred"),  # stated
    ("friends_football_and_feijoada", "Is Brazilian", "inferred"),  # generated
    ("friends_football_and_feijoada", "Speaks Portuguese", "inferred"),  # generated
    ("friends_football_and_feijoada", "Has three kids", "generated"),  # stated
    ("friends_bowls_knee_sydney", "Is seeing a physio for a knee problem", "stated"),  # inferred
    (
        "friends_bowls_knee_sydney",
        "Has a granddaughter named Lily who is 4 months old",
        "stated",
    ),  # generated
    ("friends_bowls_knee_sydney", "Moved Thursday coffee with Bev to 11", "stated"),  # generated
    (
        "friends_bowls_knee_sydney",
        "Has a dentist appointment in Parramatta at 9 on Thursday",
        "stated",
    ),  # generated
    ("friends_bowls_knee_sydney", "Likes cappuccino and almond croissants", "inferred"),  # stated
    (
        "friends_bowls_knee_sydney",
        "Has a daughter named Sarah who lives overseas",
        "generated",
    ),  # inferred
    (
        "friends_exam_gokarna_trip",
        "Booking an overnight KSRTC bus for the 14th",
        "stated",
    ),  # generated
    ("friends_exam_gokarna_trip", "Has friends named Rohan and Meera", "stated"),  # inferred
    ("friends_exam_gokarna_trip", "Is based in Bangalore", "inferred"),  # generated
    ("friends_exam_gokarna_trip", "Likes biryani", "inferred"),  # stated
    ("friends_exam_gokarna_trip", "Has a cousin's wedding coming up", "generated"),  # inferred
    ("friends_exam_gokarna_trip", "Did well in his OS exam", "generated"),  # stated
    ("friends_chef_review_karaoke", "Has a dog named Mochi", "stated"),  # inferred
    (
        "friends_chef_review_karaoke",
        "Is going to her friend's karaoke birthday on the 22nd at 8",
        "stated",
    ),  # inferred
    ("friends_chef_review_karaoke", "Her dog barks a lot", "inferred"),  # stated
    ("friends_chef_review_karaoke", "Has a coworker named Jordan", "inferred"),  # generated
    (
        "friends_chef_review_karaoke",
        "Will get to the party on the 22nd after 10pm",
        "generated",
    ),  # inferred
    (
        "friends_marathon_best_man_berlin",
        "Is running the Hamburg marathon on May 31",
        "stated",
    ),  # generated
    (
        "friends_marathon_best_man_berlin",
        "Is aiming for under 3:30 in the marathon",
        "stated",
    ),  # inferred
    ("friends_marathon_best_man_berlin", "Broke up with Lena in March", "stated"),  # generated
    (
        "friends_marathon_best_man_berlin",
        "Has been to 70 flat viewings with no offers",
        "stated",
    ),  # inferred
    (
        "friends_marathon_best_man_berlin",
        "Is best man at his friend's wedding on August 15",
        "inferred",
    ),  # generated
    ("friends_marathon_best_man_berlin", "Has a girlfriend named Lena", "generated"),  # inferred
    ("friends_marathon_best_man_berlin", "Works in Munich", "generated"),  # stated
    ("friends_marathon_best_man_berlin", "Owns a suit", "generated"),  # inferred
    ("friends_teacher_mama_dengue_manila", "Teaches grade 4", "stated"),  # generated
    ("friends_teacher_mama_dengue_manila", "Has 42 students in one section", "stated"),  # generated
    (
        "friends_teacher_mama_dengue_manila",
        "Her mother was hospitalized with dengue and has since been discharged",
        "stated",
    ),  # generated
    (
        "friends_teacher_mama_dengue_manila",
        "Took leave from school to look after her mother",
        "stated",
    ),  # generated
    (
        "friends_teacher_mama_dengue_manila",
        "Has a Christmas program at school on December 18",
        "stated",
    ),  # generated
    ("friends_teacher_mama_dengue_manila", "Lives in Metro Manila", "inferred"),  # generated
    (
        "friends_teacher_mama_dengue_manila",
        "Has an older brother who owns a car",
        "inferred",
    ),  # generated
    ("friends_teacher_mama_dengue_manila", "Likes Toblerone", "inferred"),  # generated
    ("friends_teacher_mama_dengue_manila", "Drinks coffee in the morning", "inferred"),  # generated
    ("friends_cakes_bank_lagos", "Moved from Lekki to Yaba in January", "stated"),  # inferred
    ("friends_cakes_bank_lagos", "Wife's due date is the 12th", "stated"),  # generated
    ("friends_cakes_bank_lagos", "Is Nigerian", "inferred"),  # generated
    ("friends_cakes_bank_lagos", "Lives in Lekki", "generated"),  # inferred
    ("friends_cakes_bank_lagos", "Spends 40k a week on diesel", "generated"),  # stated
    ("friends_cakes_bank_lagos", "Is expecting his first child", "generated"),  # inferred
]


def test_the_data_is_whole() -> None:
    """56 chats with 801 entries in six rounds, each labelled with one of the three tags and a
    note; chat names are unique; every misread names an entry of its chat with its label."""
    sizes = {name: sum(len(c["claims"]) for c in chats) for name, chats in ROUNDS.items()}
    assert list(sizes.values()) == [127, 140, 128, 168, 120, 118]
    assert len(CHATS) == sum(len(chats) for chats in ROUNDS.values()) == 56
    entries = [e for c in CHATS.values() for e in c["claims"]]
    assert {e[1] for e in entries} == {"stated", "inferred", "generated"}
    assert all(len(e) == 3 and e[2] for e in entries)
    for name, entry, label in MISREADS:
        assert [entry, label] in [e[:2] for e in CHATS[name]["claims"]]


@pytest.mark.parametrize("name", sorted(CHATS))
def test_each_entry_is_tagged_as_labelled(shipped_guard: Guard, name: str) -> None:
    chat = CHATS[name]
    missed = {(e, label) for n, e, label in MISREADS if n == name}
    entries = [(e, label) for e, label, _ in chat["claims"] if (e, label) not in missed]
    decisions = shipped_guard.tag(
        chat_turns(chat["turns"]), [Candidate(text=e) for e, _ in entries]
    )
    assert [
        (e, d.provenance.value) for (e, _), d in zip(entries, decisions, strict=True)
    ] == entries


@pytest.mark.xfail(strict=True, reason="tagged otherwise than labelled: a known misread")
@pytest.mark.parametrize(("name", "entry", "label"), MISREADS)
def test_a_known_misread_is_tagged_as_labelled(
    shipped_guard: Guard, name: str, entry: str, label: str
) -> None:
    (d,) = shipped_guard.tag(chat_turns(CHATS[name]["turns"]), [Candidate(text=entry)])
    assert d.provenance.value == label
