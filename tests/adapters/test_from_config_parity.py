"""``GuardedMemory.from_config`` with a Mem0 app's own configuration: the writer model its ``llm``
block names is the guard's writer (it was ignored, and every default ``add`` failed asking for
MIRAGE_WRITER_MODEL), and a Mem0 prompt setting the guard would not apply is refused (an app's
``custom_instructions: "Only extract food preferences."`` was dropped silently, and "User lives
in Oslo" stored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mirage_guard.adapters import GuardedMemory, embedded_mem0_config
from mirage_guard.adapters._compose import refuse_ignored_prompts, writer_from_mem0_llm
from mirage_guard.guard import GuardSettings
from mirage_guard.guard.errors import ConfigError


@pytest.mark.parametrize(
    ("llm", "expected"),
    [
        ({"provider": "openai", "config": {"model": "gpt-4o-mini"}}, ("openai/gpt-4o-mini", None)),
        (
            {"provider": "litellm", "config": {"model": "anthropic/claude-3-5-haiku-latest"}},
            ("anthropic/claude-3-5-haiku-latest", None),
        ),
        ({"provider": "together", "config": {"model": "m"}}, ("together_ai/m", None)),
        (
            {"provider": "ollama", "config": {"model": "llama3", "ollama_base_url": "http://h:1"}},
            ("ollama/llama3", "http://h:1"),
        ),
        (
            {
                "provider": "vllm",
                "config": {"model": "Qwen/Qwen3-8B", "vllm_base_url": "http://g/v1"},
            },
            ("hosted_vllm/Qwen/Qwen3-8B", "http://g/v1"),
        ),
        (
            {"provider": "deepseek", "config": {"model": "d", "deepseek_base_url": "http://gw"}},
            ("deepseek/d", "http://gw"),
        ),
        (
            {"provider": "litellm", "config": {"model": "x/y", "openai_base_url": "http://gw"}},
            ("x/y", "http://gw"),
        ),
        (None, (None, None)),
        ({"provider": "openai"}, (None, None)),  # no model named: none taken
    ],
)
def test_the_writer_model_a_mem0_llm_block_names(
    llm: Any, expected: tuple[str | None, str | None]
) -> None:
    assert writer_from_mem0_llm(llm) == expected


@pytest.mark.parametrize(
    ("llm", "message"),
    [
        ({"provider": "aws_bedrock", "config": {"model": "m"}}, "set MIRAGE_WRITER_MODEL"),
        (
            {"provider": "openai", "config": {"model": "m", "api_key": "sk-x"}},
            "from the environment",
        ),
        (
            {
                "provider": "openai",
                "config": {
                    "model": "m",
                    "openai_base_url": "http://a",
                    "azure_base_url": "http://b",
                },
            },
            "2 different base URLs",
        ),
    ],
)
def test_what_cannot_be_told_to_litellm_is_refused(llm: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        writer_from_mem0_llm(llm)
    assert "sk-x" not in str(err.value)


@pytest.mark.parametrize("key", ["custom_instructions", "custom_fact_extraction_prompt"])
def test_a_mem0_prompt_setting_is_refused_not_ignored(key: str) -> None:
    with pytest.raises(ConfigError, match=f"{key}: the guard extracts with its own prompt"):
        refuse_ignored_prompts({key: "Only extract food preferences."})
    refuse_ignored_prompts({key: ""})  # unset is fine


@pytest.mark.slow
def test_from_config_takes_the_writer_model_and_refuses_custom_instructions(
    data_dir: Path,
) -> None:
    config = embedded_mem0_config(data_dir / "app")
    # Mem0 builds its own client for the block at once (an openai one wants OPENAI_API_KEY)
    config["llm"] = {"provider": "litellm", "config": {"model": "openai/gpt-4o-mini"}}
    memory = GuardedMemory.from_config(config, settings=GuardSettings(data_dir=data_dir))
    try:
        assert memory.inner.guard.writer_model == "openai/gpt-4o-mini"
    finally:
        memory.close()
    with pytest.raises(ConfigError, match="custom_instructions"):
        GuardedMemory.from_config(
            {**config, "custom_instructions": "Only extract food preferences."},
            settings=GuardSettings(data_dir=data_dir),
        )
