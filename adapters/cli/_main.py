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
    "adopt": "_adopt",
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


INTERRUPTED = 130
"""Exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it)."""


def user_errors() -> tuple[type[Exception], ...]:
    """What goes wrong with the user's input rather than in the code: a typed error, a file that
    cannot be read or written, a record of the wrong shape."""
    from pydantic import ValidationError

    from mirage_guard.guard.errors import MirageError

    return (MirageError, OSError, ValidationError)


def error_line(exc: Exception) -> str:
    """One of :func:`user_errors` as the one line ``error: ...`` a command prints on stderr."""
    from pydantic import ValidationError

    from mirage_guard.guard.errors import MirageError, validation_message

    if isinstance(exc, MirageError):
        message = str(exc)
    elif isinstance(exc, OSError):  # FileNotFoundError, IsADirectoryError, PermissionError, ...
        message = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    elif isinstance(exc, ValidationError):
        message = f"not a valid {exc.title}: {validation_message(exc)}"
    else:
        message = str(exc)
    return f"error: {message}"


class _LazyGroup(TyperGroup):
    """A root group whose sub-apps are imported on first use, and that reports what goes wrong
    with the user's input in one line."""

    def invoke(self, ctx: Context) -> object:
        """One of :func:`user_errors` is one line ``error: ...`` on stderr and exit status 1,
        not a traceback; anything else (a bug) keeps its traceback. Ctrl-C is the line
        ``interrupted`` on stderr and exit status 130 (what a command keeps of the work done
        before it is the command's to say: ``bench run`` again on the same ``--run-dir``
        resumes, ``guard eval`` starts over)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(INTERRUPTED) from None
        except user_errors() as exc:
            typer.echo(error_line(exc), err=True)
            raise typer.Exit(1) from exc

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
