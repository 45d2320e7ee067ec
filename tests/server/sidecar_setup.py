"""The sidecar tests' API keys, auth headers and echo writer (imported from here, never from
conftest)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

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


@contextmanager
def on_loopback(app: Any, **config: Any) -> Iterator[str]:
    """``app`` served by a real uvicorn on a free loopback port, in a thread; its base URL."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **config)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        thread.join(0.05)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
