"""Every prompt of mirage-guard is a file in this package; its content hash is its version.

The bottom layer: imports nothing of mirage-guard (only the standard library), so every other
package may use it.

>>> from mirage_guard.prompts import load_prompt
>>> p = load_prompt("self_audit")
>>> p.version        # first 12 hex digits of sha256(text)
>>> p.render(candidates=..., conversation=...)
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources


class PromptNotFoundError(LookupError):
    pass


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str

    @property
    def version(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]

    @property
    def ref(self) -> str:
        """``name@version``: how runs, caches and profiles cite a prompt."""
        return f"{self.name}@{self.version}"

    def render(self, **values: object) -> str:
        """Fill ``$placeholders``; a missing value raises KeyError (never a silent blank)."""
        return string.Template(self.text).substitute({k: str(v) for k, v in values.items()})


@cache
def load_prompt(name: str) -> Prompt:
    base = resources.files(__name__)
    path = base.joinpath(f"{name}.md")
    if not path.is_file():
        raise PromptNotFoundError(f"no prompt named {name!r} in the prompts package")
    return Prompt(name=name, text=path.read_text(encoding="utf-8"))


def available_prompts() -> list[str]:
    return sorted(
        p.name.removesuffix(".md")
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".md") and p.name != "README.md"
    )


__all__ = ["Prompt", "PromptNotFoundError", "available_prompts", "load_prompt"]
