"""The real LLM client: any provider litellm knows, incl. ``hosted_vllm/...`` endpoints."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from mirage_guard.guard.errors import (
    LLMAuthError,
    LLMError,
    LLMOutputError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mirage_guard.guard.llm._base import Completion, LLMClient, Message, SamplingParams, Usage


def _import_litellm() -> Any:
    # litellm fetches a price map from the network at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def missing_provider_keys(model: str) -> list[str]:
    """Provider env vars litellm says are missing for a model string (empty: all set)."""
    check = _import_litellm().validate_environment(model)
    if check.get("keys_in_environment", True):
        return []
    return [str(k) for k in check.get("missing_keys", [])]


def _translate(exc: Exception, model: str) -> LLMError:
    litellm = _import_litellm()
    msg = str(exc)[:500]
    if isinstance(exc, litellm.Timeout):
        return LLMTimeoutError(msg, model=model)
    if isinstance(exc, litellm.RateLimitError):
        retry_after = None
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        if "retry-after" in headers:
            try:
                retry_after = float(headers["retry-after"])
            except ValueError:
                retry_after = None
        return LLMRateLimitError(msg, model=model, retry_after=retry_after)
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return LLMAuthError(msg, model=model)
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return LLMRefusalError(msg, model=model)
    if isinstance(
        exc,
        litellm.APIConnectionError
        | litellm.ServiceUnavailableError
        | litellm.InternalServerError
        | litellm.BadGatewayError,
    ):
        return LLMUnavailableError(msg, model=model)
    return LLMError(f"{type(exc).__name__}: {msg}", model=model)


class LiteLLMClient(LLMClient):
    """``litellm.acompletion`` behind the LLMClient seam.

    Retries are *not* done here (wrap with :class:`guard.llm.RetryingLLM`), so a rate limit is
    reported once, typed, and the caller's policy decides.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.extra = dict(extra or {})

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        litellm = _import_litellm()
        p = params or SamplingParams()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "timeout": self.timeout_s,
            "num_retries": 0,
            **self.extra,
        }
        if p.temperature is not None:
            kwargs["temperature"] = p.temperature
        if p.max_tokens is not None:
            kwargs["max_tokens"] = p.max_tokens
        if p.seed is not None:
            kwargs["seed"] = p.seed
        if schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema.__name__,
                    "schema": schema.model_json_schema(),
                    "strict": False,
                },
            }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        try:
            response = await litellm.acompletion(**kwargs)
        except LLMError:
            raise
        except Exception as exc:  # litellm raises many provider-specific types
            raise _translate(exc, self.model) from exc
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            raise LLMOutputError("the provider returned no message", model=self.model)
        choice = choices[0]
        text = getattr(message, "content", None) or ""
        finish = getattr(choice, "finish_reason", None)
        if finish == "content_filter" or getattr(message, "refusal", None):
            raise LLMRefusalError(
                str(getattr(message, "refusal", None) or "content filter"), model=self.model
            )
        usage = getattr(response, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # unknown price for this model: report as unknown, not zero
            cost = None
        return Completion(
            text=text,
            model=self.model,
            usage=Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            ),
            cost_usd=cost,
            finish_reason=finish,
        )
