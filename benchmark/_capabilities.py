"""What each provider accepts: sampling params litellm would reject are dropped before the call.

Providers differ: Anthropic takes no ``seed``; GPT-5-family reasoning models take only
``temperature=1``. The lookup is litellm's own: :func:`litellm.get_supported_openai_params` says
which OpenAI params a provider knows, and :func:`litellm.utils.get_optional_params` with
``drop_params=True`` says which values survive its provider mapping (that is where the GPT-5
temperature rule lives). A param that does not survive is dropped here, visibly: the effective
params go into the cache key and the run manifest records, per model and role, what was requested,
what was sent (in the provider's own names) and what was dropped. Nothing is dropped silently
inside litellm: the real client is called without ``drop_params``, so a param litellm still
rejects fails loudly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from mirage_guard.guard.llm import Completion, LLMClient, Message, SamplingParams

SAMPLING_FIELDS: tuple[str, ...] = ("temperature", "max_tokens", "seed", "stop")
# names a provider uses for the OpenAI param (litellm maps max_tokens per provider)
_PROVIDER_NAMES: dict[str, tuple[str, ...]] = {
    "temperature": ("temperature",),
    "max_tokens": ("max_tokens", "max_completion_tokens", "max_output_tokens"),
    "seed": ("seed",),
    "stop": ("stop", "stop_sequences"),
}


class ParamsSent(BaseModel):
    """One model's sampling params for one role: requested, sent to the provider, dropped."""

    model: str
    provider: str
    requested: dict[str, float | int | list[str]] = Field(
        description="non-null SamplingParams asked for"
    )
    sent: dict[str, Any] = Field(description="litellm's provider-side params (provider names)")
    dropped: dict[str, str] = Field(
        default_factory=dict, description="param -> why (litellm's capability lookup)"
    )

    def effective(self, params: SamplingParams) -> SamplingParams:
        return params.model_copy(update=dict.fromkeys(self.dropped))


def _requested(params: SamplingParams) -> dict[str, float | int | list[str]]:
    dumped = params.model_dump()  # stop as a list
    return {k: dumped[k] for k in SAMPLING_FIELDS if dumped[k] is not None}


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def resolve_params(model: str, params: SamplingParams, *, offline: bool = False) -> ParamsSent:
    """What litellm will send for ``params`` to ``model`` (offline mock models take all)."""
    requested = _requested(params)
    if offline:
        return ParamsSent(model=model, provider="offline", requested=requested, sent=requested)
    litellm = _litellm()
    name, provider, _, _ = litellm.get_llm_provider(model)
    supported = set(litellm.get_supported_openai_params(model=name, custom_llm_provider=provider))
    dropped: dict[str, str] = {}
    for key in requested:
        if key not in supported:
            dropped[key] = f"{provider} does not support {key!r} (get_supported_openai_params)"
    kept = {k: v for k, v in requested.items() if k not in dropped}
    sent: dict[str, Any] = litellm.utils.get_optional_params(
        model=name, custom_llm_provider=provider, drop_params=True, **kept
    )
    for key, value in kept.items():
        if not any(n in sent for n in _PROVIDER_NAMES[key]):
            dropped[key] = f"{provider} rejects {key}={value} for {name} (litellm param mapping)"
    sent = {k: v for k, v in sent.items() if k not in ("stream", "extra_body")}
    return ParamsSent(
        model=model, provider=provider, requested=requested, sent=sent, dropped=dropped
    )


class CapabilityAwareLLM(LLMClient):
    """Sends each call with the params its provider accepts (see :func:`resolve_params`).

    Outermost wrapper, so cache keys hold the params that reach the model. ``seen`` keeps the
    resolution of every distinct requested params, for the manifest.
    """

    def __init__(self, inner: LLMClient, *, offline: bool = False) -> None:
        self.inner = inner
        self.model = inner.model
        self.offline = offline
        self.seen: dict[SamplingParams, ParamsSent] = {}

    def resolve(self, params: SamplingParams) -> ParamsSent:
        if params not in self.seen:
            self.seen[params] = resolve_params(self.model, params, offline=self.offline)
        return self.seen[params]

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        effective = self.resolve(params or SamplingParams()).effective(params or SamplingParams())
        return await self.inner.complete(messages, schema=schema, params=effective)

    async def aclose(self) -> None:
        await self.inner.aclose()
