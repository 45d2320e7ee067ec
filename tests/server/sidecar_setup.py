"""The sidecar tests' API keys, auth headers and echo writer (imported from here, never from
conftest)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from mirage_guard.guard.llm import FunctionLLM, Message
from tests.fakes.mem0 import claims_reply

KEYS = "key-a:tenant-a,key-b:tenant-b"
A = {"Authorization": "Token key-a"}
B = {"X-API-Key": "key-b"}
_LINE = re.compile(r"^\[(\S+)\] user: (.+)$", re.MULTILINE)


def echo_writer(model: str = "mock/echo-writer") -> FunctionLLM:
    """A writer that states back every user turn, word for word, as a grounded fact citing it."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        found = _LINE.findall(messages[-1].content)
        return claims_reply(*((text, tid, "GROUNDED", 0.9) for tid, text in found))

    return FunctionLLM(rule, model=model)
