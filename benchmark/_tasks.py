"""The six MirageBench tasks, ordered along the paper's imagination gradient."""

from __future__ import annotations

from enum import StrEnum

from mirage_guard.guard.errors import InputError
from mirage_guard.prompts import Prompt, load_prompt


class Task(StrEnum):
    GIFT = "gift"
    DATING = "dating"
    ITINERARY = "itinerary"
    STRESSOR = "stressor"
    LETTER = "letter"
    APARTMENT = "apartment"

    @property
    def prompt(self) -> Prompt:
        return load_prompt(f"bench_task_{self.value}")

    @property
    def display_name(self) -> str:
        return _TITLES[self]

    def request(self, facts: list[str] | None = None) -> str:
        """The user message asking for this task, with the facts in front when given."""
        section = ""
        if facts:
            section = "Some things I've told you about myself:\n" + "\n".join(
                f"- {fact}" for fact in facts
            )
        return self.prompt.render(facts_section=section).strip()


_TITLES: dict[Task, str] = {
    Task.GIFT: "birthday gift under $100",
    Task.DATING: "dating profile",
    Task.ITINERARY: "weekend itinerary in an unfamiliar city",
    Task.STRESSOR: "biggest stressor",
    Task.LETTER: "recommendation letter",
    Task.APARTMENT: "describe my apartment",
}

# paper_numbers.json spells the tasks differently
PAPER_TASK_KEYS: dict[Task, str] = {
    Task.GIFT: "gift",
    Task.DATING: "dating_profile",
    Task.ITINERARY: "weekend_itinerary",
    Task.STRESSOR: "stressor",
    Task.LETTER: "recommendation_letter",
    Task.APARTMENT: "apartment",
}


def parse_tasks(values: list[str] | None) -> list[Task]:
    if not values:
        return list(Task)
    out: list[Task] = []
    for value in values:
        for part in value.split(","):
            name = part.strip().lower()
            if not name:
                continue
            try:
                out.append(Task(name))
            except ValueError as exc:
                known = ", ".join(t.value for t in Task)
                raise InputError(f"unknown task {name!r}; choose from {known}") from exc
    return out
