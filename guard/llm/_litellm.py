"""The real LLM client: any provider litellm knows, incl. ``hosted_vllm/...`` endpoints."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from mirage_guard.guard.errors import (
    LLMAuthError,
    LLMError,
    LLMOutputError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mirage_guard.guard.llm._base import Completion, LLMClient, Message, SamplingParams, Usage
from mirage_guard.guard.llm._structured import (
    StructuredMode,
    current_mode,
    downgrade,
    refuses_response_format,
    response_format,
)

# a 5xx whose body is a request validation error (llama.cpp's server answers 500 for those)
_VALIDATION_5XX = re.compile(r"validation error|Input should be|literal_error", re.I)
# a provider's key is missing: litellm raises it as a 500 or a connection error for some
# providers (openai, gemini), though no retry can help
_MISSING_KEY = re.compile(r"missing credentials|missing [\w -]*api[ _-]?key", re.I)


def _import_litellm() -> Any:
    # litellm fetches a price map from the network at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def missing_provider_keys(model: str, api_base: str | None = None) -> list[str]:
    """Provider env vars litellm says are missing for a model string (empty: all set); with the
    model's own ``api_base``, an endpoint variable it stands for is not missing."""
    check = _import_litellm().validate_environment(model, api_base=api_base)
    if check.get("keys_in_environment", True):
        return []
    return [str(k) for k in check.get("missing_keys", [])]


def _translate(exc: Exception, model: str) -> LLMError:
    litellm = _import_litellm()
    msg = str(exc)[:2000]
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return LLMRefusalError(msg, model=model)
    if isinstance(exc, litellm.BadRequestError | litellm.UnprocessableEntityError):
        return LLMRequestError(msg, model=model, status=status)
    if isinstance(exc, litellm.InternalServerError | litellm.APIError) and _VALIDATION_5XX.search(
        msg
    ):
        # the server validated the request and refused it: the same request cannot succeed
        return LLMRequestError(msg, model=model, status=status)
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
    if isinstance(exc, litellm.InternalServerError | litellm.APIConnectionError) and (
        _MISSING_KEY.search(msg)
    ):
        return LLMAuthError(msg, model=model)
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

    @property
    def structured_mode(self) -> StructuredMode:
        """The structured-output mode this model (at this endpoint) uses in this process."""
        return current_mode(_import_litellm(), self.model, self.api_base)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        litellm = _import_litellm()
        kwargs = self._kwargs(messages, params)
        mode: StructuredMode | None = None
        if schema is not None:
            mode = current_mode(litellm, self.model, self.api_base)
        while True:
            fmt = response_format(mode, schema) if mode is not None and schema else None
            if fmt is not None:
                kwargs["response_format"] = fmt
            else:
                kwargs.pop("response_format", None)
            try:
                response = await litellm.acompletion(**kwargs)
                break
            except LLMError:
                raise
            except Exception as exc:  # litellm raises many provider-specific types
                err = _translate(exc, self.model)
                if mode is not None and fmt is not None and _is_format_refusal(err, str(exc)):
                    nxt = downgrade(self.model, self.api_base, mode)
                    if nxt is not None:
                        mode = nxt
                        continue
                raise err from exc
        return self._completion(litellm, response, mode)

    def _kwargs(self, messages: Sequence[Message], params: SamplingParams | None) -> dict[str, Any]:
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
        if p.stop:
            kwargs["stop"] = list(p.stop)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        return kwargs

    def _completion(self, litellm: Any, response: Any, mode: StructuredMode | None) -> Completion:
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
            structured_mode=mode.value if mode is not None else None,
        )


def _is_format_refusal(err: LLMError, upstream: str) -> bool:
    return isinstance(err, LLMRequestError) and refuses_response_format(upstream)
