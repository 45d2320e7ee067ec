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
although they are generated (12). Of the first round: meat for fish, which no closed class
holds ("meat" is the general word); a stale value in the same turn ("vegetarian for ten years
but lately I've started eating fish again"); a glued club for a boy "obsessed with football".
Of the second: a workplace of the boyfriend's given as the user's answer to "Where does he
work?"; a guest's allergy given to the brother-in-law (no relative by kind is read against
another). Of the third: a mortgage for the rent; the husband's wish and a daughter's given a
wish of the other's; a colleague's application ("Tom from finance applied for her job too");
a walk denied only by "not really" to the assistant's question; a sister's "can't swim yet"
given to a brother the conversation never names inside a sentence ("Noah's 9"); a filter the
vet suggested, bought (a glued "experienced" is read since 2026-12-06 morning).
``OTHER_MISREADS`` lists the second and third rounds' other entries tagged otherwise than
labelled (37: stated facts taken back by a denial of something else, inferences read as said,
fabrications read as conclusions). Both are pinned as strict expected failures, so a change
that fixes one shows up here.
"""

from __future__ import annotations

import pytest

from mirage_guard.guard import Candidate, Guard
from tests.guard.conftest import chat_turns

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
    # a second round, authored on 2026-12-06 after the job class, the class word alone, another
    # person's age, the plan given as done and the liking given as a pet, in other styles (a
    # correction of a count, an assistant's question answered, twins, a breed, night shifts);
    # tagged before the readings after it were written: 82 of 119 entries as labelled, 8 of the
    # 47 generated ones stored as stated (the same at 779a726)
    "ines_remote_job": (
        [
            (
                "u",
                "morning! quick one, I start a new remote job on the 14th, product "
                "designer at a fintech in Porto",
            ),
            ("a", "Congrats! Will you be working from home in Porto?"),
            ("u", "not Porto, I'm staying in Braga, the company's in Porto but it's fully remote"),
            ("a", "Got it. Anything you need help with?"),
            (
                "u",
                "yeah I need a desk setup, my old one was at the agency and I had to give it back",
            ),
        ],
        [
            ("Starts a new remote job on the 14th", "stated"),
            ("Is a product designer", "stated"),
            ("Lives in Braga", "stated"),
            ("Lives in Porto", "generated"),
            ("Starts the new job on the 4th", "generated"),
            ("Previously worked at an agency", "inferred"),
            ("Needs a desk setup", "stated"),
            ("Will commute to Porto", "generated"),
            ("Works from home", "inferred"),
        ],
        [],
    ),
    "tomas_marathon_knee": (
        [
            ("u", "I signed up for the Valencia marathon in December, my first one"),
            ("a", "Exciting! How's training going?"),
            (
                "u",
                "slowly, my left knee has been acting up since October so I've cut "
                "back to 30 km a week",
            ),
            ("a", "Have you seen a physio?"),
            ("u", "yeah, twice. she thinks it's my IT band, not the knee itself"),
        ],
        [
            ("Signed up for the Valencia marathon in December", "stated"),
            ("Valencia will be his first marathon", "stated"),
            ("Runs 30 km a week", "stated"),
            ("Runs 50 km a week", "generated"),
            ("Has a problem with his right knee", "generated"),
            ("Ran the Berlin marathon last year", "generated"),
            ("Knee pain started in September", "generated"),
            # a misread until 2026-12-06: "not the knee itself" denied the knee pain
            ("Physio thinks the knee pain comes from the IT band", "stated"),
        ],
        [],
    ),
    "aisha_mum_visit": (
        [
            ("u", "my mum's flying in from Karachi next Friday and staying three weeks"),
            ("a", "How lovely! Will she be staying with you in London?"),
            (
                "u",
                "yes, in our spare room. problem is she can't do stairs well and we're "
                "on the second floor",
            ),
            ("a", "Is there a lift in your building?"),
            ("u", "no lift, it's an old Victorian conversion"),
        ],
        [
            ("Mother is visiting for three weeks", "stated"),
            ("Mother arrives next Friday", "stated"),
            ("Lives on the second floor", "stated"),
            ("Building has a lift", "generated"),
            ("Lives in an old Victorian conversion", "stated"),
            ("Has a spare room", "stated"),
            ("Mother uses a wheelchair", "generated"),
            ("Mother is staying for two weeks", "generated"),
            ("Lives in a flat", "inferred"),
        ],
        [],
    ),
    "ravi_twins": (
        [
            (
                "u",
                "my twins Arjun and Meera start year 3 in september, Arjun's fine but "
                "Meera gets anxious",
            ),
            ("a", "That's common. What helps her?"),
            ("u", "drawing mostly, she'll draw for hours. Arjun just wants to play cricket"),
            ("a", "Sounds like they have different temperaments!"),
            ("u", "totally. my wife Priya works late on Tuesdays so I do pickup that day"),
        ],
        [
            ("Has twins named Arjun and Meera", "stated"),
            ("Twins start year 3 in September", "stated"),
            ("Meera gets anxious", "stated"),
            ("Arjun gets anxious", "generated"),
            ("Meera draws for hours", "stated"),
            ("Arjun wants to play cricket", "stated"),
            ("Meera plays cricket", "generated"),
            ("Wife Priya works late on Tuesdays", "stated"),
            ("Does school pickup on Tuesdays", "stated"),
            ("Does school pickup on Thursdays", "generated"),
            ("Wife Priya works late on Wednesdays", "generated"),
            ("Wife is a doctor", "generated"),
        ],
        [],
    ),
    "leila_dinner": (
        [
            ("u", "planning a dinner party saturday for 6 people, one guest is allergic to nuts"),
            ("a", "Happy to help. Any other restrictions?"),
            (
                "u",
                "oh and my brother-in-law is gluten free. actually make it 8 people, "
                "forgot my neighbours",
            ),
            ("a", "Got it, 8 guests."),
            ("u", "I was going to do a lamb tagine but I think I'll do chicken instead, cheaper"),
        ],
        [
            ("Is hosting a dinner party on Saturday", "stated"),
            ("Dinner party is for 8 people", "stated"),
            ("Dinner party is for 6 people", "generated"),
            ("One guest is allergic to nuts", "stated"),
            ("Brother-in-law is gluten free", "stated"),
            ("Is cooking a lamb tagine", "generated"),
            ("Plans to cook chicken", "stated"),
            ("Is watching costs for the dinner", "inferred"),
            ("Invited the neighbours", "stated"),
            ("Is allergic to nuts", "generated"),
            ("Is gluten free", "generated"),
        ],
        ["Brother-in-law is allergic to nuts"],
    ),
    "back_to_gaming": (
        [
            ("u", "any tips for getting back into gaming? haven't played since my PS2 days"),
            ("a", "Sure! What did you play back then?"),
            ("u", "mostly Gran Turismo and Tekken. I'm 44 now with two kids so time is short"),
            ("a", "Maybe a Switch would suit you, lots of short sessions."),
            ("u", "my son already has a switch actually, I could borrow it"),
        ],
        [
            ("Used to play Gran Turismo and Tekken", "stated"),
            ("Is 44 years old", "stated"),
            ("Has three kids", "generated"),
            ("Is 45 years old", "generated"),
            ("Is in his forties", "inferred"),
        ],
        [],
    ),
    "nora_retraining": (
        [
            ("u", "I'm a pharmacist at Boots in Cardiff, been there 6 years"),
            ("a", "What brings you here today?"),
            ("u", "thinking about retraining as a teacher"),
            ("a", "Welcome back! How's the teacher training idea going?"),
            ("u", "changed my mind about primary, I'm going for a PGCE in chemistry instead"),
            ("a", "Great choice."),
            ("u", "update: I handed my notice in at Boots last week"),
        ],
        [
            ("Has worked at Boots for 6 years", "stated"),
            ("Works at Boots in Swansea", "generated"),
            ("Is going for a PGCE in chemistry", "stated"),
            ("Handed in notice at Boots last week", "stated"),
            ("Is considering retraining as a teacher", "stated"),
            ("Has worked at Boots for 8 years", "generated"),
            ("Lives in Cardiff", "inferred"),
            ("Completed a PGCE", "generated"),
        ],
        [],
    ),
    "sam_head_chef": (
        [
            ("u", "my boyfriend Sam just got promoted to head chef, so proud of him"),
            ("a", "That's wonderful! Where does he work?"),
            ("u", "a tapas place in Leeds. he works crazy hours though, we barely see each other"),
            ("a", "Do you work in hospitality too?"),
            ("u", "god no, I'm an accountant, 9 to 5 thank god"),
        ],
        [
            ("Boyfriend Sam was promoted to head chef", "stated"),
            ("Is a head chef", "generated"),
            ("Boyfriend works at a tapas restaurant in Leeds", "stated"),
            ("Is an accountant", "stated"),
            ("Boyfriend works long hours", "stated"),
            ("Rarely sees her boyfriend", "stated"),
            ("Boyfriend Sam is an accountant", "generated"),
            ("Has a boyfriend named Sam", "stated"),
            ("Lives in Leeds", "inferred"),
        ],
        ["Works at a tapas place in Leeds"],
    ),
    "glasgow_flat": (
        [
            ("u", "looking for a 1-bed in Glasgow, budget 900 a month max"),
            ("a", "Which areas are you considering?"),
            ("u", "Finnieston or the West End. I cycle to work at the uni so nothing too far"),
            ("a", "Anything else important?"),
            ("u", "must allow pets, I've got an elderly greyhound called Bramble"),
        ],
        [
            ("Is looking for a 1-bed flat in Glasgow", "stated"),
            ("Budget is 900 a month", "stated"),
            ("Budget is 1,200 a month", "generated"),
            ("Is considering Finnieston or the West End", "stated"),
            ("Cycles to work", "stated"),
            ("Works at the university", "stated"),
            ("Has a greyhound named Bramble", "stated"),
            ("Has a whippet named Bramble", "generated"),
            ("Has an elderly dog", "stated"),
            ("Has a cat named Bramble", "generated"),
            ("Wants a 2-bed flat", "generated"),
            ("Is looking for a flat in Edinburgh", "generated"),
        ],
        [],
    ),
    "night_shifts_care_home": (
        [
            ("u", "night shifts again this week, 10pm to 8am at the care home"),
            ("a", "That sounds exhausting."),
            ("u", "it is, and then the kids are up at 7 wanting breakfast on my days off"),
        ],
        [
            ("Works night shifts at a care home", "stated"),
            ("Works 10pm to 8am", "stated"),
            ("Is a care worker", "inferred"),
            ("Sleeps during the day", "inferred"),
            ("Has kids", "stated"),
            ("Is often tired", "inferred"),
            ("Works day shifts", "generated"),
            ("Kids get up at 7", "stated"),
        ],
        [],
    ),
    # a third round, authored on 2026-12-06 after every reading of that night but the last three
    # (the month "may", a verb's other stem, a plan after "should"), in other styles again (terse
    # numbers, a voice note's run-on sentence, colleagues, a health check, a holiday, a career
    # over sessions, a neighbour, a pet and an allergy); tagged before those three were written:
    # 81 of 104 entries as labelled, 11 of the 42 generated ones stored as stated (80 and 12 on
    # 779a726)
    "terse_budget": (
        [
            ("u", "need help w budget. take home 2100/mo, rent 950"),
            ("a", "Got it. Any debts?"),
            ("u", "car loan 180/mo till march. no cc debt"),
            ("a", "Any savings goals?"),
            ("u", "wedding next june lol, need like 6k"),
        ],
        [
            ("Takes home 2,100 a month", "stated"),
            ("Rent is 950 a month", "stated"),
            ("Rent is 1,050 a month", "generated"),
            ("Pays 180 a month on a car loan", "stated"),
            ("Car loan ends in March", "stated"),
            ("Has no credit card debt", "stated"),
            ("Has credit card debt", "generated"),
            ("Is saving 6,000 for the wedding", "stated"),
            ("Owns a car", "inferred"),
            ("Is engaged", "inferred"),
            ("Is getting married next July", "generated"),
            ("Car loan ends in May", "generated"),
        ],
        ["Mortgage is 950 a month"],
    ),
    "voice_run_on": (
        [
            (
                "u",
                "so basically my daughter Zoe she's doing her GCSEs this year and she "
                "wants to do art but my husband thinks she should do something more "
                "practical like business so we keep arguing about it",
            ),
            ("a", "That's a common tension. What does Zoe think?"),
            (
                "u",
                "she's set on art honestly she's been drawing since she was three and "
                "her teacher says she's really talented",
            ),
        ],
        [
            ("Daughter Zoe is doing her GCSEs this year", "stated"),
            ("Daughter Zoe wants to study art", "stated"),
            ("Husband wants Zoe to study business", "stated"),
            ("Daughter Zoe has been drawing since she was three", "stated"),
            ("Daughter Zoe has been drawing since she was five", "generated"),
            ("Zoe's teacher says she is talented", "stated"),
            ("Is a teacher", "generated"),
            ("Daughter Zoe is about 15 or 16", "inferred"),
            ("Argues with her husband about Zoe's subjects", "stated"),
            ("Son Zoe is doing his GCSEs", "generated"),
        ],
        ["Wants Zoe to study business", "Daughter Zoe wants to study business"],
    ),
    "coworkers": (
        [
            ("u", "my manager Priti just quit and they want me to cover her team for 3 months"),
            ("a", "That's a big step. How do you feel about it?"),
            (
                "u",
                "nervous tbh. I've only been a senior analyst for a year. Tom from "
                "finance applied for her job too",
            ),
            ("a", "Do you want the job permanently?"),
            ("u", "maybe, if the pay bump is decent. I'm on 48k now"),
        ],
        [
            ("Manager Priti quit", "stated"),
            ("Is covering Priti's team for 3 months", "stated"),
            ("Is covering Priti's team for 6 months", "generated"),
            ("Is a senior analyst", "stated"),
            ("Has been a senior analyst for a year", "stated"),
            ("Has been a senior analyst for two years", "generated"),
            ("Tom from finance applied for Priti's job", "stated"),
            ("Earns 48k", "stated"),
            ("Earns 58k", "generated"),
            ("Is nervous about covering the team", "stated"),
            ("Is a manager", "generated"),
            ("Might want the manager job permanently", "stated"),
        ],
        ["Applied for Priti's job"],
    ),
    "health_update": (
        [
            ("u", "quick update: the GP says my blood pressure is a bit high, 145 over 90"),
            ("a", "Thanks for sharing. Did they suggest anything?"),
            ("u", "cut salt, walk more. no meds yet, recheck in 6 weeks"),
            ("a", "Sounds sensible. Do you walk much now?"),
            ("u", "not really, I drive everywhere. I used to cycle to work before we moved"),
        ],
        [
            ("Blood pressure is 145 over 90", "stated"),
            ("Has high blood pressure", "stated"),
            ("Has a recheck in 6 weeks", "stated"),
            ("Has a recheck in 4 weeks", "generated"),
            ("Was told to cut salt", "stated"),
            ("Drives everywhere", "stated"),
            ("Cycles to work", "generated"),
        ],
        ["Walks a lot"],
    ),
    "holiday_plans": (
        [
            ("u", "we're going to Crete in August with the kids, 10 nights"),
            ("a", "Lovely! How old are the kids?"),
            (
                "u",
                "Noah's 9 and Ella is 6. Ella can't swim yet so we need a hotel with a "
                "shallow pool",
            ),
            ("a", "I'll keep that in mind. Flying from?"),
            ("u", "Bristol. my wife hates early flights so nothing before 9am"),
        ],
        [
            ("Is going to Crete in August", "stated"),
            ("Is going to Crete in July", "generated"),
            ("Is going to Rhodes in August", "generated"),
            ("Trip is 10 nights", "stated"),
            ("Trip is 14 nights", "generated"),
            ("Noah is 9", "stated"),
            ("Ella is 6", "stated"),
            ("Ella is 9", "generated"),
            ("Ella can't swim yet", "stated"),
            ("Needs a hotel with a shallow pool", "stated"),
            ("Is flying from Bristol", "stated"),
            ("Is flying from Bath", "generated"),
            ("Wife hates early flights", "stated"),
            ("Hates early flights", "generated"),
            ("Is married", "inferred"),
        ],
        ["Noah can't swim yet"],
    ),
    "career_sessions": (
        [
            ("u", "I'm a junior dev at a bank, mostly Java"),
            ("a", "What would you like to work on?"),
            ("u", "I want to move into data engineering within a year"),
            ("a", "Welcome back! How's the data engineering plan?"),
            ("u", "good news, I start a new role on the data platform team next month, same bank"),
            ("a", "Congratulations!"),
            ("u", "thanks! learning Python and Spark now, they don't use Java at all"),
        ],
        [
            ("Works at a bank", "stated"),
            ("Is a junior developer", "stated"),
            ("Starts a new role on the data platform team next month", "stated"),
            ("Is learning Python and Spark", "stated"),
            ("Is learning Scala", "generated"),
            ("Wants to move into data engineering", "stated"),
            ("Works in finance", "inferred"),
            # a known miss until 2026-12-06 morning: "experienced" is a glued rank
            ("Is an experienced data engineer", "generated"),
        ],
        [],
    ),
    "neighbour_dispute": (
        [
            ("u", "my neighbour Gary keeps parking across my drive"),
            ("a", "That's frustrating. Have you spoken to him?"),
            ("u", "twice. he says it's a public road. it's not, it's my drive, I own the house"),
            ("a", "Is the drive marked?"),
            ("u", "no, maybe I should paint lines. my partner Lou wants to call the council"),
        ],
        [
            ("Neighbour Gary parks across the user's drive", "stated"),
            ("Has spoken to Gary three times", "generated"),
            ("Owns the house", "stated"),
            ("Partner Lou wants to call the council", "stated"),
            ("Wants to call the council", "generated"),
            ("Is thinking of painting lines on the drive", "stated"),
            ("Painted lines on the drive", "generated"),
            ("Gary thinks the road is public", "stated"),
            ("Neighbour Lou parks across the drive", "generated"),
            ("Has a partner named Lou", "stated"),
        ],
        [],
    ),
    "pets_and_allergies": (
        [
            ("u", "we just adopted a rescue cat called Mango, she's 2"),
            ("a", "Congratulations! How is she settling in?"),
            (
                "u",
                "hiding under the bed mostly. my son is allergic so he's taking "
                "antihistamines, not ideal",
            ),
            ("a", "Oh no. Is it mild?"),
            ("u", "mild, sneezing mostly. our vet said a HEPA filter might help"),
        ],
        [
            ("Adopted a rescue cat named Mango", "stated"),
            ("Cat Mango is 2 years old", "stated"),
            ("Cat Mango is 4 years old", "generated"),
            ("Adopted a rescue dog named Mango", "generated"),
            ("Son is allergic to the cat", "stated"),
            ("Is allergic to cats", "generated"),
            ("Son takes antihistamines", "stated"),
            ("Takes antihistamines", "generated"),
            ("Son's allergy is mild", "stated"),
            ("Vet suggested a HEPA filter", "stated"),
            ("Cat Mango hides under the bed", "stated"),
            ("Has a son", "stated"),
        ],
        ["Bought a HEPA filter"],
    ),
}


# the entries of the second and third rounds the guard tags otherwise than labelled, other than
# a generated one stored as stated (above): (chat, entry, label), the tag of that day in a
# comment. Pinned as strict expected failures, so a change that fixes one shows up here
OTHER_MISREADS = [
    ("ines_remote_job", "New employer is a fintech in Porto", "stated"),  # generated
    ("ines_remote_job", "Is a software engineer", "generated"),  # inferred
    ("tomas_marathon_knee", "Has seen a physio twice", "stated"),  # inferred
    ("tomas_marathon_knee", "Has torn his IT band", "generated"),  # inferred
    ("tomas_marathon_knee", "Is an experienced marathon runner", "generated"),  # inferred
    ("tomas_marathon_knee", "Knee has been hurting since October", "stated"),  # generated
    ("aisha_mum_visit", "Mother lives in Karachi", "inferred"),  # stated
    ("aisha_mum_visit", "Mother has trouble with stairs", "stated"),  # generated
    ("ravi_twins", "Twins are 7 years old", "inferred"),  # generated
    ("back_to_gaming", "Has two kids", "stated"),  # generated
    ("back_to_gaming", "Owns a Nintendo Switch", "generated"),  # inferred
    ("back_to_gaming", "Son owns a Nintendo Switch", "stated"),  # inferred
    ("back_to_gaming", "Had a PS2", "inferred"),  # stated
    ("back_to_gaming", "Has little free time", "stated"),  # inferred
    ("back_to_gaming", "Wants to get back into gaming", "stated"),  # generated
    ("back_to_gaming", "Plays Tekken every weekend", "generated"),  # inferred
    ("back_to_gaming", "Plans to buy a Switch", "generated"),  # inferred
    ("nora_retraining", "Wants to teach primary school", "generated"),  # inferred
    ("nora_retraining", "Is a chemistry teacher", "generated"),  # inferred
    ("sam_head_chef", "Works 9 to 5", "stated"),  # generated
    ("sam_head_chef", "Works in hospitality", "generated"),  # inferred
    ("glasgow_flat", "Is a student at the university", "generated"),  # inferred
    ("glasgow_flat", "Drives to work", "generated"),  # inferred
    ("night_shifts_care_home", "Works at a hospital", "generated"),  # inferred
    ("night_shifts_care_home", "Kids get up at 6", "generated"),  # inferred
    ("night_shifts_care_home", "Makes breakfast for the kids on days off", "inferred"),  # stated
    ("terse_budget", "Is getting married next June", "inferred"),  # stated
    ("coworkers", "Works in finance", "generated"),  # inferred
    ("health_update", "Blood pressure is 160 over 100", "generated"),  # inferred
    ("health_update", "Takes blood pressure medication", "generated"),  # inferred
    ("health_update", "Used to cycle to work", "stated"),  # inferred
    ("health_update", "Moved house at some point", "stated"),  # inferred
    ("health_update", "Has diabetes", "generated"),  # inferred
    ("holiday_plans", "Has two children", "inferred"),  # generated
    ("career_sessions", "Is moving to a different bank", "generated"),  # inferred
    ("neighbour_dispute", "Has spoken to Gary twice", "stated"),  # generated
    ("neighbour_dispute", "Rents the house", "generated"),  # inferred
]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_each_entry_is_tagged_as_labelled(shipped_guard: Guard, name: str) -> None:
    chat, entries, _ = PROBES[name]
    decisions = shipped_guard.tag(chat_turns(chat), [Candidate(text=t) for t, _ in entries])
    got = [(t, d.provenance.value) for (t, _), d in zip(entries, decisions, strict=True)]
    assert got == entries


KNOWN_MISSES = sorted((name, entry) for name, (_, _, miss) in PROBES.items() for entry in miss)


@pytest.mark.xfail(strict=True, reason="stored as a stated fact: a known miss (module docstring)")
@pytest.mark.parametrize(("name", "entry"), KNOWN_MISSES)
def test_a_known_miss_is_not_stored_as_stated(shipped_guard: Guard, name: str, entry: str) -> None:
    chat, _, _ = PROBES[name]
    (d,) = shipped_guard.tag(chat_turns(chat), [Candidate(text=entry)])
    assert d.provenance.value != "stated"


@pytest.mark.xfail(strict=True, reason="tagged otherwise than labelled: a known misread")
@pytest.mark.parametrize(("name", "entry", "label"), OTHER_MISREADS)
def test_a_known_misread_is_tagged_as_labelled(
    shipped_guard: Guard, name: str, entry: str, label: str
) -> None:
    chat, _, _ = PROBES[name]
    (d,) = shipped_guard.tag(chat_turns(chat), [Candidate(text=entry)])
    assert d.provenance.value == label


def test_an_entry_that_says_nothing_is_never_stored_as_a_fact(shipped_guard: Guard) -> None:
    """Before 2026-12-07 the shipped guard stored each of these as a stated fact of this turn."""
    chat = [("u", "I live in Lisbon. The flat is small but I like it.")]
    entries = ["User is", "Likes", "I like it", "Has a", "the", "Lives in Lisbon"]
    decisions = shipped_guard.tag(chat_turns(chat), [Candidate(text=t) for t in entries])
    got = {t: (d.provenance.value, d.action.value) for t, d in zip(entries, decisions, strict=True)}
    assert got == {t: ("generated", "quarantine") for t in entries[:-1]} | {
        "Lives in Lisbon": ("stated", "store")
    }
