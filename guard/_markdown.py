"""One Markdown table renderer for every report (benchmark, pollution, guard eval)."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, align_right: bool = False
) -> list[str]:
    """A GitHub-flavoured Markdown table, one line per item; ``|`` inside cells is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    rule = "---:" if align_right else "---"
    return [line(header), "|" + "|".join([rule] * len(header)) + "|", *(line(r) for r in rows)]
