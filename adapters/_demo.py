"""`mirage demo`: the guard on embedded defaults (MiniLM evidence path + embedded Mem0).

The conversation is the paper's running example. The candidate attributes are what a
personalised assistant typically writes about this user; they are authored here (no LLM runs).
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.adapters import AsyncGuardedMemory
from mirage_guard.guard.settings import GuardSettings

CONVERSATION: list[dict[str, str]] = [
    {"id": "t1", "role": "user", "content": "I'm a software engineer at a startup in Seattle."},
    {"id": "t2", "role": "assistant", "content": "Nice! What do you like to do outside work?"},
    {"id": "t3", "role": "user", "content": "I went rock climbing last weekend, it was great."},
    {
        "id": "t4",
        "role": "user",
        "content": "Also my cat Pixel knocked over my coffee this morning.",
    },
    {
        "id": "t5",
        "role": "assistant",
        "content": "Sounds like you love the outdoors and adventure!",
    },
]

# What an assistant with memory writes about this user (stated, inferred, stereotyped, invented).
CANDIDATES: list[str] = [
    "Works as a software engineer at a Seattle startup",
    "Enjoys rock climbing",
    "Has a cat named Pixel",
    "Probably owns climbing shoes and a harness",
    "Lives in a minimalist apartment with a standing desk",
    "Is an introvert who prefers coding to parties",
    "Is looking for an adventure partner",
    "Has two younger sisters",
]


def _decision_table(result: dict[str, Any], turns: dict[str, str]) -> Table:
    table = Table(title="guarded write: every attribute tagged", show_lines=False)
    for col in ("attribute", "provenance", "source turn", "P(OI)", "action"):
        table.add_column(col)
    colour = {"stated": "green", "inferred": "yellow", "generated": "red"}
    for d in result["decisions"]:
        src = d.get("source_turn_id")
        source = f"{src}: {turns[src]}" if src else "-"
        score = d.get("score")
        table.add_row(
            d["text"],
            f"[{colour[d['provenance']]}]{d['provenance']}[/]",
            source,
            "-" if score is None else f"{score:.2f}",
            d["action"],
        )
    return table


def _listing(title: str, items: list[dict[str, Any]]) -> Table:
    table = Table(title=title)
    table.add_column("memory")
    table.add_column("status")
    table.add_column("provenance")
    table.add_column("source_turn_id")
    for it in sorted(items, key=lambda i: (str(i.get("status")), str(i.get("memory")))):
        table.add_row(
            str(it.get("memory")),
            str(it.get("status")),
            str(it.get("provenance")),
            str(it.get("source_turn_id") or "-"),
        )
    return table


@dataclass(frozen=True)
class DemoResult:
    write: dict[str, Any]
    facts: list[dict[str, Any]]
    with_hypotheses: list[dict[str, Any]]
    everything: list[dict[str, Any]]
    database_url: str


async def run_example(data_dir: Path) -> DemoResult:
    """Write the example through a GuardedMemory on embedded defaults and read it back."""
    settings = GuardSettings(data_dir=data_dir)
    memory = AsyncGuardedMemory.from_settings(settings)
    user = {"user_id": "demo-user"}
    try:
        write = await memory.remember(CONVERSATION, CANDIDATES, user_id="demo-user")
        facts = await memory.get_all(filters=user)
        both = await memory.get_all(filters=user, include_hypotheses=True)
        everything = await memory.get_all(
            filters=user, include_hypotheses=True, include_quarantined=True
        )
    finally:
        await memory.aclose()
    return DemoResult(
        write=write,
        facts=facts["results"],
        with_hypotheses=both["results"],
        everything=everything["results"],
        database_url=settings.resolved_database_url(),
    )


async def _run(console: Console, data_dir: Path) -> None:
    console.print(f"[bold]embedded store[/]: Mem0 + Qdrant under {data_dir}; evidence: MiniLM")
    turns = {m["id"]: m["content"] for m in CONVERSATION}
    console.print("[bold]conversation[/]:")
    for m in CONVERSATION:
        console.print(escape(f"  {m['id']} [{m['role']}] {m['content']}"))
    result = await run_example(data_dir)
    console.print(_decision_table(result.write, turns))
    console.print(_listing("read back: facts only (default)", result.facts))
    console.print(_listing("read back: with hypotheses", result.with_hypotheses))
    console.print(
        f"quarantined (kept out of default reads): "
        f"{len(result.everything) - len(result.with_hypotheses)} item(s); "
        f"decision log: {result.database_url}"
    )


def run_demo(console: Console, data_dir: Path | None) -> None:
    # mem0 logs optional-extra notices (spaCy, BM25) at WARNING; they are not about the guard
    logging.getLogger("mem0").setLevel(logging.ERROR)
    console.width = max(console.width, 120)
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        anyio.run(_run, console, data_dir)
        return
    with tempfile.TemporaryDirectory(prefix="mirage-demo-") as tmp:
        anyio.run(_run, console, Path(tmp))
