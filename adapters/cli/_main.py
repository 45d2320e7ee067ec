"""The `mirage` command line: one root, one sub-app per domain idea.

``serve`` and ``demo`` are registered directly; every other sub-app is imported only when it is
invoked (or when ``--help`` lists it), so ``mirage serve`` never loads the benchmark's scipy or
calibration's scikit-learn.
"""

from __future__ import annotations

import importlib
import inspect
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from typer._click import Command, Context  # typer vendors click: no public alias
from typer.core import TyperGroup

from mirage_guard.adapters._demo import run_demo
from mirage_guard.adapters.cli._serve import serve

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

# sub-command name -> module of this package whose `app` (a typer.Typer) implements it
LAZY_SUBAPPS: dict[str, str] = {
    "bench": "_bench",
    "calibrate": "_calibrate",
    "doctor": "_doctor",
    "guard": "_guard",
    "perf": "_perf",
    "report": "_report",
}


def one_line_summaries(command: Command) -> None:
    """Give ``command`` and every command under it a one-line ``short_help``: the first paragraph
    of its help with the docstring's line breaks joined. Typer's rich listing of a group's
    commands keeps single line breaks (it reads them as the author's), so a summary that wraps
    in the source printed broken mid-sentence ("each held-out set, the stale" / "triples")."""
    if command.short_help is None and command.help:
        first = inspect.cleandoc(command.help).split("\n\n")[0]
        command.short_help = " ".join(first.split())
    for sub in getattr(command, "commands", {}).values():
        one_line_summaries(sub)


class _LazyGroup(TyperGroup):
    """A root group whose sub-apps are imported on first use, and that reports what goes wrong
    with the user's input in one line."""

    def invoke(self, ctx: Context) -> object:
        """A typed error, a file that cannot be read or written, or a record of the wrong shape
        is one line ``error: ...`` on stderr and exit status 1, not a traceback; anything else
        (a bug) keeps its traceback."""
        from pydantic import ValidationError

        from mirage_guard.guard.errors import MirageError, validation_message

        try:
            return super().invoke(ctx)
        except MirageError as exc:
            message = str(exc)
        except OSError as exc:  # FileNotFoundError, IsADirectoryError, PermissionError, ...
            message = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
        except ValidationError as exc:
            message = f"not a valid {exc.title}: {validation_message(exc)}"
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(1)

    def list_commands(self, ctx: Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_SUBAPPS})

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in LAZY_SUBAPPS:
            command = super().get_command(ctx, cmd_name)
            if command is not None:
                one_line_summaries(command)
            return command
        module = importlib.import_module(f"{__package__}.{LAZY_SUBAPPS[cmd_name]}")
        command = typer.main.get_group(module.app)
        command.name = cmd_name
        one_line_summaries(command)
        return command


app = typer.Typer(
    cls=_LazyGroup,
    help="mirage-guard: provenance guard for LLM memory writes, and the MirageBench benchmark.",
    no_args_is_help=True,
)
app.command("serve")(serve)
console = Console()


@app.command()
def demo(
    data_dir: Annotated[
        Path | None, typer.Option(help="embedded store directory (default: a temp dir)")
    ] = None,
) -> None:
    """The guard on embedded defaults: no keys, no servers."""
    run_demo(console, data_dir)


def main() -> None:  # pragma: no cover - console entry
    app()
