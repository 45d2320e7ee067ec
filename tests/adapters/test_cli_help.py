"""Every group's list of commands gives each command's summary on one line."""

from __future__ import annotations

import inspect

import pytest
import typer
from typer.core import TyperCommand, TyperGroup
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from mirage_guard.adapters.cli._main import LAZY_SUBAPPS, one_line_summaries


def _summary(help_text: str) -> str:
    return " ".join(inspect.cleandoc(help_text).split("\n\n")[0].split())


@pytest.mark.parametrize("group", ["", *sorted(LAZY_SUBAPPS)])
def test_a_group_lists_each_summary_unbroken(group: str) -> None:
    args = [group, "--help"] if group else ["--help"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "600"}, terminal_width=600)
    assert result.exit_code == 0, result.output
    root = typer.main.get_group(app)
    command = root.get_command(typer.Context(root), group) if group else root
    assert command is not None
    listed = getattr(command, "commands", {})
    if not group:
        ctx = typer.Context(root)
        listed = {name: root.get_command(ctx, name) for name in root.list_commands(ctx)}
    broken = []
    for name, sub in listed.items():
        if sub is None or sub.hidden or not sub.help:
            continue
        if _summary(sub.help) not in result.output:
            broken.append(name)
    assert not broken, f"summaries printed broken or missing: {broken}\n{result.output}"


def test_a_summary_that_wraps_in_the_source_is_joined() -> None:
    wrapped = "First line of a long summary\n    that wraps here.\n\nMore."
    inner = TyperCommand("inner", help=wrapped)
    given = TyperCommand("given", help="Long\nhelp", short_help="Set by its author")
    group = TyperGroup(name="outer", commands=[inner, given])
    one_line_summaries(group)
    assert inner.short_help == "First line of a long summary that wraps here."
    assert given.short_help == "Set by its author"
