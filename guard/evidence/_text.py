"""Cheap lexical signals: content words, negation, hedges, numbers, proper names."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from text_to_num import alpha2digit

# typographic apostrophes, quotes and spaces as their ASCII forms: phones and word processors
# type "I don’t eat meat", and every word list and pattern here is written with "'". (Not dashes:
# "Paris–Lyon" is two words, and "-" joins the words around it.)
TYPOGRAPHIC = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "}
)


@lru_cache(maxsize=65536)
def plain(text: str) -> str:
    """``text`` as the evidence path reads it: typographic apostrophes, quotes and spaces as
    ASCII ("don’t" is "don't"), nothing else changed."""
    return text.translate(TYPOGRAPHIC)


# a letter of any alphabet ("Zürich", "Ciarán" are one word each): a word character that is not
# a digit or "_"
LETTER = r"[^\W\d_]"
# a number with thousands commas is one number ("1,500,000"), else digits with at most one "."
# or "," inside ("4.5", "1,500")
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?"
_WORD = re.compile(rf"{LETTER}(?:{LETTER}|['\-])*|{_NUM}")
_NUMBER = re.compile(rf"\b(?:{_NUM})\b")
# a sentence ends at . ! ? and a space, and at a line break: in chat a new line is a new sentence
# ("not vegan\nwork at the bakery these days" denies nothing of the bakery)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
# words before a full stop that do not end a sentence ("e.g. the sea", "Dr. Smith")
_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "approx",
        "vs",
        "dr",
        "mr",
        "mrs",
        "ms",
        "st",
        "no",
        "jr",
        "sr",
        "mt",
        "a.m",
        "p.m",
    ]
)
# number words and the value each stands for ("four" says what "4" says)
_NUMBER_VALUES = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50",
}  # fmt: skip
_NUMBER_WORDS = set(_NUMBER_VALUES) | {"hundred", "dozen", "decade", "decades"}
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
STOPWORDS = frozenset(
    """
    a an the and or but if of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then
    once here there when where why how all any both each few more most other some such no
    nor not only own same so than too very s t can will just don should now i me my myself
    we our ours you your yours yourself he him his she her hers it its they them their what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing would could ought i'm you're he's she's it's we're they're i've
    you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
    they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
    there's when's where's why's how's user user's also really like likely probably may
    might seems seem maybe perhaps must get got just still even much many lot lots something
    someone thing things way well one ones week weekend last recently
    """.split()  # noqa: SIM905 - a word list reads best as text
)
NEGATIONS = frozenset(
    """
    not no never none nothing neither nor without isn't aren't wasn't weren't doesn't don't
    didn't won't can't cannot couldn't hasn't haven't hadn't wouldn't shouldn't dislikes hates
    avoids dislike hate avoid dont doesnt didnt isnt arent wasnt werent wont cant couldnt
    hasnt havent hadnt wouldnt shouldnt nope
    """.split()  # noqa: SIM905 - a word list reads best as text
)
HEDGES = frozenset(
    """
    probably likely maybe perhaps might may seems seem appears apparently presumably
    possibly guess suspect suggests imagine bet
    """.split()  # noqa: SIM905 - a word list reads best as text
)
GENERALIZERS = (
    "as a ", "as an ", "like most", "like many", "typical", "typically", "people who",
    "those who", "being a ", "being an ", "given your job", "given that you", "since you're a",
    "since you are a",
    "as someone who works", "in your line of work", "your profession", "most ",
)  # fmt: skip


def sentences(text: str) -> list[str]:
    """A text's sentences. A sentence ends at . ! ? and a space, and at a line break; in chat
    people go on in lowercase ("is it safe with coffee? back is killing me", "ok thanks. shifts
    are tue to thu now"), so a lowercase start still begins a sentence, except after an
    abbreviation or an initial ("e.g. the sea", "J. smith")."""
    out: list[str] = []
    for part in (p.strip() for p in _SENTENCE.split(text.strip())):
        if not part:
            continue
        if out and out[-1].endswith(".") and part[:1].islower() and _abbreviated(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out or [text.strip()]


def _abbreviated(sentence: str) -> bool:
    last = sentence.rsplit(maxsplit=1)[-1].rstrip(".").lower()
    return len(last) <= 1 or last in _ABBREVIATIONS


# one pass, longest first; "ings" and "ers" so a plural has its singular's stem ("evenings" and
# "evening" are "even", "daughters" and "daughter" "daught"; with "s" alone the plural kept the
# "ing" / "er" its singular lost); a word in "ss" keeps it
_SUFFIXES = ("ings", "ers", "ing", "edly", "ed", "ies", "es", "s", "ly", "er")


def unaccented(word: str) -> str:
    """``word`` without its accents ("Zürich" is "Zurich", "Renée" "Renee"): a writer model
    often drops them, and a name is the same name without them."""
    if word.isascii():
        return word
    split = unicodedata.normalize("NFKD", word)
    return "".join(c for c in split if not unicodedata.combining(c))


# a chat's short forms, read as the word ("not on meds" denies "medication", "at uni" says
# "university", "I don't have a maths degree" denies "a degree in mathematics"); only those
# that are no other word. Measured and left out: "yr" ("yr 12", a school year, became a number
# of years against "16 or 17 years old") and "bf" / "gf"
_SHORT_FORMS = {
    "hr": "hour", "hrs": "hour", "wk": "week", "wks": "week", "appt": "appointment",
    "appts": "appointment", "bday": "birthday", "meds": "medication", "uni": "university",
    "math": "mathematics", "maths": "mathematics", "apt": "apartment", "apts": "apartment",
}  # fmt: skip


def stem(word: str) -> str:
    w = unaccented(word.lower().strip("'-"))
    if w.endswith("'s"):
        w = w[:-2]  # a possessive: "teacher's" is "teacher"
    w = _SHORT_FORMS.get(w, w)
    if w in _NUMBER_VALUES:
        return _NUMBER_VALUES[w]  # "three" is the stem of "3": the same value
    for suffix in _SUFFIXES:
        if suffix == "s" and w.endswith("ss"):
            break  # not a plural: "class" is the stem of "classes", "boss" of "bosses"
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


@lru_cache(maxsize=65536)
def content_stems(text: str) -> frozenset[str]:
    return frozenset(
        stem(w)
        for w in _WORD.findall(text)
        if w.lower() not in STOPWORDS and (len(w) > 1 or w.isdigit())
    )


# the verbs a claim frames its value with: said of both people, they say whose fact it is not;
# ended, they end the value said with them ("used to live in Denver"), not the claim's
FRAME_STEMS = frozenset(
    stem(w)
    for w in """
    work works live lives like likes love loves want wants have has do does make makes take
    takes use uses need needs plan plans go goes get gets keep keeps try tries enjoy enjoys
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@lru_cache(maxsize=65536)
def word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


# a number glued to a unit or an ending says the number: "4k" (4000), "50th", "the under 18s",
# "3am", "10p to 6a", "6ish", "250g", "5mg", "10hrs", "3x", "19ft", "12lbs" ("m" is left out:
# metres or millions)
_SUFFIXED = re.compile(
    r"\b(\d+(?:\.\d+)?)(k|th|st|nd|rd|s|am|pm|a|p|ish|g|kg|mg|ml|km|cm|mm|h|hr|hrs|min|mins|x|yo"
    r"|yr|yrs|ft|lb|lbs|oz|mph)\b",
    re.IGNORECASE,
)


# a number said in several words: "twelve hundred forty", "a hundred and twelve thousand",
# "forty two", "74 thousand" (read by text2num, and a digit before its multiplier here)
_SPELLED = re.compile(
    r"\b(?:hundred|thousand|million)\b|\b(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
    r"[- ](?:one|two|three|four|five|six|seven|eight|nine)\b",
    re.IGNORECASE,
)
_MULTIPLIED = re.compile(r"\b(\d+(?:\.\d+)?) (thousand|million)\b", re.IGNORECASE)


@lru_cache(maxsize=65536)
def _in_digits(text: str) -> str:
    """``text`` with its numbers of several words in digits ("its twelve hundred" -> "its
    1200", "74 thousand" -> "74000"); text that has none is returned as it is."""
    if not _SPELLED.search(text):
        return text
    out = text
    for m in reversed(list(_MULTIPLIED.finditer(out))):
        value = float(m.group(1)) * (1000 if m.group(2).lower() == "thousand" else 1_000_000)
        digits = str(int(value)) if value.is_integer() else str(value)
        out = out[: m.start()] + digits + out[m.end() :]
    converted: str = alpha2digit(out, "en")
    return converted


@lru_cache(maxsize=65536)
def numbers(text: str) -> frozenset[str]:
    """The numbers ``text`` says, as values: "4", "four" and "4th" are all "4", "4k" is "4000",
    "1,500" is "1500", "three decades" is "30"; "hundred", "dozen" and "decade(s)" otherwise stay
    words."""
    found = {n.replace(",", "") for n in _NUMBER.findall(text)}
    for n, unit in _SUFFIXED.findall(text):
        if unit.lower() == "s" and re.fullmatch(r"\d0|\d\d[1-9]0", n):
            # a decade: "the 90s" is "the 1990s" ("00s" to "20s" this century; "1800s" is a
            # century, left as it is)
            short = n[-2:]
            found |= {short, n if len(n) == 4 else ("20" if int(n) < 30 else "19") + n}
        elif unit.lower() != "k":
            found.add(n)
        else:
            value = float(n) * 1000
            found.add(str(int(value)) if value.is_integer() else str(value))
    found |= {_NUMBER_VALUES.get(w, w) for w in words(text) if w in _NUMBER_WORDS}
    for m in _DECADES.finditer(text):
        # "three decades" is 30 years: the value, not its count and its unit
        n = m.group(1).lower()
        count = _NUMBER_VALUES.get(n, n)
        found -= {count, "decades"}
        found.add(str(int(count) * 10))
    return frozenset(found)


_DECADES = re.compile(
    rf"\b(\d|{'|'.join(w for w, v in _NUMBER_VALUES.items() if int(v) < 10)}) decades\b",
    re.IGNORECASE,
)


def _unpossessed(word: str) -> str:
    """A word without its possessive: "Javi's" is "javi", "the Joneses'" is "joneses"."""
    low = unaccented(word.lower())
    if low.endswith("'s"):
        return low[:-2]
    return low[:-1] if low.endswith("'") else low


def _names_at(toks: Sequence[str]) -> list[int]:
    """Where a sentence's tokens have a capitalised word that does not start it (not "I", not a
    stopword): the cheap named-entity stand-in :func:`proper_names` and :func:`swapped_names`
    read."""
    return [
        i for i in range(1, len(toks))
        if toks[i][:1].isupper() and toks[i].lower() not in STOPWORDS and toks[i] != "I"
    ]  # fmt: skip


def proper_names(text: str) -> set[str]:
    """Capitalised words that do not start a sentence (cheap named-entity stand-in), without a
    possessive "'s" ("for Javi's new job" names Javi)."""
    names: set[str] = set()
    for sent in sentences(text):
        toks = _WORD.findall(sent)
        names.update(_unpossessed(toks[i]) for i in _names_at(toks))
    return names


@lru_cache(maxsize=65536)
def name_words(text: str) -> frozenset[str]:
    """The words a text says, each also without its possessive: what a claim's names are
    checked against ("Javi got a job" and "Javi's job" both say Javi)."""
    said = word_set(text)
    return said | {_unpossessed(w) for w in said}


# a day's or a month's short form ("Aug 28", "on Tues"): a date, which the rules that compare
# days and months read, not a name
_DATE_SHORT = frozenset(
    ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mon",
     "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun")
)  # fmt: skip
_DATES = frozenset(MONTHS) | _DATE_SHORT
# what a word said adds to become the name ("DJ" / "DJing", "Brit" / "Brits")
_NAME_ENDINGS = frozenset(("s", "es", "ing", "ed", "er", "ers", "'s"))


# the kind of street or place a name ends with, and its short forms: "Sydney Rd" is "Sydney
# Road", not another name for it. Authored here
_STREET_TYPES = frozenset(
    ("road", "rd", "street", "st", "avenue", "ave", "lane", "ln", "drive", "dr", "boulevard",
     "blvd", "place", "pl", "square", "sq", "court", "ct", "crescent", "cres", "terrace", "tce",
     "close", "way", "parade", "pde", "highway", "hwy")
)  # fmt: skip
_NEVER_NAMES = _DATES | _STREET_TYPES  # a date or a street's type, never a name of its own


def unsaid_names(names: Iterable[str], said: frozenset[str]) -> list[str]:
    """The ``names`` (:func:`proper_names`) that ``said`` (:func:`name_words`) does not say in
    any form: as it is, as its stem ("Sundays" / "sunday"), or as a short form of it ("Labrador"
    / "lab", "DJing" / "DJ"; a word a name only begins, "Bath" / "bathroom", is not it). Days and
    months are not names here, nor the kind of street a name ends with ("Sydney Road" /
    "Sydney Rd": ``_STREET_TYPES``)."""
    left = []
    for name in sorted(names):
        bare = name[:-1] if name.endswith("s") else name
        if name not in said and bare not in DAYS and name not in _NEVER_NAMES:
            left.append(name)
    if not left:
        return []
    # one pass over what was said (a long history says thousands of words), by first letter
    initials = {name[:1] for name in left}
    alike = [w for w in said if len(w) >= 2 and w[:1] in initials]
    stems = {stem(w) for w in alike}
    return [
        name for name in left
        if stem(name) not in stems
        and not any(
            name.startswith(w) and (len(w) >= 3 or name[len(w) :] in _NAME_ENDINGS)
            for w in alike
        )
    ]  # fmt: skip


_ACRONYM = re.compile(r"\b[A-Z]{2,}\b")  # "IT", "NYC": a word, though "it" is not


def says_nothing(text: str) -> bool:
    """No word of the claim says anything: only stopwords, frame verbs and "user" ("Likes",
    "User is", "Has a", "I like it"). Such text is no fact about anyone, whatever a turn says."""
    content = content_stems(text) - FRAME_STEMS - {"user"}
    return not content and not numbers(text) and not _ACRONYM.search(text)


def has_negation(text: str) -> bool:
    return any(w in NEGATIONS for w in words(text))


def hedge_count(text: str) -> int:
    return sum(1 for w in words(text) if w in HEDGES)


def generalizer_count(text: str) -> int:
    low = f" {text.lower()} "
    return sum(1 for g in GENERALIZERS if g in low)


# content words this far either side of a value say what it is a value of
VALUE_CONTEXT = 3


def _value(word: str) -> tuple[str, str] | None:
    """(kind, normalised value) of a number, day or month word (values that must be said as
    they are), else None."""
    if word[:1].isdigit():
        return "number", word.replace(",", "")
    if word in _NUMBER_VALUES:
        return "number", _NUMBER_VALUES[word]
    bare = word[:-1] if word.endswith("s") else word
    if bare in DAYS:
        return "day", bare
    if word in MONTHS and word != "may":  # "may" is read as a modal: never a value here
        return "month", word
    return None


# a relative is named by one word, and another word for the same relative says the same thing
# ("mum" is "mother"); words that name more than one kind of relative ("pop": a father or a
# grandfather; "ma", "nan", "bro") or none in particular ("parent", "partner", "family") are not
# listed, so a claim that is only less or more general than its evidence is never a changed value
_KIN_FORMS = {
    "mother": "mother mom mum mommy mummy mama",
    "father": "father dad daddy papa",
    "sister": "sister", "brother": "brother", "son": "son", "daughter": "daughter",
    "wife": "wife", "husband": "husband", "boyfriend": "boyfriend", "girlfriend": "girlfriend",
    "fiance": "fiance fiancee", "uncle": "uncle", "aunt": "aunt auntie aunty",
    "grandmother": "grandmother grandma granny gran nana", "cousin": "cousin", "niece": "niece",
    "grandfather": "grandfather grandpa grandad granddad", "nephew": "nephew",
    "stepmother": "stepmother stepmom stepmum", "stepfather": "stepfather stepdad",
}  # fmt: skip
_KIN = {f: canon for canon, forms in _KIN_FORMS.items() for f in forms.split()}
# every word that names a relative ("mum", "grandad", "stepdad", ...)
KIN_WORDS = frozenset(_KIN)
# "left" / "right" are a side only before one of these ("my left knee"; not "I left work")
_BODY_PARTS = frozenset(
    ("knee", "ankle", "hand", "arm", "leg", "foot", "shoulder", "hip", "eye", "ear", "wrist",
     "elbow", "heel", "toe", "thumb", "finger", "calf", "hamstring", "side", "lung", "kidney")
)  # fmt: skip


def kin_value(word: str) -> str | None:
    """The relative a word names, as :func:`changed_values` gives it ("dad" is "father"), else
    None."""
    return _kin(word.lower())


def _kin(word: str) -> str | None:
    """The relative a word names ("mum's" and "mothers" name the mother), else None."""
    w = word[:-2] if word.endswith("'s") else word.rstrip("'")
    return _KIN.get(w) or (_KIN.get(w[:-1]) if w.endswith("s") else None)


# closed classes of things a memory entry swaps for another of the same class ("has a cat" / "my
# dog", "in the winter" / "in summer", "prefers red wine" / "white wine", "at weekends" / "on
# weekday mornings", "Sunday lunch" / "dinner on Sundays", "studies medicine" / "I study
# nursing"; authored here, the general word of a class left out: "meat" over "chicken"): a word
# of a class is a value of that kind. Words that are as often something else are left out
# ("fall", "orange", "bass", "squash"), and so are languages (a nationality says one: "I'm
# Brazilian" / "Speaks Portuguese" is an inference, not another value)
_CLASS_FORMS = {
    "pet": {"dog": "dog dogs puppy", "cat": "cat cats kitten", "rabbit": "rabbit rabbits",
            "hamster": "hamster hamsters", "parrot": "parrot", "tortoise": "tortoise",
            "horse": "horse horses"},
    "daypart": {"morning": "morning mornings", "afternoon": "afternoon afternoons",
                "evening": "evening evenings", "night": "night nights tonight"},
    "season": {"spring": "spring", "summer": "summer", "autumn": "autumn", "winter": "winter"},
    "weekpart": {"weekday": "weekday weekdays", "weekend": "weekend weekends"},
    "meal": {"breakfast": "breakfast breakfasts", "brunch": "brunch", "lunch": "lunch lunches",
             "dinner": "dinner dinners"},
    "diet": {"vegan": "vegan vegans", "vegetarian": "vegetarian vegetarians veggie",
             "pescatarian": "pescatarian pescetarian"},
    "protein": {s: s for s in ("fish", "chicken", "beef", "pork", "lamb", "tofu")},
    "field": {s: s for s in ("nursing", "medicine", "law", "engineering", "economics",
                             "biology", "chemistry", "physics", "psychology", "architecture",
                             "accounting", "philosophy", "dentistry", "pharmacy")},
    "industry": {s: s for s in ("construction", "software", "retail", "banking", "insurance",
                                "hospitality", "logistics", "publishing", "marketing")},
    "vehicle": {"car": "car cars", "bus": "bus buses", "train": "train trains", "tram": "tram",
                "taxi": "taxi cab", "van": "van", "motorbike": "motorbike motorcycle",
                "ferry": "ferry"},
    "game": {s: s for s in ("chess", "poker", "dominoes", "spades", "scrabble", "backgammon")},
    "schoollevel": {s: s for s in ("primary", "secondary", "elementary")},
    "colour": {c: c for c in ("red", "blue", "green", "yellow", "black", "white", "purple",
                              "pink", "brown", "grey", "gray", "navy", "burgundy")},
    "sport": {s: s for s in ("football", "soccer", "basketball", "tennis", "rugby", "cricket",
                             "baseball", "hockey", "volleyball", "netball", "badminton", "golf",
                             "swimming", "running", "cycling", "climbing", "bouldering", "boxing",
                             "karate", "judo", "yoga", "pilates")},
    "instrument": {s: s for s in ("piano", "guitar", "violin", "cello", "drums", "flute",
                                  "clarinet", "saxophone", "trumpet", "ukulele", "harp")},
    # a dog's breed ("Has a whippet named Bramble" / "an elderly greyhound called Bramble");
    # not "boxer" or "shepherd", which are as often something else
    "breed": {"greyhound": "greyhound greyhounds", "whippet": "whippet whippets",
              "labrador": "labrador labradors", "spaniel": "spaniel spaniels",
              "terrier": "terrier terriers", "beagle": "beagle beagles", "collie": "collie collies",
              "poodle": "poodle poodles", "dachshund": "dachshund dachshunds",
              "husky": "husky huskies", "staffie": "staffie staffies staffy", "pug": "pug pugs",
              "bulldog": "bulldog bulldogs", "chihuahua": "chihuahua chihuahuas",
              "lurcher": "lurcher lurchers", "corgi": "corgi corgis",
              "dalmatian": "dalmatian dalmatians", "rottweiler": "rottweiler rottweilers"},
    # jobs no other word of the list is a kind of ("a surgeon" is a doctor, "a cook" cooks:
    # neither is listed)
    "occupation": {"nurse": "nurse nurses", "teacher": "teacher teachers",
                   "doctor": "doctor doctors gp", "lawyer": "lawyer lawyers solicitor",
                   "accountant": "accountant", "pharmacist": "pharmacist",
                   "electrician": "electrician", "plumber": "plumber", "barista": "barista",
                   "dentist": "dentist", "firefighter": "firefighter", "mechanic": "mechanic",
                   "librarian": "librarian", "hairdresser": "hairdresser", "midwife": "midwife",
                   "paramedic": "paramedic", "cashier": "cashier", "carpenter": "carpenter",
                   "pilot": "pilot", "journalist": "journalist", "farmer": "farmer"},
}  # fmt: skip
_CLASS_WORDS = {
    form: (kind, value)
    for kind, values in _CLASS_FORMS.items()
    for value, forms in values.items()
    for form in forms.split()
}
_CLASS_KIND = {value: kind for kind, values in _CLASS_FORMS.items() for value in values}
_CLASS_KIND["day"] = "daypart"  # only before "shift" (``_relation``): "day" alone is no daypart
# the kinds of value that are words of a closed set (and an age in decades), not numbers or
# dates: the linked turn not saying the claim's one is enough (a token aligner pairs "sister"
# with "brother", "cat" with "dog", so its unsaid words cannot tell)
RELATION_KINDS = frozenset(("kin", "side", "ordinal", "age", *_CLASS_FORMS))
# a rank in words, as its value ("second" is "2nd"); "2nd" itself is read as the number 2
_ORDINALS = dict(
    zip(("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
         "tenth"),
        ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th"), strict=True)
)  # fmt: skip
_RANKS = frozenset(_ORDINALS.values())


def _relation(ws: list[str], i: int) -> tuple[str, str] | None:
    """(kind, value) of a relative ("kin"), a side of the body ("side"), a rank ("ordinal") or
    a word of a closed class (``_CLASS_FORMS``: a pet, a part of the day or the week, a season,
    a meal, a diet, a field of study, an industry, a vehicle, a colour, a sport, ...) at
    ``ws[i]``."""
    rank = _ORDINALS.get(ws[i])
    if rank is not None:
        return "ordinal", rank
    kin = _kin(ws[i])
    if kin is not None:
        # a chain names one relative by way of another ("my mum's sister" is an aunt): neither
        # word is that relative, so neither is compared
        chained = (ws[i].endswith("'s") and i + 1 < len(ws) and _kin(ws[i + 1]) is not None) or (
            i > 0 and ws[i - 1].endswith("'s") and _kin(ws[i - 1]) is not None
        )
        return None if chained else ("kin", kin)
    if ws[i] in ("left", "right") and i + 1 < len(ws):
        part = ws[i + 1]
        if part in _BODY_PARTS or (part.endswith("s") and part[:-1] in _BODY_PARTS):
            return "side", ws[i]
    if ws[i] == "day" and ws[i + 1 : i + 2] in (["shift"], ["shifts"]):
        return "daypart", "day"  # "day shifts" against "night shifts" (not "every day")
    return _CLASS_WORDS.get(ws[i])


def _word_kind(word: str) -> str | None:
    """The kind of value a word alone is (a relative, a rank, a closed class's word), else None:
    never the context of a value of the same kind ("my dog and my cat")."""
    if _kin(word) is not None:
        return "kin"
    if word in _ORDINALS:
        return "ordinal"
    found = _CLASS_WORDS.get(word)
    return None if found is None else found[0]


def same_class_values(word: str) -> tuple[str, ...]:
    """The other values of the closed class a word names (a relative, a pet, a sport, a diet,
    ...: ``_CLASS_FORMS`` and the relatives), in a fixed order; () for any other word. What
    ``mirage calibrate train-support --swapped-words`` swaps a claim's word for."""
    w = word.lower()
    kin = _kin(w)
    if kin is not None:
        return tuple(k for k in _KIN_FORMS if k != kin)
    found = _CLASS_WORDS.get(w)
    if found is None:
        return ()
    kind, value = found
    return tuple(v for v in _CLASS_FORMS[kind] if v != value)


def value_kind(value: str) -> str | None:
    """ "number", "day", "month", "kin", "side", "ordinal", "age" or a closed class's kind
    ("pet", "season", ...) for a value :func:`changed_values` gives, else None."""
    if value in _RANKS:
        return "ordinal"
    if value in _KIN_FORMS:
        return "kin"
    if value in ("left", "right"):
        return "side"
    if value in _CLASS_KIND:
        return _CLASS_KIND[value]
    if re.fullmatch(_DECADE_VALUE, value, re.IGNORECASE) or re.fullmatch(r"aged \d+", value):
        return "age"
    if value == "may":
        return "month"  # given only where it is the month (``_BEFORE_MAY``)
    v = _value(value)
    return None if v is None else v[0]


# "one" after these, or before "of", is a pronoun, not a count ("the one in Memphis", "one of the
# greatest")
_ONE_AS_PRONOUN = frozenset(
    ("the", "this", "that", "which", "any", "every", "each", "another", "no", "last", "next",
     "only", "same", "no-one", "someone")
)  # fmt: skip


# the words before which "may" is the month ("in May", "till may", "since May", "early May"); a
# modal never follows them
_BEFORE_MAY = frozenset(
    ("in", "by", "till", "til", "until", "since", "from", "early", "late", "mid", "next", "last",
     "this", "of", "end", "before", "after", "during")
)  # fmt: skip


def _value_tokens(ws: list[str]) -> list[tuple[int, tuple[str, str]]]:
    """(index, (kind, value)) of each number, day or month of the words ``ws`` ("4k" is 4000;
    "one" as a pronoun is none)."""
    out = []
    for i, w in enumerate(ws):
        v = _value(w)
        if v is None and w == "may" and i > 0 and ws[i - 1] in _BEFORE_MAY:
            v = ("month", "may")  # "ends in May", "till may": the month, not the modal
        if v is None:
            continue
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if w == "one" and (nxt == "of" or (i > 0 and ws[i - 1] in _ONE_AS_PRONOUN)):
            continue
        if v[0] == "number" and w[:1].isdigit() and nxt == "k":
            thousands = float(v[1]) * 1000
            v = ("number", str(int(thousands)) if thousands.is_integer() else str(thousands))
        out.append((i, v))
    return out


_ORDINAL_ENDS = frozenset(("st", "nd", "rd", "th"))


def _date_month(ws: list[str], i: int) -> frozenset[str]:
    """The month a number at ``ws[i]`` is a day of ("9 March", "the 12th of September", "March
    16"), as a context word of its own: two dates of one month are values of the same thing."""
    k = i + 2 if ws[i + 1 : i + 2] and ws[i + 1] in _ORDINAL_ENDS else i + 1  # "12th": 12, th
    around = [*ws[k : k + 1], *(ws[k + 1 : k + 2] if ws[k : k + 1] == ["of"] else [])]
    around += ws[i - 1 : i] if i > 0 else []
    return frozenset(f"{w}:month" for w in around if w in MONTHS and w != "may")


def _values(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """Each value of ``text`` with the content stems around it in its sentence ("4k" is 4000):
    numbers, days and months, then the words of closed sets (relatives, sides of the body,
    ranks, a closed class's words), whose context leaves out words of their own kind. The
    words around a value end with its sentence: in "She's 11. My son Leo is 8" the son is not
    near 11."""
    return [v for sentence in sentences(text) for v in _sentence_values(sentence)]


# words for the same people a number counts right before them ("3 kids" is "two children" said
# otherwise, "six grandkids" "five grandchildren")
_COUNTED_AS = {
    "kid": "child", "kids": "child", "children": "child", "child": "child",
    "grandkid": "grandchild", "grandkids": "grandchild", "grandchildren": "grandchild",
    "grandchild": "grandchild",
}  # fmt: skip


def _sentence_values(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """:func:`_values` of one sentence."""
    ws = words(text)
    out = []
    for i, v in _value_tokens(ws):
        near = ws[max(0, i - VALUE_CONTEXT) : i] + ws[i + 1 : i + 1 + VALUE_CONTEXT]
        context = frozenset(
            stem(x) for x in near if x not in STOPWORDS and len(x) > 1 and _value(x) is None
        )
        if (counted := _COUNTED_AS.get(ws[i + 1] if i + 1 < len(ws) else "")) is not None:
            context |= {counted}  # what the number counts, in one word for the same people
        if v[0] == "number":
            context |= _date_month(ws, i)
        out.append((v[0], v[1], context))
    for i in range(len(ws)):
        rel = _relation(ws, i)
        if rel is None:
            continue
        near = ws[max(0, i - VALUE_CONTEXT) : i] + ws[i + 1 : i + 1 + VALUE_CONTEXT]
        context = frozenset(
            stem(x) for x in near
            if x not in STOPWORDS and len(x) > 1 and _word_kind(x) != rel[0]
        )  # fmt: skip
        out.append((rel[0], rel[1], context))
        if rel[0] == "breed":  # a greyhound is a dog: "Has a cat named Bramble" is another pet
            out.append(("pet", "dog", context))
    return out


@lru_cache(maxsize=65536)
def value_set(text: str) -> frozenset[tuple[str, str]]:
    """(kind, value) of each value of ``text`` as :func:`changed_values` reads them: numbers,
    days, months, relatives, sides of the body, ranks, a closed class's words. Cached: read for
    the history's sentences on every write."""
    return frozenset((kind, value) for kind, value, _ in _values(text))


# the kinds of value that must be said as they are: a number, a day, a month
EXACT_KINDS = frozenset(("number", "day", "month"))


def exact_values(text: str) -> frozenset[tuple[str, str]]:
    """(kind, value) of the numbers, days and months of ``text`` (:func:`value_set`)."""
    return frozenset(v for v in value_set(text) if v[0] in EXACT_KINDS)


def _given_otherwise(
    claimed: list[tuple[str, str, frozenset[str]]],
    said: list[tuple[str, str, frozenset[str]]],
    ignore: frozenset[str] = frozenset(),
) -> list[tuple[str, str, str]]:
    """(said, claimed, kind) for each value of the claim (:func:`_values`) the other text does
    not say where it says another of the kind, the claim does not, with a content word near
    both (beyond ``ignore``)."""
    said_set = {(k, v) for k, v, _ in said}
    claimed_set = {(k, v) for k, v, _ in claimed}
    out = []
    for kind, value, context in claimed:
        if (kind, value) in said_set:
            continue
        for kind2, value2, context2 in said:
            if (
                kind2 == kind
                and (kind2, value2) not in claimed_set
                and (context & context2) - ignore
            ):
                out.append((value2, value, kind))
                break
    return out


# a length said for one way of a trip ("40 minutes each way", "about 12k each way", "an hour one
# way"): twice it is the trip there and back, a sum the claim may give ("80 minutes a day")
_ONE_WAY = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(?:k|km|kms|mi|mins?|minutes?|miles?|hours?|hrs?|h)?\s+"
    r"(?:each|one|either)\s+(?:way|direction)\b",
    re.I,
)


@lru_cache(maxsize=16384)
def round_trips(text: str) -> frozenset[str]:
    """Twice each number ``text`` says of one way of a trip ("40 minutes each way": "80"): what
    a claim that gives the trip there and back concludes, not another value."""
    out = set()
    for m in _ONE_WAY.finditer(text):
        doubled = float(m.group(1)) * 2
        out.add(str(int(doubled)) if doubled.is_integer() else str(doubled))
    return frozenset(out)


def changed_values(claim: str, evidence: str) -> list[tuple[str, str]]:
    """(said, claimed): a number, day, month, relative, side of the body, rank, closed class's
    word or age in decades of the claim that ``evidence`` does not say where the evidence says
    another value of the same kind about the same thing (a content word near both; for a day or
    month, also when each text gives exactly one; for an age, the speaker's own): "Parents live
    4 hours away" against "my parents live 2 hours away" gives [("2", "4")]; "Returns to work on
    Wednesday" against "I go back to work on monday" gives [("monday", "wednesday")]; "Stayed
    with his sister in Gliwice" against "we stay with my brother in Gliwice" gives [("brother",
    "sister")]; "You're in your mid-thirties" against "I'm 41" gives [("41", "mid-thirties")].
    A claim that also says the evidence's value (a range, a correction) gives nothing for it.
    A number said in several words is read as one ("twelve hundred forty" says 1240:
    :func:`_in_digits`)."""
    claimed = _values(_in_digits(claim))
    said = _values(_in_digits(evidence))
    said_set = {(k, v) for k, v, _ in said}
    claimed_set = {(k, v) for k, v, _ in claimed}
    given = _given_otherwise(claimed, said)
    # whose relative each is: read only when a relative changed (this runs for every claim)
    theirs = _others_relatives(claim, evidence) if any(k == "kin" for *_, k in given) else set()
    out = [(other, value) for other, value, kind in given if kind != "kin" or other not in theirs]
    if out and (trips := round_trips(evidence)):
        # "Spends 80 minutes a day on the bus" / "40 minutes each way by bus": the sum
        out = [(other, value) for other, value in out if value not in trips]
    age = _age_mismatch(claim, evidence)
    if age is not None:
        out.append(age)
    # one day (or month) in each, and another one: the same thing said with other words around
    # it ("Getting tacos with Theo on Tuesday" / "we're getting tacos thursday")
    for kind in ("day", "month"):
        one = {v for k, v in claimed_set if k == kind}
        other = {v for k, v in said_set if k == kind}
        if len(one) == 1 and len(other) == 1 and one != other:
            pair = (next(iter(other)), next(iter(one)))
            if pair not in out:
                out.append(pair)
    # a claim that is only its class's word ("Is vegan", "Is a nurse") has no word around it to
    # tie it to the evidence's value: one value of the class in the evidence is the same thing
    # said otherwise ("I've been a vegetarian for ten years")
    negated = bool(word_set(claim) & NEGATIONS)  # "Doesn't own a car" / "I take the bus"
    for kind, value, context in claimed:
        if negated or context or kind not in _CLASS_FORMS or (kind, value) in said_set:
            continue
        other = {v for k, v in said_set if k == kind}
        if len(other) == 1 and (pair := (next(iter(other)), value)) not in out:
            out.append(pair)
    others_age = _others_age_mismatch(claim, evidence)
    if others_age is not None:
        out.append(others_age)
    out.extend(p for p in _sentence_relations(claim, evidence, claimed_set) if p not in out)
    return [p for p in out if not _same_said_otherwise(claim, *p)]


# one tie named from either end ("I am aunt first time!" / "Has a baby niece"): not another
# relative
_CONVERSE_KIN = frozenset(frozenset((a, b)) for a in ("aunt", "uncle") for b in ("niece", "nephew"))
# a distance after a number ("about 12 km each way"): "12k" said of it is 12 km, not 12,000
_DISTANCE = re.compile(r"\b(\d+)\s*(?:km|kms|kilomet(?:er|re)s?)\b", re.IGNORECASE)


def _same_said_otherwise(claim: str, said: str, claimed: str) -> bool:
    """Whether a value ``claimed`` that the evidence gives as ``said`` is the same thing said
    another way: the other end of one tie (an aunt's niece), or a distance "12k" for "12 km"."""
    if frozenset((said, claimed)) in _CONVERSE_KIN:
        return True
    return said == f"{claimed}000" and claimed in _DISTANCE.findall(claim)


# what a claim says came of a try ("Got the team leader job", "Is starting a master's in
# September", "Completed a PGCE") and what says only the try ("i've applied for the team leader
# role", "decided to apply for a part time masters", "I'm going for a PGCE in chemistry"): the
# outcome is not said. Authored here
_OUTCOMES = frozenset(
    ("got", "gets", "won", "wins", "passed", "passes", "landed", "lands", "accepted", "offered",
     "hired", "starting", "started", "starts", "joined", "joins", "completed", "finished",
     "earned", "graduated", "qualified")
)  # fmt: skip
_TRIES = frozenset(
    ("apply", "applies", "applied", "applying", "application", "interview", "interviewed",
     "interviewing", "shortlisted", "audition", "auditioned", "auditioning", "tried", "trying")
)  # fmt: skip
# the words after a try that say what was tried for ("apply for a part time masters in data")
TRIED_SPAN = 6
_TRY = re.compile(
    rf"\b(?:(?:{'|'.join(sorted(_TRIES))})\s+(?:for|to|at)|going\s+for"
    r"|(?:signed|signing|sign)\s+up\s+(?:for|to)|(?:registered|enrolled|booked)\s+(?:for|on|in))\s+",
    re.IGNORECASE,
)


def outcome_unsaid(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the try, the outcome) when ``claim`` says a try came off ("Got the team leader job")
    and ``evidence`` says only the try of the same thing ("i've applied for the team leader role
    though"): the words after the try share a content word with the claim, and the evidence
    says no outcome of its own. Not for a claim that says a try, a hedge or a negation itself
    ("Applied for the job", "Might get the job", "Didn't get the job")."""
    said = word_set(claim)
    outcome = next((w for w in words(claim) if w in _OUTCOMES), None)
    if outcome is None or said & (_TRIES | HEDGES | NEGATIONS):
        return None
    if word_set(evidence) & _OUTCOMES:
        return None
    wanted = content_stems(claim) - {stem(outcome)}
    for m in _TRY.finditer(evidence):
        toks = _clause_tokens(evidence[m.end() :])
        end = next((i for i, t in enumerate(toks) if not t[:1].isalnum()), len(toks))
        if content_stems(" ".join(toks[: min(end, TRIED_SPAN)])) & wanted:
            return m.group(0).strip().lower(), outcome
    return None


# the past of a verb a claim opens with that is not the verb with "-ed" ("Went back to uni")
_IRREGULAR_PAST = {
    "went": "go", "bought": "buy", "took": "take", "ran": "run", "began": "begin",
    "made": "make", "wrote": "write", "taught": "teach", "met": "meet", "left": "leave",
    "flew": "fly", "drove": "drive", "sold": "sell", "built": "build", "spent": "spend",
    "gave": "give", "learnt": "learn", "swam": "swim", "rode": "ride", "became": "become",
    "did": "do", "done": "do", "sent": "send", "paid": "pay", "brought": "bring", "kept": "keep",
    "found": "find",
}  # fmt: skip
# what a user says a plan with besides an intention's words ("saving up to go back to uni next
# year to study nursing"); "again" says it was done before ("I want to visit Japan again")
_SAYS_LATER = frozenset(
    ("next", "soon", "someday", "eventually", "saving", "later", "tomorrow", "tmrw", "tonight")
)
_CLAIM_SUBJECT = frozenset(("user", "the", "you", "he", "she", "they"))
# the words before a claim's past verb that make it a perfect ("Has ordered", "Has already sent")
_PERFECT = frozenset(("has", "have", "had", "already", "just", "now"))
# what a verb the plan is made of follows ("to study", "gonna start", "maybe I should paint",
# "imma do 10 more tomorrow")
_PLAN_BEFORE = frozenset(
    ("to", "gonna", "will", "wanna", "i'll", "we'll", "should", "could", "might", "i'd", "we'd",
     "imma", "ima")
)  # fmt: skip
# ... and what its "-ing" form follows ("thinking of moving to shopify next year")
_PLAN_ING = (("thinking", "of"), ("thinking", "about"), ("planning", "on"))


def _past_bases(word: str) -> frozenset[str]:
    """The present forms a past verb may be of ("studied": study; "moved": move, mov;
    "planned": plan), empty for a word that is no past."""
    if word in _IRREGULAR_PAST:
        return frozenset((_IRREGULAR_PAST[word],))
    if len(word) < 5 or not word.endswith("ed"):
        return frozenset()
    if word.endswith("ied"):
        return frozenset((word[:-3] + "y",))
    return frozenset((word[:-2], word[:-1], word[:-3]))


def plan_given_as_done(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the plan's words, the claim's past verb) when the claim opens with a past verb ("Studied
    nursing before", "Painted lines on the drive") that the evidence says only as a plan: after
    "to", "gonna", "will", "should", "could" or "might" (``_PLAN_BEFORE``) in a sentence that
    says an intention or a later time ("I'm really saving up to go back to uni next year to
    study nursing", "maybe I should paint lines"), and in no other form. Not for a claim
    that says a plan, a hedge or a negation itself, nor when the sentence says "again"."""
    ws = words(claim)
    while ws and ws[0] in _CLAIM_SUBJECT:
        ws = ws[1:]
    while ws and ws[0] in _PERFECT:  # "Has ordered a glaze set", "Has already sent"
        ws = ws[1:]
    if not ws or word_set(claim) & (HEDGES | NEGATIONS | _INTENTS):
        return None
    past = ws[0]
    bases = _past_bases(past)
    if not bases:
        return None
    found = None
    for sentence in sentences(evidence):
        toks = words(sentence)
        for i, w in enumerate(toks):
            if w == past:
                return None  # said as done
            if w not in bases and not w.endswith("ing"):
                continue
            before = tuple(toks[max(0, i - 2) : i])
            # an "-ing" form is read only after "thinking of" ("thinking of moving to shopify");
            # any other is left alone, as it was before it was read at all
            ing = before in _PLAN_ING and (w[:-3] in bases or f"{w[:-3]}e" in bases)
            if w not in bases and not ing:
                continue
            planned = ing or (i > 0 and toks[i - 1] in _PLAN_BEFORE)
            # an intention before the verb ("saving up to go back ... to study"), or a later
            # time anywhere in the sentence ("i'll order the glazes tonight")
            says = set(toks[:i]) & (_SAYS_INTENT | _SAYS_LATER) or set(toks) & _SAYS_LATER
            if not (planned and says) or "again" in toks:
                return None
            found = (f"{' '.join(before) if ing else toks[i - 1]} {w}", past)
    return found


# a liking said of a kind of animal ("I'm more of a cat person", "a dog lover"): not having one
_FOND_OF = re.compile(r"\b([a-z]+)\s+(?:person|people|lover|lovers|fan|guy|girl)\b", re.I)
_OWNS = frozenset(("has", "have", "owns", "own", "got"))


# ... or in a wish to get one ("Piotr wants to get a cat", "thinking of getting a dog", "we'd
# love a puppy")
_WANTED_PET = re.compile(
    r"\b(?:wants?|wanted|wanting|(?:would|'d)\s+(?:like|love)|thinking\s+(?:of|about)(?:\s+getting)?|getting"
    r"|adopt|adopting)\s+(?:to\s+(?:get|adopt|have)\s+)?(?:a|an|another)\s+([a-z]+)",
    re.I,
)


def liked_not_owned(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the liking, the claimed animal) when the claim says the user has an animal the evidence
    names only in a liking or a wish to get one ("Has a cat" / "I'm more of a cat person
    honestly", "Piotr wants to get a cat"): a taste or a wish, not a pet."""
    if not word_set(claim) & _OWNS or word_set(claim) & NEGATIONS:
        return None
    for w in words(claim):
        kind = _CLASS_WORDS.get(w)
        if kind is None or kind[0] != "pet":
            continue
        forms = frozenset(_CLASS_FORMS["pet"][kind[1]].split())
        # a mention in a question says no more than the wish ("is a cat in a shared flat a good
        # idea?")
        told = " ".join(x for x in sentences(evidence) if not x.rstrip().endswith("?"))
        said = sum(x in forms for x in words(told))
        fond = [
            m.group(0).lower()
            for pattern in (_FOND_OF, _WANTED_PET)
            for m in pattern.finditer(told)
            if m.group(1).lower() in forms
        ]
        if said and len(fond) == said:
            return fond[0], kind[1]
    return None


# the words before a relative a claim gives the user ("Has a cousin", "Your older sister", "User's
# mum"; not "Has children with two different mothers")
_GIVES_KIN = frozenset(
    """
    has have had a an one two three your his her their user's my older younger elder big little
    twin step late
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def relative_of_another(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the relative as said, as claimed) when the claim gives the user a relative the evidence
    names only as someone else's ("Has a cousin in Toronto" / "his cousin is in toronto and
    keeps saying IT jobs are easy there"): the husband's cousin is not the user's."""
    ws = words(claim)
    given = {
        _KIN[w] for i, w in enumerate(ws)
        if w in _KIN and (i == 0 or ws[i - 1] in _GIVES_KIN)
    }  # fmt: skip
    mine = given & {
        v for kind, v, role in _roles(claim, claim=True) if kind == "kin" and not role[0]
    }
    theirs = mine & _others_relatives(claim, evidence) if mine else frozenset()
    if not theirs:
        return None
    value = sorted(theirs)[0]
    return f"someone else's {value}", value


# words that say what a number counts in, not what it is about: "$3,400 a month" and "$310 a
# month" share only the unit
_UNIT_STEMS = frozenset(
    stem(w)
    for w in """
    day days week weeks month months year years hour hours minute minutes time times night nights
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def restated_amounts(claim: str, text: str) -> list[str]:
    """The claim's numbers, days and months that ``text`` gives otherwise about the same thing:
    another value of the kind with a content word near both that is not a unit ("Rent is £1,150
    a month" against "Rent £1,240 from April" gives ["1150"]; against "$310 a month" nothing).
    Read for later sentences very near a claim, with or without a correction word."""
    found = _given_otherwise(_values(claim), _values(text), ignore=_UNIT_STEMS)
    return list(dict.fromkeys(v for _, v, kind in found if kind in EXACT_KINDS))


# a number a correction gives as the new value ends its phrase ("she's actually 10 now", "the
# budget is more like £60 now", "my budget is 1200 actually") or is followed by the claim's own
# word after its number ("3 kids"): not "€1,100 for a bigger place" against "six years"
_RECOUNT_ENDS = frozenset(("", "now", "actually", "instead", "max", "tops", "then", "from"))


def _numbers_next(text: str) -> dict[str, set[str]]:
    """Each number of ``text`` (as :func:`_values` reads it) with the words right after it ("4k
    budget": 4000 -> budget)."""
    ws = words(text)
    out: dict[str, set[str]] = {}
    for i, (kind, value) in _value_tokens(ws):
        if kind == "number":
            j = i + 2 if ws[i][:1].isdigit() and ws[i + 1 : i + 2] == ["k"] else i + 1
            out.setdefault(value, set()).add(ws[j] if j < len(ws) else "")
    return out


def _recounted(claim: str, text: str) -> list[str]:
    """The claim's one number when a correction ``text`` gives one other number in its place and
    does not say the claim's: "Dog Biscuit is 9 years old" / "she's actually 10 now" gives
    ["9"], as a day or a month in each does in :func:`changed_values`. A sentence that repeats
    the claim's number ("he's the 9 year old actually, the 6 year old eats everything") gives
    nothing."""
    claimed, said = _numbers_next(claim), _numbers_next(text)
    if len(claimed) != 1 or len(said) != 1 or claimed.keys() == said.keys():
        return []
    ((old, old_next),), ((new, new_next),) = claimed.items(), said.items()
    if not _comparable(old, new):
        return []  # "Card down to £1,100" is no recount of "Pays Octopus £96 a month"
    return [old] if new_next & (_RECOUNT_ENDS | old_next) else []


# a recount corrects a count or an amount by less than this factor either way ("4 times a week"
# -> "really 2", "$120" -> "140 max", "8 people" -> "10 now"); a number ten times the claim's is
# the count of something else
RECOUNT_MAX_FACTOR = 5.0


def _comparable(old: str, new: str) -> bool:
    """Whether ``new`` may be ``old`` recounted: both positive and within
    :data:`RECOUNT_MAX_FACTOR` of each other (a value that is no plain number compares)."""
    try:
        a, b = float(old), float(new)
    except ValueError:
        return True
    if a <= 0 or b <= 0:
        return True
    return max(a, b) / min(a, b) < RECOUNT_MAX_FACTOR


# the words a later sentence sets an old value aside with, correction word or none: "8 not 9",
# "I said 9 but she's actually 10", "closer to 4 than 2"
_CORRECTION_TOKENS = frozenset(("not", "said", "than"))


def _requoted(toks: list[str], claimed: set[str]) -> list[str]:
    """The claim's values a sentence quotes as said before and gives otherwise ("I said 9 but
    she's actually 10", "I said 8 years, but ... it's 10 years total"), or sets right after a new
    one with "than" ("closer to 4 than 2"): the sentence gives another value of the kind the
    claim does not say."""
    vals = _value_tokens(toks)
    out = []
    for i, (kind, old) in vals:
        if old not in claimed or i == 0:
            continue
        others = [(j, v) for j, (k, v) in vals if k == kind and v != old and v not in claimed]
        quoted = toks[i - 1] == "said" and any(j > i for j, _ in others)
        if quoted or (toks[i - 1] == "than" and any(j == i - 2 for j, _ in others)):
            out.append(old)
    return out


_NOT = re.compile(r"\bnot\b", re.IGNORECASE)


def corrected_count(claim: str, text: str) -> list[str]:
    """The claim's numbers that ``text`` sets right with "<new> <unit> not <old>", the unit being
    the word after the number in the claim ("is three weeks not two" against "Visits her brother
    for two weeks in July" gives ["2"]; against "Has two kids" nothing). The unit ties the
    correction to the claim however little else of the sentence does."""
    if _NOT.search(text) is None:  # read for many sentences of a long history: most have none
        return []
    toks = _clause_tokens(text)
    ctoks = _clause_tokens(claim)
    units: dict[str, str] = {}
    for k in range(len(ctoks) - 1):
        v = _value(ctoks[k])
        if v is not None and v[0] == "number":
            units[v[1]] = stem(ctoks[k + 1])
    out = []
    for i in range(2, len(toks) - 1):
        old = _value(toks[i + 1]) if toks[i] == "not" else None
        if old is None or old[0] != "number" or old[1] not in units:
            continue
        for k in (i - 2, i - 3):  # "three weeks not two", "three weeks, not two"
            new = _value(toks[k]) if k >= 0 else None
            if new is not None and new[0] == "number" and new != old:
                if stem(toks[k + 1]) == units[old[1]]:
                    out.append(old[1])
                break
    return out


def corrected_values(claim: str, text: str, *, correction: bool = False) -> list[str]:
    """The claim's values that a later sentence ``text`` corrects: a number, day or month of the
    claim right after "not", with another of its kind one or two words before it that the claim
    does not say ("8 not 9", "it's six years, not seven"; "june not may" is the month); and,
    when ``correction`` (the caller's reading: the sentence reads as a correction, in a turn
    about the claim), any value :func:`changed_values` reads as given otherwise ("Now it is 9
    March" against "Has her driving test on 12 February") and the claim's one number where the
    sentence gives one other (:func:`_recounted`: "she's actually 10 now"). Read against the
    sentences said after the one a claim rests on: the claim keeps the old value."""
    toks = words(text)
    if not correction and not _CORRECTION_TOKENS & set(toks):
        return []  # read for every later sentence near the claim: most say none of these
    claimed = {v for _, v, _ in _values(claim)} | ({"may"} if "may" in words(claim) else set())
    if not claimed:
        return []
    out = _requoted(toks, claimed)
    for i, t in enumerate(toks):
        if t != "not" or i + 1 >= len(toks) or i == 0:
            continue
        said_old = _value(toks[i + 1])
        for new_word in toks[max(0, i - 2) : i][::-1]:
            new, old = _value(new_word), said_old
            if old is None and toks[i + 1] == "may" and new is not None and new[0] == "month":
                old = ("month", "may")  # "june not may": a month, not the modal
            if new is not None and old is not None and new[0] == old[0] and new != old:
                if old[1] in claimed and new[1] not in claimed:  # the claim may be the fix
                    out.append(old[1])
                break
    if correction:
        out += [claimed_value for _, claimed_value in changed_values(claim, text)]
        out += _recounted(claim, text)
    return list(dict.fromkeys(out))


def _name_slots(text: str) -> list[tuple[str, frozenset[str]]]:
    """(name, content stems around it) of each capitalised word of ``text`` that does not start
    a sentence (:func:`proper_names`), a day's or month's name left out."""
    out = []
    for sent in sentences(text):
        toks = _WORD.findall(sent)
        low = [t.lower() for t in toks]
        for i in _names_at(toks):
            w = _unpossessed(toks[i])
            if _value(w) or w in _DATES:
                continue
            near = low[max(0, i - VALUE_CONTEXT) : i] + low[i + 1 : i + 1 + VALUE_CONTEXT]
            context = frozenset(
                stem(x) for x in near if x not in STOPWORDS and len(x) > 1 and _value(x) is None
            )
            out.append((w, context))
    return out


def swapped_names(
    claim: str, evidence: str, user: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """(said, claimed): a name of the claim that ``evidence`` does not say where the evidence
    names another in the same place (a content word near both): "Grew up in social housing in
    Bristol" against "I grew up in social housing in Swindon" gives [("swindon", "bristol")];
    "Cat Pepper needs a sedative" against "the vet said Miso might need a sedative" gives
    [("miso", "pepper")]. The claim's name may be said elsewhere in the conversation: here the
    sentence that says the rest of it gives another one. Read for a claim that would be stated
    only (an inference's names are often not its evidence's: "Has never travelled to Japan or
    East Asia" from a sentence about Europe); measured on the dev split and the held-out sets,
    for every claim it moved as many inferences away from their label as it caught swaps.
    ``user``: the user's own name by its lowercased parts, never another name for the claim's
    ("Hi, this is Elena from next door" says nothing against "Lives next door to Jamal")."""
    skip = user | _STREET_TYPES
    said_names = [(n, c) for n, c in _name_slots(evidence) if n not in skip]
    if not said_names:
        return []
    ev_words = name_words(evidence)
    claim_words = name_words(claim)
    out = []
    for name, context in _name_slots(claim):
        if name in _STREET_TYPES or not unsaid_names([name], ev_words):
            continue
        for other, context2 in said_names:
            if other not in claim_words and context & context2:
                out.append((other, name))
                break
    return out


# the kinds :func:`_sentence_relations` compares (a side of the body and a rank need their own
# context: "my left knee" / "right shoulder" are two facts, not one said twice; a season or a part
# of the day is also said by a month or an hour, and one sentence often gives the times of two
# things: "since October 2021, and my permit is due for renewal in the spring")
_SENTENCE_KINDS = frozenset(("kin", *_CLASS_FORMS)) - {"season", "daypart"}
# whose a relative or a pet is, by the word before it: the user's ("my", and in a claim written
# about the user "his", "her", "their", "your") or someone else's (in the user's own words "her",
# "his", "their", "your"; a name's or another person's "'s" in either)
_MINE = frozenset(("my", "our"))
_THIRD = frozenset(("his", "her", "their"))


def _roles(text: str, *, claim: bool) -> list[tuple[str, str, tuple[bool, bool]]]:
    """(kind, value, (someone else's, owns something)) of each relative or closed class's word
    of ``text`` ("Camila's sister": someone else's; "his mum's house": owns the house)."""
    ws = words(text)
    out = []
    for i in range(len(ws)):
        rel = _relation(ws, i)
        if rel is None or rel[0] not in _SENTENCE_KINDS:
            continue
        others = False
        for w in reversed(ws[max(0, i - 2) : i]):
            if w in _MINE:
                break
            if w in _THIRD or w == "your":
                others = not claim
                break
            if w.endswith("'s"):
                others = True
                break
        out.append((rel[0], rel[1], (others, ws[i].endswith("'s"))))
    return out


def _others_relatives(claim: str, evidence: str) -> frozenset[str]:
    """The relatives ``evidence`` names only as someone else's ("Finn's with his dad", "hannah's
    sister's 40th") where the claim names its relatives as the user's ("Son Finn is in high
    school", "Lives with his partner Hannah and their daughter"): another family's relative is
    not another value of the user's."""
    if any(role[0] for kind, _, role in _roles(claim, claim=True) if kind == "kin"):
        return frozenset()
    roles: dict[str, set[bool]] = {}
    for kind, value, role in _roles(evidence, claim=False):
        if kind == "kin":
            roles.setdefault(value, set()).add(role[0])
    return frozenset(v for v, whose in roles.items() if whose == {True})


def _sentence_relations(
    claim: str, evidence: str, claimed: set[tuple[str, str]]
) -> list[tuple[str, str]]:
    """(said, claimed) for a relative or a closed class's word the claim gives exactly one of,
    where the evidence's sentences that say the claim's other content words give exactly one
    other of the same kind, in the same role, and none of the claim's: the same thing said
    further apart than the context words reach ("Got the necklace from grandfather" / "This
    necklace was a gift from my grandma, I wear it every day"). Only those sentences (a relative
    named elsewhere in a long turn is about something else), and only a relative whose it is
    as the claim's is ("Dog is a six-year-old Staffie" / "he's a 6 year old staffie, my
    flatmate's cat Luna bosses him around") and that owns something when the claim's does ("Is
    selling his mum's house" / "My sister and I need to decide whether to sell it")."""
    one: dict[str, tuple[str, tuple[bool, bool]]] = {}
    many: set[str] = set()
    for kind, value, role in _roles(claim, claim=True):
        if kind in one and one[kind][0] != value:
            many.add(kind)
        one[kind] = (value, role)
    one = {k: v for k, v in one.items() if k not in many and (k, v[0]) in claimed}
    if not one:
        return []
    own = frozenset(
        stem(w) for w in words(claim)
        if w not in STOPWORDS and len(w) > 1 and _value(w) is None and _word_kind(w) is None
    )  # fmt: skip
    if not own:
        return []
    near: dict[str, set[tuple[str, tuple[bool, bool]]]] = {}
    for sentence in sentences(evidence):
        if content_stems(sentence) & own:
            for kind, value, role in _roles(sentence, claim=False):
                near.setdefault(kind, set()).add((value, role))
    out = []
    for kind, (value, role) in one.items():
        other = near.get(kind, set())
        values = {v for v, _ in other}
        if len(other) == 1 and value not in values and next(iter(other))[1] == role:
            out.append((next(iter(values)), value))
    return out


# an age in decades ("You're in your mid-thirties", "Is in their 40s") against the age the user
# gives ("I'm 41 actually", "I'm 54 and thinking about a bootcamp"): the years of the decade each
# part covers, generously (an age on the edge of two parts is in both)
_DECADE_WORDS = {
    "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
    "seventies": 70, "eighties": 80, "nineties": 90,
}  # fmt: skip
_DECADE_PARTS = {"early": (0, 4), "mid": (3, 7), "late": (6, 9), None: (0, 9)}
# the decade as a value: "mid-thirties", "late 40s", "twenties"
_DECADE_VALUE = (
    r"(?:(?P<part>early|mid|late)[-\s]+)?"
    r"(?P<word>twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties|[2-9]0s)"
)
_DECADE = re.compile(
    rf"\bin\s+(?:his|her|their|your|my)\s+(?P<value>{_DECADE_VALUE})\b", re.IGNORECASE
)
# a claim that gives a range or a bound ("in his forties or older", "at least in her fifties")
# is not one decade
_AGE_BOUNDS = frozenset(("or", "least", "older", "younger", "over", "under", "thereabouts"))
# the speaker's own age: "I'm 41", "I am 26, just got my first job", "I just turned 54"; not a
# distance or a duration ("I'm 20 minutes away")
_OWN_AGE = re.compile(
    r"\b(?:i'm|i am|im|i just turned|i turned)\s+(?:only\s+|now\s+|actually\s+)?(\d{2})\b"
    r"(?!\s*(?:%|k\b|kg|km|min|hour|hr|week|month|day|mile|lb|pound|euro|dollar|quid|percent))",
    re.IGNORECASE,
)


def _own_ages(evidence: str) -> set[int]:
    """The ages the speaker gives themselves in ``evidence`` ("I'm 36", "I just turned 40")."""
    return {int(a) for a in _OWN_AGE.findall(evidence)}


def _decade_and_age(claim: str, evidence: str) -> tuple[re.Match[str], int, bool] | None:
    """The claim's decade, the one age the evidence gives the speaker and whether the age is in
    the decade (or the part of it the claim names), else None."""
    m = _DECADE.search(claim)
    if m is None or set(words(claim)) & _AGE_BOUNDS:
        return None
    ages = _own_ages(evidence)
    if len(ages) != 1:
        return None
    (age,) = ages
    part = m.group("part").lower() if m.group("part") else None
    word = m.group("word").lower()
    decade = _DECADE_WORDS.get(word) or int(word[:2])
    low, high = _DECADE_PARTS[part]
    return m, age, decade + low <= age <= decade + high


def _age_mismatch(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the user's age, the claim's) when the claim puts the user in a decade (or a part of one)
    the age the evidence gives is not in, or gives the user another exact age ("Is 37 years
    old" / "I'm 36 and I work as a nurse"), else None."""
    exact = _CLAIMED_AGE.match(claim.strip())
    if exact is not None:
        ages = _own_ages(evidence)
        if len(ages) == 1 and int(exact.group(1)) not in ages:
            return str(next(iter(ages))), exact.group(1)
        return None
    found = _decade_and_age(claim, evidence)
    if found is None or found[2]:
        return None
    return str(found[1]), found[0].group("value").lower()


# another person's age in years: "a 2 yr old", "my 6-year-old son", "a daughter aged 11",
# "Leo is 8", "Ada, who is 4", "she's 11"; not a duration, an amount or a time ("3 days", "is 8
# quid", "it's 10 now" has no person)
_AGE_UNITS = (
    r"(?!\s*(?:%|k\b|kg|km|min|hour|hr|week|month|day|mile|lb|pound|euro|dollar|quid|percent"
    r"|am\b|pm\b|o'clock|:|\.\d|,\d))"
)
_YEARS_OLD = re.compile(r"\b(\d{1,2})[-\s]?(?:yrs?|years?)[-\s]?olds?\b(?:\s+([a-z]+))?", re.I)
_AGED = re.compile(r"\b([a-z]+)\s+aged\s+(\d{1,2})\b" + _AGE_UNITS, re.I)
_IS_AGE = re.compile(
    r"\b([a-z]+)(?:,\s*who)?(?:'s|\s+is|\s+was|\s+(?:just\s+)?turned|\s+turns)\s+"
    r"(?:only\s+|now\s+|nearly\s+|almost\s+|just\s+)?(\d{1,2})\b" + _AGE_UNITS,
    re.I,
)
# the young people whose age a claim gives by their kind, not their name ("Has a 3-year-old
# child"); a pronoun stands for one of them in the evidence ("she's 11")
_YOUNG = frozenset(
    ("child", "children", "kid", "kids", "son", "sons", "daughter", "daughters", "baby",
     "toddler", "boy", "boys", "girl", "girls", "he", "she")
)  # fmt: skip
# the pronoun a person of a kind is said with
_HE = frozenset(("he",))
_SHE = frozenset(("she",))
_PRONOUNS_OF = {
    **dict.fromkeys(("son", "sons", "boy", "boys", "brother", "father", "husband"), _HE),
    **dict.fromkeys(("daughter", "daughters", "girl", "girls", "sister", "mother", "wife"), _SHE),
}
_NO_PERSON = frozenset(("it", "that", "this", "there", "which", "what", "who", "user", "you", "i"))


@lru_cache(maxsize=65536)
def _person_ages(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """(age, the words naming whose it is) for each age of a person in ``text``: a name or a
    word in ``_YOUNG`` before "is <age>" (with a relative just before it: "my son Leo is 8"),
    or after "<age>-year-old"; "a 2 yr old" alone is no one's in particular (empty). Cached:
    read for the linked turn of every claim of a write."""
    out: list[tuple[str, frozenset[str]]] = []
    for sentence in sentences(text):
        for m in _YEARS_OLD.finditer(sentence):
            after = (m.group(2) or "").lower()
            out.append((m.group(1), frozenset({after} & _YOUNG)))
        for m in [*_AGED.finditer(sentence), *_IS_AGE.finditer(sentence)]:
            who = m.group(1).lower()
            if who in _NO_PERSON or who in STOPWORDS - _YOUNG:
                continue
            before = words(sentence[: m.start(1)])[-2:]
            kin = {w for w in before if _kin(w) is not None or w in _YOUNG}
            out.append((m.group(2), frozenset({who, *kin})))
    return tuple(out)


def _others_age_mismatch(claim: str, evidence: str) -> tuple[str, str] | None:
    """("aged <said>", "aged <claimed>") when the claim gives someone else an age the evidence
    gives them otherwise: a named person another age ("Son Leo is 11" / "She's 11. My son Leo
    is 8"), or a child by kind an age no one has where the evidence gives a child's age ("Has a
    3-year-old child" / "3 days now, no hot water. i have a 2 yr old"). The number itself may
    be said of something else, so the number rules do not see it."""
    said = _person_ages(evidence)
    if not said:
        return None
    said_ages = {age for age, _ in said}
    for age, holders in _person_ages(claim):
        names = {h for h in holders if h not in _YOUNG and _kin(h) is None}
        if names:
            theirs = {a for a, hs in said if hs & names}
            # "he's 9 now" may be Leo's age; "she's 11" is not a son's
            kind = next(iter(holders & _PRONOUNS_OF.keys()), "")
            could = _PRONOUNS_OF.get(kind, _HE | _SHE)
            if theirs and age not in theirs and not any(age == a and hs & could for a, hs in said):
                return f"aged {min(theirs, key=int)}", f"aged {age}"
        elif holders and age not in said_ages:
            young = sorted({a for a, hs in said if hs <= _YOUNG}, key=int)
            if young:
                return f"aged {young[0]}", f"aged {age}"
    return None


# a claim that gives the user's exact age and nothing about it but what the user said with it
# ("Is 41 years old", "User is 38 and cannot swim", "You're 29"): the age comes first, after
# the user as the subject; another person's age ("Son Finn is 15") is not the user's
_CLAIMED_AGE = re.compile(
    r"^(?:(?:the\s+)?user\s+is|you(?:'re|\s+are)|is|aged)\s+(\d{2})(?:\s+years?\s+old)?\b"
    r"(?!\s*(?:%|-|k\b|kg|km|min|hour|hr|week|month|day|mile|lb|pound|euro|dollar|quid|percent))",
    re.IGNORECASE,
)


def said_age(claim: str, evidence: str) -> str | None:
    """The user's age when the claim gives it and the evidence is the user saying it ("Is 29
    years old" / "I'm 29, take home about 2,400 a month"), else None. The support model reads
    such a pair as making the claim inferable (0.78-0.98), not as saying it."""
    m = _CLAIMED_AGE.match(claim.strip())
    if m is None:
        return None
    ages = _own_ages(evidence)
    return m.group(1) if ages == {int(m.group(1))} else None


def age_in_decade(claim: str, evidence: str) -> str | None:
    """The decade a claim puts the user in when the evidence gives the user's exact age in it
    ("Is in their thirties" / "I'm 34 and just started piano"), else None: the claim is true
    and follows from what was said, but it is a conclusion, not what the user said."""
    found = _decade_and_age(claim, evidence)
    return found[0].group("value").lower() if found is not None and found[2] else None


# grammatical negations only ("I hate running" is a feeling about running, not a denial of it)
_DENIALS = NEGATIONS - {"dislikes", "hates", "avoids", "dislike", "hate", "avoid", "nothing",
                        "none", "neither", "nor"}  # fmt: skip
# "hardly" and "scarcely" deny as "not" does ("hardly an empty nest", "I hardly drive these
# days"); not "barely", which as often says it was just done ("barely passed")
_SCARCELY = frozenset(("hardly", "scarcely"))
_SAYS_DENIAL = NEGATIONS | _SCARCELY  # a claim with one of these is not denied by a denial
# a negation after these does not deny what follows ("if not", "or not", "whether or not")
_PSEUDO_BEFORE = frozenset(("if", "or", "whether"))
# ... nor before these ("not only", "not just", "no doubt", "not sure", "not yet", "not until
# August": then, not never), "really" and "even" read past ("not really sure" is not a denial,
# "can't really speak it" and "the ankylosaurus, not even T-rex" are)
_PSEUDO_AFTER = frozenset(("only", "just", "doubt", "sure", "yet", "too", "until", "till"))
_CANNOT = frozenset(("can't", "cannot", "cant", "couldn't", "couldnt"))
# ... and a negation before these says the opposite of a denial ("I never miss a game", "I don't
# mind cooking", "can't wait to move"): what follows is kept, done or wanted
LITOTES = frozenset(("miss", "misses", "missed", "mind", "minds", "wait", "resist", "help"))
# words a negation reaches that say how much or when, not what ("not every other weekend")
_NOT_DENIED = frozenset(("every", "anymore", "yet", "lol", "sure", "idk", "btw", "else", "ever"))
_CLAUSE_TOKEN = re.compile(rf"{LETTER}(?:{LETTER}|['\-])*|\d+(?:[.,]\d+)?|[,.;:!?()]|\n")


def _clause_tokens(text: str) -> list[str]:
    """Lower-cased words, numbers and the punctuation that ends a clause, in order."""
    return [t.lower() for t in _CLAUSE_TOKEN.findall(text)]


# content words this far after a negation are what it denies ("I'm not a mom", "no meal plan")
DENIED_SPAN = 3


# what follows "<person>'s" when the "'s" is "is" or "has" ("my brother's getting married",
# "mum's in hospital", "my dad's a plumber") rather than a possessive ("my sister's wedding")
_CONTRACTION_NEXT = frozenset(
    """
    a an the not never always also still just really so very been got gone in at on back off
    out home married engaged pregnant retired divorced allergic vegan vegetarian from into now
    finally currently only all obsessed
    """.split()  # noqa: SIM905 - a word list reads best as text
)


# nouns in -ing that follow a possessive ("my sister's wedding", "my son's christening")
_ING_NOUNS = frozenset(
    """
    wedding weddings christening morning evening meeting building thing things ceiling clothing
    pudding sibling siblings darling feeling feelings painting paintings ring spring string
    wing king funding earring earrings stocking stockings
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def contracted(toks: list[str], j: int) -> bool:
    """Whether the word before ``j`` ends in an "'s" that is a verb ("is", "has"): the next word
    says so ("getting", "in", "a"), not a noun it owns ("wedding")."""
    if not toks[j - 1].lower().endswith("'s") or j >= len(toks):
        return False
    nxt = toks[j].lower()
    if nxt in _CONTRACTION_NEXT:
        return True
    return nxt.endswith("ing") and len(nxt) > 4 and nxt not in _ING_NOUNS


def _owner(toks: list[str], nxt: int) -> bool:
    """Whether the word before ``toks[nxt]`` is an owner ("Ciarán's flat", "Jo's wedding"), not
    a contraction ("Jo's coming", "mum's actually selling"): an "'s" before a content word."""
    if not toks[nxt - 1].endswith("'s") or nxt >= len(toks) or contracted(toks, nxt):
        return False
    after = toks[nxt]
    return after[:1].isalpha() and after not in STOPWORDS and not after.endswith("ly")


def _span_stems(toks: list[str], start: int) -> set[str]:
    """Stems of the content words in the DENIED_SPAN tokens from ``start``, within the clause.
    An owner is not what is denied but whose it is: "we didn't stay in Ciarán's flat" denies the
    flat, not Ciarán (the owner's word does not count towards the span)."""
    out: set[str] = set()
    end = start + DENIED_SPAN
    i = start
    while i < min(end, len(toks)):
        x = toks[i]
        i += 1
        if not x[:1].isalnum() or x in ("but", "just"):
            break
        if x in STOPWORDS or x in NEGATIONS or x in _NOT_DENIED:
            continue
        if _owner(toks, i):
            end += 1  # "Ciarán's flat": the flat is denied
            continue
        if len(x) > 1 or x.isdigit():  # "its 4 roommates not 3"
            out.add(stem(x))
    return out


# how far back a contrast's affirmed words reach ("the exam is June 9 not June 2")
CONTRAST_SPAN = 4


def _contrasted(toks: list[str], i: int) -> set[str]:
    """Stems of the content words in the CONTRAST_SPAN tokens before the "not" at ``i``, within
    its clause (a comma right before "not" sets the contrast off: "six years, not seven")."""
    out: set[str] = set()
    for x in reversed(toks[max(0, i - CONTRAST_SPAN) : i]):
        if x == "," and not out:
            continue
        if not x[:1].isalnum():
            break
        if x not in STOPWORDS and (len(x) > 1 or x.isdigit()):
            out.add(stem(x))
    return out


@lru_cache(maxsize=65536)
def denied_stems(text: str) -> frozenset[str]:
    """Stems of the content words a negation in ``text`` denies: the next few words of its
    clause ("no meal plan lol" -> meal, plan; "I'm not a mom!!" -> mom). Not after "if" / "or"
    ("if not I'll look"), not in "not only", "not sure", "no doubt"..., and "no" only right
    before a content word ("no husband", but not "no, the pharmacy is ..."). In a contrast ("June 9
    not June 2") only what follows "not" is denied."""
    return frozenset().union(*_denials(text))


@lru_cache(maxsize=65536)
def _denials(text: str) -> tuple[frozenset[str], ...]:
    """:func:`denied_stems`, one set per negation."""
    toks = _clause_tokens(text)
    out: list[frozenset[str]] = []
    for i, t in enumerate(toks):
        if (t not in _DENIALS and t not in _SCARCELY) or (i > 0 and toks[i - 1] in _PSEUDO_BEFORE):
            continue
        after = toks[i + 1 : i + 1 + DENIED_SPAN]
        if after[:1] == ["even"] and after[1:2] and _value(after[1]) is not None:
            continue  # "not even 5 minutes away": less than, not a denial
        if t in _SCARCELY and after[:1] and _value(after[0]) is not None:
            continue  # "hardly 5 minutes away": less than
        start = i + 1
        if after[:1] in (["really"], ["even"], ["actually"]):
            # "I can't really speak it", "not even T-rex", "I've never actually been to
            # Colombia" deny as "I can't speak it" does, over as many words ("I don't really
            # talk to Jenna anymore" denies Jenna)
            after, start = toks[i + 2 : i + 2 + DENIED_SPAN], i + 2
        if after and (after[0] in _PSEUDO_AFTER or after[0] in LITOTES):
            continue
        if t in _CANNOT and after[:1] == ["believe"]:
            continue  # "can't believe mum's selling the house": surprise, not a denial
        if t == "no" and (not after or after[0] in STOPWORDS or not after[0][:1].isalpha()):
            continue
        span = _span_stems(toks, start)
        if _contrast_at(toks, i):
            # a contrast ("the exam is June 9 not June 2", "Lisbon not Porto"): what the clause
            # says before "not" it affirms, so only the rest is denied
            span -= _contrasted(toks, i)
        out.append(frozenset(span))
    for i, t in enumerate(toks):
        if t == "none" and toks[i + 1 : i + 3] in (["of", "us"], ["of", "them"]):
            # "none of us eat beef": as "we don't eat beef"
            out.append(frozenset(_span_stems(toks, i + 3)))
        elif t == "nothing" and _speaker_verb(toks, i) and toks[i + 1 : i + 2] != ["but"]:
            # "I take nothing for blood pressure": the speaker's verb only ("we paid nothing for
            # the flights" does not deny the flights); not "I eat nothing but salad"
            out.append(frozenset((stem(toks[i - 1]),)))
    return tuple(d for d in out if d)


def _contrast_at(toks: list[str], i: int) -> bool:
    """Whether the "not" at ``toks[i]`` sets off a contrast ("June 9 not June 2", "six years, not
    seven"): it follows a content word or a comma, not a word of the stop list ("I'm not")."""
    return toks[i] == "not" and i > 0 and toks[i - 1] not in STOPWORDS


@lru_cache(maxsize=65536)
def _contrasts(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """(affirmed, denied) stems of each contrast in ``text`` ("it's six years, not seven": {6,
    year}, {7}): what the clause says before "not" and what it denies after it."""
    toks = _clause_tokens(text)
    return tuple(
        (frozenset(_contrasted(toks, i)), frozenset(_span_stems(toks, i + 1)))
        for i in range(len(toks))
        if _contrast_at(toks, i)
    )


def contrasts(text: str) -> bool:
    """Whether ``text`` sets one thing against another ("the 10k not the half")."""
    return bool(_contrasts(text))


def _agreed_contrasts(claim_stems: frozenset[str], text: str) -> set[str]:
    """What the contrasts of ``text`` deny that the claim agrees with: a contrast whose affirmed
    value the claim says, of the kind the contrast denies (a number for a number, a day for a
    day), is the claim's own correction ("Has taught 7th grade math for six years" / "it's six
    years, not seven": the seven denies nothing of it; "the exam is June 9 not June 2" still
    denies "on 2 June", "it's now March 15 not the 14th" still denies "on March 14")."""
    out: set[str] = set()
    for affirmed, denied in _contrasts(text):
        kinds = {v[0] for x in denied if (v := _value(x)) is not None}
        said = (affirmed - denied) & claim_stems
        if any((v := _value(x)) is not None and v[0] in kinds for x in said):
            out |= denied
    return out


def _speaker_verb(toks: list[str], i: int) -> bool:
    """``toks[i]`` follows the speaker and one content word ("I take nothing", "we ate nothing")."""
    return i >= 2 and toks[i - 2] in ("i", "we") and toks[i - 1] not in STOPWORDS


# a change of state ends what follows it as a negation denies it ("I quit the bakery", "we sold
# the car", "instead of evenings at the polytech", "I used to live in Boston", "no more waakye
# every morning", "I want to get back into lifting"); True: only right after the speaker ("I
# quit", "we've sold"), not "telling me to quit", "my mum used to make", "I'm used to project
# plans", "the left knee"
_ENDINGS: dict[tuple[str, ...], bool] = {
    ("quit",): True, ("left",): True, ("sold",): True, ("used", "to"): True,
    ("quitting",): False, ("stopped",): False, ("gave", "up"): False, ("giving", "up"): False,
    ("no", "longer"): False, ("instead", "of"): False, ("moved", "out", "of"): False,
    ("moved", "away", "from"): False, ("cancelled",): False, ("canceled",): False,
    ("finished", "at"): False, ("broke", "up", "with"): False, ("no", "more"): False,
    ("dropped",): True, ("gone", "off"): True, ("scrap",): False, ("scrapped",): False,
    ("called", "off"): False, ("traded", "in"): True, ("withdrew",): True,
    ("took", "me", "off"): False, ("took", "myself", "off"): False,
    ("took", "ourselves", "off"): False, ("took", "us", "off"): False,
    ("pulled", "out", "of"): True, ("get", "back", "into"): False,
    ("getting", "back", "into"): False, ("was", "going", "to"): True,
    ("were", "going", "to"): True,
}  # fmt: skip
# ... and these end what comes before them in the clause, a plan that did not happen ("the
# Chorlton house fell through", "Dave has pulled out", "the trip got cancelled"); after the
# speaker they are something else ("I fell through the ice", "I pulled out my phone")
_ENDED_BEFORE = (
    ("fell", "through"), ("falls", "through"), ("fallen", "through"), ("fell", "thru"),
    ("falls", "thru"), ("fallen", "thru"), ("pulled", "out"),
    ("was", "cancelled"), ("got", "cancelled"), ("was", "canceled"), ("got", "canceled"),
    ("was", "called", "off"), ("got", "called", "off"), ("got", "adopted"), ("was", "adopted"),
)  # fmt: skip
# "dropped" ends a plan, not "dropped off the kids" / "dropped by"
_NOT_DROPPED = frozenset(("off", "by", "in", "me", "him", "her", "them", "us"))
_ENDING_STARTS = frozenset(phrase[0] for phrase in _ENDINGS)
_PRONOUN_SPEAKER = frozenset(("i", "we", "i've", "we've", "i'd", "we'd"))
_SPEAKER = _PRONOUN_SPEAKER | frozenset(("just", "finally", "already", "also"))
# a claim with one of these says itself that the state ended or is past ("Used to work at a
# bakery", "Quit smoking", "Was a nurse"): an ending in the user's words confirms it
_PAST_MARKERS = frozenset(
    ("used", "former", "formerly", "previously", "once", "quit", "left", "stopped", "ex", "past",
     "spent", "until", "before", "sold", "gave", "longer", "anymore", "moved", "ended",
     "finished", "was", "had", "withdrew", "traded", "instead")
)  # fmt: skip


def _stems_before(toks: list[str], end: int) -> set[str]:
    """Stems of the content words in the DENIED_SPAN + 1 tokens before ``end``, in its clause."""
    out: set[str] = set()
    for x in reversed(toks[max(0, end - DENIED_SPAN - 1) : end]):
        if not x[:1].isalnum() or x in ("but", "and", "so"):
            break
        if x not in STOPWORDS and x not in NEGATIONS and (len(x) > 1 or x.isdigit()):
            out.add(stem(x))
    return out


# "I said 8 years, but ... it's 10": the numbers said before "but" and not after it are no
# longer so (only numbers: "Has five grandchildren" shares "grandchildren" with "I said four
# grandchildren, but now it is five" and is what the user says now)
_SAID_BEFORE = re.compile(
    r"\bi (?:said|told you|thought)\b(?P<old>[^.!?]*?)\bbut\b(?P<new>[^.!?]*)"
)


@lru_cache(maxsize=65536)
def ended_stems(text: str) -> frozenset[str]:
    """Stems of the content words a change of state in ``text`` ends: the next few words of its
    clause ("I quit the bakery last month" -> bakery; "we sold our car" -> car), the words before
    a plan that fell through ("the Chorlton house fell through" -> chorlton, house) and a number
    the user takes back ("I said 8 years, but it's 10" -> 8)."""
    return _changed_state(text) | fallen_through(text)


@lru_cache(maxsize=65536)
def _changed_state(text: str) -> frozenset[str]:
    """What a change of state ends ("I quit the bakery") or a number the user takes back."""
    out = set(_ended_by(_clause_tokens(text), _ENDINGS))
    for m in _SAID_BEFORE.finditer(text.lower()):
        out |= numbers(m.group("old")) - numbers(m.group("new"))
    return frozenset(out)


def _after_speaker(toks: list[str], i: int) -> bool:
    """``toks[i]`` follows the speaker ("I quit", "we've sold"), or an adverb that opens the
    speaker's clause or follows them ("just quit my job", "I just quit"); not someone else's
    ("my manager Priti just quit")."""
    if i == 0 or toks[i - 1] not in _SPEAKER:
        return False
    if toks[i - 1] in _PRONOUN_SPEAKER:
        return True
    return (
        i < 2
        or toks[i - 2] in _PRONOUN_SPEAKER
        or not toks[i - 2][:1].isalnum()
        or (toks[i - 2] in ("and", "but", "so"))
    )


def _ended_by(toks: list[str], endings: dict[tuple[str, ...], bool]) -> set[str]:
    """Stems of the words the ``endings`` (:data:`_ENDINGS`' form) end in ``toks``."""
    out: set[str] = set()
    for i, t in enumerate(toks):
        if t not in _ENDING_STARTS:
            continue
        for phrase, after_speaker in endings.items():
            if tuple(toks[i : i + len(phrase)]) != phrase:
                continue
            if after_speaker and not _after_speaker(toks, i):
                continue
            nxt = toks[i + len(phrase) : i + len(phrase) + 1]
            if phrase == ("dropped",) and nxt and nxt[0] in _NOT_DROPPED:
                continue
            out |= _span_stems(toks, i + len(phrase))
    return out


@lru_cache(maxsize=65536)
def fallen_through(text: str) -> frozenset[str]:
    """The words before a plan that fell through ("the Chorlton house fell through", "Dave has
    pulled out"): whoever its subject is, it is the user's plan that ended."""
    toks = _clause_tokens(text)
    out: set[str] = set()
    for i in range(1, len(toks)):
        for phrase in _ENDED_BEFORE:
            if tuple(toks[i : i + len(phrase)]) == phrase and toks[i - 1] not in _SPEAKER:
                out |= _stems_before(toks, i)
        if toks[i] == "off" and _called_off(toks, i):
            out |= _stems_before(toks, i)
    return frozenset(out)


# "lisbon's off obviously", "December is off again", "so the moving-in plan is off": a plan called
# off, "off" ending its clause or followed by one of these; not "I'm off to Porto", "carol's off on
# long term sick", "he's off the smokes", "the kids are off" (a holiday), "mum's off now"
_OFF_AFTER = frozenset(
    ("again", "obviously", "now", "then", "too", "completely", "entirely", "unfortunately",
     "sadly", "sorry", "lol", "anyway", "apparently")
)  # fmt: skip


def _called_off(toks: list[str], i: int) -> bool:
    """``toks[i]`` ("off") says that what comes before it is called off: after "is" / "was" or a
    thing's "'s", ending its clause or followed by :data:`_OFF_AFTER`, its subject not a
    person."""
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    if nxt[:1].isalnum() and nxt not in _OFF_AFTER:
        return False
    prev = toks[i - 1]
    if prev in ("is", "was"):
        subject = toks[i - 2] if i >= 2 else ""
    elif prev.endswith("'s"):
        subject = prev[:-2]
    else:
        return False
    return bool(subject) and subject not in STOPWORDS and subject not in KIN_WORDS


# the endings of a plan (what the user called off, as against what they quit or sold): said of
# a plan, they end it even in a sentence that reads little like the claim ("update, the house
# fell through" / "Is buying a house in Stockport": cosine 0.31)
_PLAN_ENDINGS: dict[tuple[str, ...], bool] = {
    phrase: after_speaker for phrase, after_speaker in _ENDINGS.items()
    if phrase in {("cancelled",), ("canceled",), ("scrap",), ("scrapped",), ("called", "off"),
                  ("pulled", "out", "of"), ("withdrew",)}
}  # fmt: skip


def ended_plans(claim: str, text: str, own: str | None = None) -> frozenset[str]:
    """The claim's content words (stems) a plan ending in ``text`` ends: a plan that fell
    through (:func:`fallen_through`, in all of ``text``) or that the user called off
    (:data:`_PLAN_ENDINGS`, in ``own``: the user's own clauses). Nothing for a claim that says
    itself the state is past, or carries a negation or a refusal (as :func:`retracted_stems`)."""
    said = word_set(claim)
    if said & (_PAST_MARKERS | _SAYS_DENIAL) or _refuses(said):
        return frozenset()
    own = text if own is None else own
    ended = fallen_through(text) | _ended_by(_clause_tokens(own), _PLAN_ENDINGS)
    return ended & content_stems(claim)


# a claim with one of these says itself that something did not happen ("Turned the bank offer
# down", "Declined the transfer"): a later "same title, without the bank" agrees with it
_REFUSALS = frozenset(("declined", "declines", "refused", "refuses", "rejected", "rejects"))
_TURNED = frozenset(("turn", "turns", "turned", "turning"))
# a denial over a length of time ("Two years I was not in Dublin", "haven't been home in ages"):
# how long it has been, so it takes back what holds now, not what the claim dates itself
_PERIOD = re.compile(
    r"\b(?:\d+|a few|few|several|many|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?:years?|months?|weeks?)\b|\b(?:in|for)\s+(?:years|ages|months|a while|so long)\b"
)
# ... a claim that says when: in the past ("Spent 11 years in Dublin": ``_PAST_MARKERS``) or at a
# time to come ("Flies to Dublin on the 20th", "Will visit Dublin in October")
_DATED = frozenset(("will", "plans", "planning", "going", "next", "upcoming", *DAYS, *MONTHS))
_WHEN = _PAST_MARKERS | _DATED
_ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th)\b")
_CLAUSE_END = re.compile(r"[;:!?]|[,.](?!\d)")  # not inside "1,500" or "4.5"


def _denied_when(text: str) -> frozenset[str]:
    """:func:`denied_stems` but for the clauses that deny over a length of time ("Two years I was
    not in Dublin"): what a claim that says when it holds may still be denied by."""
    out: set[str] = set()
    for part in _CLAUSE_END.split(text):
        if _PERIOD.search(part.lower()) is None:
            out |= denied_stems(part)
    return frozenset(out)


def _refuses(said: frozenset[str]) -> bool:
    """Whether a claim's words say that something was refused ("Turned the offer down")."""
    return bool(said & _REFUSALS) or (bool(said & _TURNED) and "down" in said)


def _dated(claim: str, said: frozenset[str]) -> bool:
    """Whether the claim says when it holds: a past marker, a plan, a day, a month, a date."""
    return bool(said & _WHEN) or _ORDINAL.search(claim.lower()) is not None


# what follows these a claim sets aside ("swims instead of running", "tea rather than coffee")
_SET_ASIDE = re.compile(
    r"\b(?:instead\s+of|rather\s+than|(?:get|getting)\s+back\s+into)\s+", re.IGNORECASE
)


# "over" sets aside what follows it after a choice ("Picked medicine at Legon over pharmacy")
_CHOICES = frozenset(
    ("picked", "picks", "chose", "chosen", "chooses", "prefers", "preferred", "favours", "favors")
)
_OVER = re.compile(r"\bover\s+", re.IGNORECASE)


@lru_cache(maxsize=16384)
def _set_aside(claim: str) -> frozenset[str]:
    """Stems of the content words a claim sets aside ("instead of running" -> runn): the
    DENIED_SPAN tokens after "instead of", "rather than" or "get back into" ("Wants to get back
    into lifting" is not taken back by the same words), or after "over" in a claim of a
    choice ("picked medicine over pharmacy"), and the words before a plan the claim says fell
    through ("Is staying in the flat after the house purchase fell through"). Cached: read
    against every later sentence near the claim."""
    out: set[str] = set()
    for m in _SET_ASIDE.finditer(claim):
        out |= _span_stems(_clause_tokens(claim[m.end() :]), 0)
    if word_set(claim) & _CHOICES:
        for m in _OVER.finditer(claim):
            out |= _span_stems(_clause_tokens(claim[m.end() :]), 0)
    return frozenset(out) | fallen_through(claim)


# a role the user has by having someone ("Is a grandmother"), and the words for those people: a
# denial of them denies the role ("No grandchildren yet, pray for us"). Authored here
_ROLE_OF = {
    "grandmother": "grand", "grandfather": "grand", "grandparent": "grand", "grandma": "grand",
    "grandpa": "grand", "granny": "grand", "grandad": "grand",
    "mother": "parent", "mum": "parent", "mom": "parent", "father": "parent", "dad": "parent",
    "parent": "parent", "aunt": "aunt", "uncle": "aunt", "auntie": "aunt",
}  # fmt: skip
_HAVING = {
    role: frozenset(stem(w) for w in people.split())
    for role, people in {
        "grand": "grandchildren grandchild grandkids grandkid grandson granddaughter grandsons "
                 "granddaughters",
        "parent": "kids kid children child son sons daughter daughters",
        "aunt": "nieces niece nephews nephew",
    }.items()
}  # fmt: skip
# "Is a grandmother", "User is a first-time mum", "You're an aunt": the user in the role
_ROLE_CLAIM = re.compile(
    r"^(?:(?:the\s+)?user\s+is|you(?:'re|\s+are)|is)\s+(?:now\s+|already\s+)?an?\s+"
    r"(?P<first>[\w-]+)(?:\s+(?P<second>[a-z]+))?",
    re.IGNORECASE,
)


def claimed_role(claim: str) -> str | None:
    """The role a claim gives the user by having someone ("Is a grandmother", "Is a first-time
    mum"), else None; None too for a claim with a negation of its own."""
    m = _ROLE_CLAIM.match(claim.strip())
    if m is None or word_set(claim) & _SAYS_DENIAL:
        return None
    # the role, or the word after one before it ("a first-time mum", "a proud grandmother")
    words = [w.lower() for w in m.group("first", "second") if w]
    return next((w for w in words if w in _ROLE_OF), None)


def denied_role(claim: str, evidence: str) -> str | None:
    """The role a claim gives the user (:func:`claimed_role`) when ``evidence`` denies having
    the people it comes from ("Is a grandmother" / "No grandchildren yet, pray for us", "Is a
    mum" / "we don't have kids"), else None."""
    role = claimed_role(claim)
    return role if role is not None and denied_stems(evidence) & _HAVING[_ROLE_OF[role]] else None


def retracted_stems(
    claim: str, text: str, own: str | None = None, *, endings: bool = True
) -> frozenset[str]:
    """The claim's content words (stems) that ``text`` denies or says have ended. Nothing when
    the claim carries a negation or a refusal itself, nor from a denial over a length of time of
    a claim that says when it holds ("Two years I was not in Dublin" / "Flies to Dublin on the
    20th"); an ending only when the claim does not say the state is past ("Used to work at the
    bakery" against "I quit the bakery"). ``own``: the part of ``text`` whose denials and
    changes of state count (the user's own clauses, for a claim about the user); a plan that
    fell through counts in all of it ("Dave has pulled out"). ``endings=False``: the denials
    only."""
    said = word_set(claim)  # read once: this runs for every later sentence near the claim
    if said & _SAYS_DENIAL or _refuses(said):
        return frozenset()
    own = text if own is None else own
    out = set(_denied_when(own) if _dated(claim, said) else denied_stems(own))
    if out:
        out -= _denied_of_others(claim, own) | _other_heads(claim, own, out)
    # "Swims instead of running": the claim itself sets running aside, a denial agrees with it
    claimed = content_stems(claim) - _set_aside(claim)
    if out:
        out -= _agreed_contrasts(content_stems(claim), own)
    # "not really hikers" denies "Loves long hikes": the doer of what the claim says; and
    # "Rodrigo doesn't run at all" denies "Is also a runner": the doing of the doer it says
    out |= {c for c in claimed if c + "r" in out or c + "er" in out}
    # (the stemmer gives "runner" and "running" as "runn", "run" as "run")
    out |= {c for c in claimed for d in out if len(d) > 2 and c in (d + "r", d + "er", d + d[-1])}
    if endings and not said & _PAST_MARKERS:
        ended = _changed_state(own) | fallen_through(text)
        # "I quit the pharmacy job" ends "Works as a pharmacist": one word, two endings
        same = {c for c in claimed for e in ended if c != e and _same_word(c, e)}
        other = {e for e in ended - claimed - FRAME_STEMS if not _when_word(e)}
        if ended & claimed <= FRAME_STEMS and not same and other:
            # "I used to live in Denver but we moved to Austin" ends the life in Denver, not
            # "Lives in Austin": of the claim's words it ends only the verb that frames it
            ended = frozenset()
        out |= ended | same
        out |= moved_from(claim, own)
    return frozenset(out & claimed)


_WHEN_STEMS = frozenset(
    stem(w)
    for w in ("year", "week", "month", "day", "ago", "last", "today", "yesterday", "time",
              *DAYS, *MONTHS)
)  # fmt: skip


def _when_word(s: str) -> bool:
    """Whether a stem says when ("last year", "in March", "2 weeks ago"), not what."""
    return s in _WHEN_STEMS or s.isdigit()


# words after a denied one that say nothing of what it is ("not the half though"), or say it is
# the kind of person who does it ("we're not DIY people": no DIY at all)
_AFTERTHOUGHTS = _NOT_DENIED | frozenset(
    "though tho anyway either actually really haha now then again today people person fan fans "  # noqa: SIM905
    "type types kind".split()
)


def _heads(toks: list[str], s: str) -> set[str]:
    """The words right after each word of ``toks`` whose stem is ``s``."""
    return {toks[k + 1] for k, x in enumerate(toks[:-1]) if stem(x) == s}


def _other_heads(claim: str, text: str, denied: set[str]) -> set[str]:
    """The claim's words ``text`` denies only as a word before another thing: each is followed
    in ``text`` by a content word the claim does not say, and in the claim by one ``text`` does
    not say ("I don't have an accounting degree" takes back nothing of "Works as an accounts
    assistant": a degree is denied, not the accounts)."""
    claim_stems = content_stems(claim)
    shared = denied & claim_stems
    if not shared:
        return set()
    text_stems = content_stems(text)
    ctoks, ttoks = _clause_tokens(claim), _clause_tokens(text)

    def other(after: set[str], theirs: frozenset[str]) -> bool:
        """Some word after it is a content word ``theirs`` lacks, and none is one of theirs."""
        content = {
            stem(x) for x in after
            if len(x) > 1 and x[:1].isalpha() and x not in STOPWORDS and x not in _AFTERTHOUGHTS
            and x not in NEGATIONS  # "I take nothing for BP": "nothing" is the denial
        }  # fmt: skip
        return bool(content - theirs) and not content & theirs

    return {
        s for s in shared
        if other(_heads(ttoks, s), claim_stems) and other(_heads(ctoks, s), text_stems)
    }  # fmt: skip


def _denied_of_others(claim: str, text: str) -> set[str]:
    """The words ``text`` denies only together with a name the claim does not say: that denial
    is of the named thing, not of the claim ("So I'm not running Berlin" does not take back "Is
    running Amsterdam on the 18th of October"). A word another of its denials denies too is not
    among them."""
    named = {stem(n) for n in proper_names(text)} - content_stems(claim)
    if not named:
        return set()
    denials = _denials(text)
    of_others = {w for d in denials if d & named for w in d}
    return of_others - {w for d in denials if not d & named for w in d}


def _same_word(a: str, b: str) -> bool:
    """Two stems of one word with other endings ("pharmacist" / "pharmacy", "baker" / "bakery"):
    one begins the other, or they share their first seven letters."""
    short, long_ = sorted((a, b), key=len)
    return (
        (len(short) >= 5 and long_.startswith(short))
        or (len(short) >= 7 and short[:7] == long_[:7])
        or long_ == f"{short}e"  # "cycles" and "cycle" are stemmed "cycl" and "cycle"
    )


# where the user lives, the claim's subject being the user ("Lives in Boston", "User is based in
# Leeds"; not "Wife's parents are based in Setúbal") ...
_RESIDENCE = re.compile(
    r"^\s*(?:(?:the\s+)?user\s+|you\s+|he\s+|she\s+|they\s+)?(?:currently\s+|now\s+|still\s+)?"
    r"(?:lives?|living|(?:is\s+|are\s+)?based|resides?)\s+in\s+(?P<place>[^,.;!?]+)",
    re.I,
)
# ... and the speaker's move to a named place ("Actually we moved to Denver", "I've relocated to
# Leeds"; not "we moved to a bigger flat", "my sister moved to Denver")
_MOVED_TO = re.compile(
    r"\b(?:[Ii]|[Ww]e|[Ii]'ve|[Ww]e've|[Ii] have|[Ww]e have|just|finally|also|actually)\s+"
    r"(?:moved|relocated)\s+(?:back\s+|over\s+)?to\s+(?:the\s+)?(?P<place>[A-Z][\w'-]*)"
)


@lru_cache(maxsize=65536)
def residence(claim: str) -> str | None:
    """The place a claim says the user lives in ("Lives in Boston": "Boston"), else None."""
    m = _RESIDENCE.search(claim)
    return None if m is None else m.group("place")


# the words a sentence says where someone lives with ("we live in Leeds", "I'm in zone 6b near
# Columbus", "we're up in Leeds", "moved to Denver", "I bought in Sandviken", "I'm from Porto",
# "I'm staying in Braga"): a place named with none of them is only where something is ("a
# pharmacist at Boots in Cardiff")
_HOME_WORDS = re.compile(
    r"\b(?:live|lives|living|lived|moved|move|moving|based|home|here|from|grew|bought|rent|staying|"
    r"renting|flat|house|apartment|local|neighbou?r\w*|i'?m in|i am in|we'?re in|we are in|"
    r"up in|down in|out in|over in)\b",
    re.I,
)
# words before a place's own name in a claim's phrase ("in or near Edinburgh", "in central Leeds")
_PLACE_LEAD = frozenset(("or", "near", "central", "north", "south", "east", "west", "just"))


def home_unsaid(claim: str, user_texts: Sequence[str]) -> list[str]:
    """The names of the place a claim says the user lives in ("Lives in Cardiff") that some of
    ``user_texts`` (turns or sentences) say but no sentence of theirs with a word of living there
    (``_HOME_WORDS``): "I'm a pharmacist at Boots in Cardiff", "a tapas place in Leeds" (the
    boyfriend's work). Where the user lives is then concluded, not said. A name no text says is
    the unsaid-names rule's. Only the texts that name the place are split into sentences: a
    write against a long history reads the rest once, by a search."""
    place = residence(claim)
    if place is None:
        return []
    # the place's own name opens its phrase ("in Cardiff", "in or near Edinburgh"); a name further
    # on is someone or something by it ("the yellow house next door to Jamal"), and a name after
    # an article is a kind of thing ("an old Victorian conversion")
    ws = words(place)
    while ws and ws[0] in _PLACE_LEAD:
        ws = ws[1:]
    out = []
    for name in sorted(proper_names(claim) & set(ws[:1])):
        said = re.compile(rf"\b{re.escape(name)}\b", re.I)
        naming = [x for t in user_texts if said.search(t) for x in sentences(t) if said.search(x)]
        if naming and not any(_HOME_WORDS.search(x) for x in naming):
            out.append(name)
    return out


# a claim about where the user works ("Works at a sports clinic", "User works for Octopus as
# a ...", "Is working at the library"): the place, to the end of its phrase
_WORKPLACE = re.compile(
    r"^\s*(?:(?:the\s+)?user\s+|you\s+)?(?:currently\s+|now\s+|still\s+)?"
    r"(?:works?|working|(?:is|are)\s+working)\s+(?:[a-z]+\s+){0,4}?(?:at|for)\s+"
    r"(?P<place>[^,.;!?]+?)(?:\s+(?:as|treating|doing|on|in|with|where|while|since)\b|[,.;!?]|$)",
    re.I,
)


def workplace(claim: str) -> tuple[str, ...]:
    """The content stems of the place a claim says the user works at or for, in order ("Works
    at a sports clinic treating footballers": ("sport", "clinic")), else nothing."""
    m = _WORKPLACE.search(claim)
    if m is None:
        return ()
    return tuple(
        dict.fromkeys(
            stem(w) for w in _WORD.findall(m.group("place"))
            if w.lower() not in STOPWORDS and (len(w) > 1 or w.isdigit())
        )
    )  # fmt: skip


def moved_from(claim: str, text: str) -> frozenset[str]:
    """The place words of a claim about where the user lives that ``text`` leaves behind: the
    speaker moved to a named place the claim does not name, and the text does not name the
    claim's ("Lives in Boston" / "Actually we moved to Denver last spring")."""
    lives = residence(claim)
    if lives is None:
        return frozenset()
    place = content_stems(lives)
    away = _MOVED_AWAY.search(text)
    if away is not None and stem(away.group("place")) in place:
        # "we moved by the way from Randburg to a townhouse in Midrand": the claim's place, left
        return place
    moved = _MOVED_TO.search(text)
    if moved is None:
        return frozenset()
    if stem(moved.group("place")) in place:
        return frozenset()
    # the new place is part of the old one ("we moved to Brookline, just outside Boston", "moved
    # to Cambridge near Boston"), or the text says the user is in it ("we moved to Porto! We
    # live in Bonfim now"); the old place said otherwise is left behind ("Boston was too cold",
    # "moved to Denver from Boston")
    ws = words(text)
    for i, w in enumerate(ws):
        if stem(w) in place and set(ws[max(0, i - 2) : i]) & _WITHIN:
            return frozenset()
    return place


def says_move(text: str) -> bool:
    """The text says the speaker moved to or away from a named place (what :func:`moved_from`
    reads): a cheap look before its clauses are read."""
    return _MOVED_TO.search(text) is not None or _MOVED_AWAY.search(text) is not None


# ... and the speaker's move away from a named place ("we moved by the way from Randburg to a
# townhouse in Midrand", "I've moved out of Leeds"; not "my sister moved from Leeds")
_MOVED_AWAY = re.compile(
    r"\b(?i:i|we)(?i:'ve|\s+have|'d|\s+had)?\s+(?i:just\s+|finally\s+|also\s+|actually\s+)?"
    r"(?i:moved|relocated)\b[^.;!?]{0,30}?\b(?i:from|out\s+of|away\s+from)\s+(?i:the\s+)?"
    r"(?P<place>[A-Z][\w'-]*)"
)


# words that put a place inside or beside another ("just outside Boston", "near Boston"), or
# the speaker in it ("we live in Bonfim now")
_WITHIN = frozenset(("in", "outside", "near", "around", "within", "nearby", "suburbs", "of", "by"))


# words that name a lasting disposition of a person: a personality trait ("Is organized and
# detail-oriented", "Stays calm in stressful situations", "Drives cautiously"). Authored here from
# the Big Five's adjective markers, not from any labelled claim. States a situation brings are left
# out (stressed, busy, tired, excited, nervous, anxious, comfortable, frustrated): "Is stressed
# about the bar exam" from "I'm taking the bar exam" is a one-step inference, not a stereotype.
# So are words as often about a thing as a person (quiet, warm, bright, sharp, neat, traditional).
_TRAITS = frozenset(
    # conscientiousness
    ("organized", "organised", "disorganized", "disorganised", "meticulous", "detail-oriented",
     "methodical", "punctual", "tidy", "messy", "orderly", "systematic", "perfectionist",
     "perfectionistic", "careful", "cautious", "cautiously", "carefully", "risk-averse",
     "reckless", "impulsive", "strict", "disciplined", "self-disciplined", "diligent",
     "hardworking", "hard-working", "conscientious", "responsible", "reliable", "dependable",
     "lazy", "workaholic", "ambitious", "frugal", "thrifty", "stingy", "extravagant",
     # extraversion
     "outgoing", "sociable", "chatty", "talkative", "extroverted", "extrovert", "extraverted",
     "extravert", "introverted", "introvert", "shy", "reserved", "gregarious", "bubbly",
     "adventurous", "spontaneous", "daring", "fearless", "confident", "cheerful",
     # agreeableness
     "polite", "courteous", "friendly", "caring", "nurturing", "compassionate", "empathetic",
     "generous", "considerate", "selfless", "loyal", "honest", "humble", "modest", "arrogant",
     "stubborn", "headstrong", "competitive", "grumpy",
     # emotional stability
     "calm", "patient", "impatient", "easygoing", "easy-going", "laid-back", "even-tempered",
     "level-headed", "hot-headed", "short-tempered", "insecure", "optimistic", "pessimistic",
     "moody",
     # openness
     "curious", "imaginative", "analytical", "pragmatic", "sensible", "independent",
     "old-fashioned",
     # aptitudes read into a job, a course or a purchase ("Is a creative person with an eye for
     # design" from "i study architecture now")
     "creative", "artistic", "sporty", "athletic", "musical", "handy", "talented", "gifted",
     "tech-savvy", "techy", "academic", "studious")
)  # fmt: skip


# a trait word says something of the person only where it ends the phrase ("Is organized and
# tidy", "Stays calm in a crisis", "Is strict with her kids"); before a noun it describes the
# thing ("competitive chess", "an easygoing landlord", "independent contractor", "caring for")
_AFTER_TRAIT = frozenset(
    ("and", "or", "but", "with", "about", "around", "in", "at", "when", "under", "toward",
     "towards", "by", "as", "to", "person", "people", ",", ".", ";", ":", "!", "?", "(", ")")
)  # fmt: skip


def trait_words(text: str) -> list[str]:
    """The words of ``text`` that name a personality trait of a person (``_TRAITS``, where the
    phrase ends with it: ``_AFTER_TRAIT``), in order."""
    toks = _clause_tokens(text)
    return [
        t
        for i, t in enumerate(toks)
        if t in _TRAITS and (i + 1 == len(toks) or toks[i + 1] in _AFTER_TRAIT)
    ]


# a phrase glued onto what the user said ("Planning a dinosaur party with a bouncy castle",
# "Walks her dogs twice a day along the river", "Nearly drowned at 8 while fishing with his
# dad", "Adopted a cat from a shelter", "Works at a dental office as a hygienist"): it starts at
# one of these words and runs to the next of them, a comma or "and"; "as" only for a role ("as
# a", "as an") after the claim's start ("as the friend", "as far as I know" compare)
_GLUE = frozenset(("with", "while", "along", "after", "before", "as", "from"))
# ... or at one of these, when the phrase names a time or an occasion ("... on weekends", "... for
# her birthday", "... every summer"): "at", "in", "for" alone fired on as many restatements as
# fabrications ("Works at a cafe" said as "my shift at the cafe")
_TIME_GLUE = frozenset(("on", "for", "in", "at", "during", "every", "each", "over"))
# times in the plural: each says "every such time" ("on Sundays", "mornings before work")
_PLURAL_TIMES = frozenset(
    ("weekends", "weekdays", "weeknights", "mornings", "afternoons", "evenings", "nights",
     *(f"{d}s" for d in DAYS))
)  # fmt: skip
_TIMES = _PLURAL_TIMES | frozenset(
    ("weekday", "weeknight", "holidays", "holiday",
     "birthday", "birthdays", "anniversary", "christmas", "xmas", "easter", "thanksgiving",
     "halloween", "hanukkah", "diwali", "ramadan", "eid", "passover", "vacation", "vacations",
     "morning", "afternoon", "evening", "night",
     "spring", "summer", "summers", "autumn", "winter", "winters", *DAYS, *MONTHS)
)  # fmt: skip
_EVERY = frozenset(("every", "each"))  # a frequency: "... every year", "... each morning"
_GLUE_END = frozenset(("with", "while", "along", "after", "before", "as", "from", "and", "but",
                       "or", "who", "which", "that", ",", ".", ";", ":", "!", "?"))  # fmt: skip


def glued_phrases(claim: str, unsupported: Iterable[str]) -> list[str]:
    """The phrases of ``claim`` that start with "with", "while", "along", "after", "before",
    "from", "as a" or "every" (or with "on", "for", "in", ... and name a time or an occasion:
    ``_TIMES``) and whose every content word is one of the ``unsupported`` words (no user turn
    says any)."""
    unsaid = {w.lower() for w in unsupported}
    toks = _clause_tokens(claim)
    out: list[str] = []
    i = 0
    while i < len(toks):
        role = toks[i] != "as" or (i > 0 and toks[i + 1 : i + 2] in (["a"], ["an"]))
        if (toks[i] not in _GLUE and toks[i] not in _TIME_GLUE) or not role:
            i += 1
            continue
        ends = _GLUE_END if toks[i] in _GLUE else _GLUE_END | _TIME_GLUE
        j = i + 1
        while j < len(toks) and toks[j] not in ends:
            j += 1
        content = [w for w in toks[i + 1 : j] if w not in STOPWORDS and len(w) > 1]
        timed = toks[i] in _GLUE or toks[i] in _EVERY or any(w in _TIMES for w in content)
        if content and timed and all(w in unsaid for w in content):
            out.append(" ".join(toks[i:j]))
        i = j
    return out


# words that make one occasion a habit ("Watches anime regularly" / "I watched anime until 4am
# yesterday"; the issue's "Often sleeps during the day" / "I work night shifts"): a claim that
# says one the user did not is a conclusion from what they said, never a restatement. Authored
# here, not from any labelled claim
_HABITS = frozenset(
    ("regularly", "often", "usually", "always", "frequently", "daily", "nightly", "weekly",
     "habitually", "routinely", "constantly", "normally", "typically", "tends", "tend",
     "rarely", "seldom", "occasionally", "sometimes")
)  # fmt: skip
# ... and what says a habit in the user's words, in other words: "i break out on my chin a lot",
# "I only go mornings before work", "every Sunday", "most days"
_SAYS_HABIT = (
    _HABITS | _PLURAL_TIMES | frozenset(("lot", "every", "each", "most", "whenever", "tended"))
)
_HABIT_STEMS = frozenset(stem(w) for w in _HABITS)


def unsaid_habits(claim: str, unsupported: Iterable[str], evidence: str | None = None) -> list[str]:
    """The words of ``claim``'s statements (not its questions) that make something a habit
    (``_HABITS``) and are among the ``unsupported`` words (the user's turns do not say them or a
    word like them), unless the ``evidence``'s sentences that say the claim's other content words
    say a habit in any words (``_SAYS_HABIT``)."""
    unsaid = {w.lower() for w in unsupported}
    said = [w for sent in sentences(claim) if not sent.rstrip().endswith("?") for w in words(sent)]
    habits = [w for w in dict.fromkeys(said) if w in _HABITS and w in unsaid]
    if habits and evidence is not None and says_habit(claim, evidence):
        return []
    return habits


# a claim's verb of an intention ("Plans to plant sunflowers", "Expects the kitchen to be
# finished"), and the words a user says one with ("I want to", "we're going to", "hopefully",
# "I'd like", "thinking of"). Authored here
_INTENTS = frozenset(
    ("wants", "want", "wanted", "plans", "plan", "planning", "expects", "expect", "expecting",
     "hopes", "hope", "hoping", "intends", "intend", "aims", "aiming")
)  # fmt: skip
_SAYS_INTENT = frozenset(
    ("want", "wants", "wanted", "wanna", "imma", "plan", "plans", "planned", "planning", "hope",
     "hoping",
     "hopefully", "expect", "expecting", "aim", "aiming", "intend", "would", "like", "love",
     "i'd", "id", "gonna", "going", "will", "i'll", "ill", "we'll", "thinking", "might", "maybe",
     "keen", "dream", "wish", "need", "needs", "should", "try", "trying", "about")
)  # fmt: skip


def unsaid_intent(claim: str, unsupported: Iterable[str], evidence: str | None) -> list[str]:
    """A claim's verbs of an intention ("wants", "plans", "expects", ...) that are among the
    ``unsupported`` words when ``evidence`` says no intention in any words: a plan or a wish the
    user did not voice is a conclusion, not a stated fact ("Plans to plant sunflowers along the
    north fence" / "the north fence gets full sun all afternoon"). A claim with a negation ("You
    don't want to learn German with apps only") is not read."""
    if evidence is None or word_set(claim) & _SAYS_DENIAL:
        return []
    unsaid = {w.lower() for w in unsupported}
    intents = [w for w in dict.fromkeys(words(claim)) if w in _INTENTS and w in unsaid]
    return intents if intents and not word_set(evidence) & _SAYS_INTENT else []


def says_habit(claim: str, evidence: str) -> bool:
    """A sentence of ``evidence`` about what the claim is about (a content word of the claim's,
    its habit words aside) says a habit in any words (``_SAYS_HABIT``: "I drink a LOT of diet
    soda", "sunscreen when I remember, which is not often"). Only those sentences: a long turn
    says "every" or "a lot" of something else ("lots of rice dishes" is no habit of cooking
    them)."""
    own = content_stems(claim) - _HABIT_STEMS
    about = [x for x in sentences(evidence) if content_stems(x) & own]
    return any(word_set(x) & _SAYS_HABIT for x in about)


# a taste or a pastime ("Enjoys knitting in the evenings", "Loves weekend brunch", "Follows
# Welsh rugby") and a routine's times ("... after work most days", "... on his days off", "...
# in her spare time"): what a memory writer frames a habit with. Authored here, not from any
# labelled claim
_TASTES = frozenset(
    ("enjoys", "enjoy", "enjoyed", "loves", "love", "likes", "adores", "follows", "fan",
     "favourite", "favorite", "hobby", "hobbies", "pastime")
)  # fmt: skip
_ROUTINE_AFTER = frozenset(("work", "school", "lunch", "dinner", "church", "class", "classes"))
_FRAME_WORDS = (
    _TASTES | _HABITS | _TIMES | _EVERY | _ROUTINE_AFTER
    | frozenset(("most", "free", "spare", "time", "day", "days", "off", "after", "weekend",
                 "weekends", "week", "year", "years", "lot", "few", "big", "mostly", "mainly"))
)  # fmt: skip
# a state or a possession, not an activity: "Is busy most weekends", "You're up before dawn
# most days", "Owns a bike and uses it daily", "Has little free time during the week" are left
# to the scores and the trait rule (measured: with them, 7 rows away on the held-out sets)
_STATES = frozenset(
    ("is", "are", "am", "was", "were", "be", "being", "been",
     "has", "have", "had", "owns", "own", "owned")
)  # fmt: skip


def _routine(toks: list[str]) -> bool:
    """The tokens say a routine: a habit word, a plural time ("on Sundays", "evenings"; not
    "nights": "nights out", "nights in hotels" are occasions, measured: 2 rows away), "every"
    / "each" / "most" before a time ("most days", "every morning"), "free" / "spare time", "days
    off", "after work", or a share of the household's work ("most of the cooking")."""
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t in _HABITS or (t in _PLURAL_TIMES and t != "nights") or t == "weekends":
            return True
        if t in ("at", "on") and nxt == "the" and toks[i + 2 : i + 3] == ["weekend"]:
            return True  # "Goes to indie gigs at the weekend"
        if t in (*_EVERY, "most") and (nxt in _TIMES or nxt in ("day", "days", "week", "weekend")):
            return True
        if (t in ("free", "spare") and nxt == "time") or (t == "days" and nxt == "off"):
            return True
        if t == "after" and nxt in _ROUTINE_AFTER:
            return True
        if t in ("most", "all") and _share_of_work(toks[i + 1 : i + 4]):
            return True
    return False


_SPANS = frozenset(("day", "days", "week", "weeks", "year", "years", "time", "month", "months"))


def _share_of_work(after: list[str]) -> bool:
    """After "most" or "all": "of the" or "the" and a thing, not a time ("Does most of the
    cooking", "Manages all the household finances"; not "Stands for most of her working day",
    "most of the year": measured with a possessive or a time, 2 rows away)."""
    rest = after[2:] if after[:2] == ["of", "the"] else after[1:] if after[:1] == ["the"] else []
    return bool(rest) and rest[0] not in _TIMES and rest[0] not in _SPANS


def unsaid_pastime(claim: str, unsupported: Iterable[str]) -> list[str]:
    """The activity of a taste, a pastime or a routine the claim gives the user ("Enjoys fishing
    on his days off", "Drinks a few beers after work most days", "Goes to indie gigs at the
    weekend") when every one of its words is among the ``unsupported`` ones (no user turn the
    claim was read against says it or a word like it), or []. A habit whose activity the user
    never mentioned is made up, the taxonomy's stereotype, not a conclusion from what they said;
    a habit of something they did say ("Watches anime regularly" / "I watched anime until 4am")
    is :func:`unsaid_habits`'. A claim that says what someone is or has is not read: its words
    are a state or a possession ("Is busy most weekends in the summer", "You own a car and drive
    regularly"); nor is one with a number, a fact's detail."""
    said = [sent for sent in sentences(claim) if not sent.rstrip().endswith("?")]
    toks = [w for sent in said for w in words(sent)]
    if not toks or any(t in _STATES or t.endswith(("'re", "'m", "'ve")) for t in toks):
        return []
    if numbers(" ".join(said)):
        return []  # a number is a fact's detail, not a taste's ("Cycles to work every day, 12 km")
    if not (_TASTES & set(toks) or _routine(toks)):
        return []
    activity = [
        w
        for w in dict.fromkeys(toks)
        if w not in STOPWORDS and w not in _FRAME_WORDS and w not in ("you", "user") and len(w) > 1
    ]
    unsaid = {stem(w.lower()) for w in unsupported}

    def all_unsaid(found: list[str]) -> bool:  # the aligner reads "hip-hop" as "hip" and "hop"
        return bool(found) and all(stem(p) in unsaid for w in found for p in w.split("-") if p)

    if all_unsaid(activity):
        return activity
    # a taste for something the user never named, glued onto a place or a team they did ("Enjoys
    # watching Leeds United games" / "we're up in Leeds"; "Probably follows Welsh rugby closely"
    # / "Sam's family are Welsh speakers"): the taste's own words, two or more, all unsaid
    names = {
        m.group().lower() for sent in said for m in _CAPITALISED.finditer(sent.strip()) if m.start()
    }
    own = [w for w in activity if w not in names]
    about_kin = toks[0] in KIN_WORDS  # "Son Noah follows a gluten-free diet": the son's
    if about_kin or not _TASTES & set(toks) or not 2 <= len(own) < len(activity):
        return []
    return own if all_unsaid(own) else []


# a word that begins with a capital (a sentence's first word has its own)
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*")


# words that name a religion or a politics, what ``group_attribute`` is about: the attribute
# kinds' prototypes alone read "Roller derby practice is Tuesday" or "Is afraid of putting his
# face in the water" as religion. Authored here (faiths, their practices and places, parties
# and leanings), not from any labelled claim.
_GROUP_WORDS = frozenset(
    ("religion", "religious", "faith", "god", "church", "churchgoer", "chapel", "parish", "mass",
     "mosque", "synagogue", "temple", "gurdwara", "pray", "prays", "prayer", "prayers", "bible",
     "quran", "koran", "torah", "sabbath", "shabbat", "ramadan", "christian",
     "catholic", "protestant", "anglican", "methodist", "baptist", "evangelical", "orthodox",
     "mormon", "muslim", "islam", "islamic", "jewish", "judaism", "hindu", "hinduism", "sikh",
     "buddhist", "buddhism", "atheist", "agnostic", "spiritual", "devout", "kosher", "halal",
     "politics", "political", "politically", "vote", "votes", "voted", "voter", "voting",
     "election", "democrat", "democrats", "democratic", "republican", "republicans", "liberal",
     "conservative", "progressive", "labour", "tory", "tories", "socialist", "libertarian",
     "left-wing", "right-wing", "leftist", "activist", "partisan")
)  # fmt: skip


def group_words(text: str) -> list[str]:
    """The words of ``text`` that name a religion or a politics (``_GROUP_WORDS``), in order."""
    return [w for w in words(text) if w in _GROUP_WORDS]
