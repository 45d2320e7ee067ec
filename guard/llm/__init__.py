"""Language-model seam: one interface, litellm as the real provider, scripted fakes for tests.

Part of the core: litellm is imported lazily, inside the provider, never at import time.
"""

from mirage_guard.guard.llm._base import (
    Completion,
    LLMClient,
    Message,
    SamplingParams,
    Usage,
    parse_json_output,
)
from mirage_guard.guard.llm._litellm import LiteLLMClient, missing_provider_keys
from mirage_guard.guard.llm._retry import RetryingLLM
from mirage_guard.guard.llm._scripted import FunctionLLM, RecordedCall, ScriptedLLM
from mirage_guard.guard.llm._structured import (
    ModeDecision,
    StructuredMode,
    forget_modes,
    mode_of,
    structured_output_modes,
)


def create_llm(model: str, *, api_base: str | None = None, timeout_s: float = 60.0) -> LLMClient:
    """Client for a litellm model string (``openai/gpt-4o-mini``, ``hosted_vllm/Qwen/...``)."""
    return LiteLLMClient(model, api_base=api_base, timeout_s=timeout_s)


__all__ = [
    "Completion",
    "FunctionLLM",
    "LLMClient",
    "LiteLLMClient",
    "Message",
    "ModeDecision",
    "RecordedCall",
    "RetryingLLM",
    "SamplingParams",
    "ScriptedLLM",
    "StructuredMode",
    "Usage",
    "create_llm",
    "forget_modes",
    "missing_provider_keys",
    "mode_of",
    "parse_json_output",
    "structured_output_modes",
]
