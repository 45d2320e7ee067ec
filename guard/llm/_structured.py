"""Structured output that degrades by what the endpoint supports, decided once per model.

Four modes, best first::

    json_schema         response_format {"type": "json_schema", ...}   OpenAI, vLLM
    json_object_schema  response_format {"type": "json_object",        llama.cpp's server: the
                                         "schema": {...}}              schema becomes a grammar
    json_object         response_format {"type": "json_object"}        most others
    text                no response_format; the answer is parsed strictly (one JSON value, a
                        fenced block tolerated, nothing else)

``json_object_schema`` is what llama.cpp's OpenAI-compatible server offers instead of
``json_schema``: it compiles the schema into a grammar, so even a small base model answers with
JSON of the right shape (bounded strings keep it from running out of tokens; the wire schemas
set ``maxLength``). A server that refuses the extra ``schema`` key moves on to ``json_object``.

A model starts at ``json_schema`` (or ``json_object`` when litellm *knows* the model and says it
has no response schema support). The first time a server refuses a response_format — an
error that names ``response_format`` / ``json_schema`` — the same call is sent again with the
next mode, and that mode is remembered for the model (and endpoint) for the rest of the process.
The server's answer wins over litellm's table. Each decision is logged once, and
:func:`structured_output_modes` lists them (the sidecar's ``/v1/profiles`` shows it).
"""

from __future__ import annotations

import logging
import re
import threading
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

log = logging.getLogger("mirage.llm")


class StructuredMode(StrEnum):
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    JSON_OBJECT = "json_object"
    TEXT = "text"

    def next_down(self) -> StructuredMode | None:
        order = list(StructuredMode)
        i = order.index(self)
        return order[i + 1] if i + 1 < len(order) else None


class ModeDecision(BaseModel):
    """What mode a model (at an endpoint) uses, and why."""

    model: str
    api_base: str | None = None
    mode: StructuredMode
    reason: str


_lock = threading.Lock()
_decisions: dict[tuple[str, str | None], ModeDecision] = {}

# what a refusal of the response_format looks like in a provider's error text
_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|response format", re.I)


def refuses_response_format(message: str) -> bool:
    """True when a provider's error text is about the response_format it was sent."""
    return bool(_NAMES_FORMAT.search(message))


def _litellm_initial(litellm: Any, model: str) -> ModeDecision:
    try:
        litellm.get_model_info(model)
    except Exception:  # unknown to litellm's table: ask the server, best mode first
        return ModeDecision(
            model=model, mode=StructuredMode.JSON_SCHEMA, reason="unknown to litellm; try best"
        )
    try:
        supported = bool(litellm.supports_response_schema(model=model))
    except Exception:
        supported = True
    if supported:
        return ModeDecision(
            model=model, mode=StructuredMode.JSON_SCHEMA, reason="litellm: supports schema"
        )
    return ModeDecision(
        model=model, mode=StructuredMode.JSON_OBJECT_SCHEMA, reason="litellm: no response schema"
    )


def current_mode(litellm: Any, model: str, api_base: str | None) -> StructuredMode:
    """The mode to send for ``model`` at ``api_base`` (decided on first use)."""
    key = (model, api_base)
    with _lock:
        decision = _decisions.get(key)
        if decision is None:
            decision = _litellm_initial(litellm, model).model_copy(update={"api_base": api_base})
            _decisions[key] = decision
        return decision.mode


def downgrade(model: str, api_base: str | None, refused: StructuredMode) -> StructuredMode | None:
    """The server refused ``refused``: remember the next mode down (None: nothing left)."""
    nxt = refused.next_down()
    if nxt is None:
        return None
    key = (model, api_base)
    with _lock:
        decision = _decisions.get(key)
        if decision is not None and decision.mode is not refused:
            return decision.mode  # another call already moved it
        _decisions[key] = ModeDecision(
            model=model, api_base=api_base, mode=nxt, reason=f"server refused {refused.value}"
        )
    log.warning(
        "structured output for %s: the server refused response_format %s; using %s from now on",
        model,
        refused.value,
        nxt.value,
    )
    return nxt


def response_format(mode: StructuredMode, schema: type[BaseModel]) -> dict[str, Any] | None:
    if mode is StructuredMode.JSON_SCHEMA:
        return {
            "type": "json_schema",
            "json_schema": {
                "name": schema.__name__,
                "schema": schema.model_json_schema(),
                "strict": False,
            },
        }
    if mode is StructuredMode.JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": _grammar_safe(schema.model_json_schema())}
    if mode is StructuredMode.JSON_OBJECT:
        return {"type": "json_object"}
    return None


def _grammar_safe(node: Any) -> Any:
    """The schema without string length bounds: llama.cpp unrolls ``maxLength: N`` into N nested
    optional rules, which is slow to sample from and, for large N, a grammar it cannot parse
    (the server then dies). Lengths are still checked when the answer is parsed; ``max_tokens``
    bounds the answer."""
    if isinstance(node, dict):
        return {k: _grammar_safe(v) for k, v in node.items() if k not in ("maxLength", "minLength")}
    if isinstance(node, list):
        return [_grammar_safe(v) for v in node]
    return node


def structured_output_modes() -> list[ModeDecision]:
    """Every mode decided in this process, for describe output and run records."""
    with _lock:
        return list(_decisions.values())


def mode_of(model: str, api_base: str | None = None) -> StructuredMode | None:
    with _lock:
        decision = _decisions.get((model, api_base))
        return decision.mode if decision else None


def forget_modes() -> None:
    """Clear every decision (tests; a new process starts empty anyway)."""
    with _lock:
        _decisions.clear()
