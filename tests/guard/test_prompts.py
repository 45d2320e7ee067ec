"""Prompts are package files; their content hash is their version; rendering is strict."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from mirage_guard.prompts import Prompt, PromptNotFoundError, available_prompts, load_prompt


def test_self_audit_prompt_loads_from_the_package() -> None:
    p = load_prompt("self_audit")
    on_disk = resources.files("mirage_guard.prompts").joinpath("self_audit.md").read_text("utf-8")
    assert p.name == "self_audit"
    assert p.text == on_disk
    assert "$conversation" in p.text
    assert "$candidates" in p.text


def test_version_is_the_content_hash() -> None:
    p = load_prompt("self_audit")
    assert p.version == hashlib.sha256(p.text.encode("utf-8")).hexdigest()[:12]
    assert p.ref == f"self_audit@{p.version}"


def test_any_edit_changes_the_version() -> None:
    a = Prompt(name="x", text="Label $candidates.")
    b = Prompt(name="x", text="Label $candidates!")
    assert a.version != b.version
    assert Prompt(name="y", text=a.text).version == a.version  # the name is not part of it


def test_render_fills_every_placeholder() -> None:
    p = load_prompt("self_audit")
    out = p.render(conversation="CONV-MARK", candidates="CAND-MARK")
    assert "CONV-MARK" in out
    assert "CAND-MARK" in out
    assert "$conversation" not in out
    assert "$candidates" not in out


def test_render_raises_on_a_missing_placeholder() -> None:
    with pytest.raises(KeyError, match="candidates"):
        load_prompt("self_audit").render(conversation="only this")


def test_render_does_not_reinterpret_values() -> None:
    p = Prompt(name="t", text="A: $a")
    assert p.render(a="costs $5 and ${b}") == "A: costs $5 and ${b}"


def test_unknown_prompt_is_a_typed_lookup_error() -> None:
    with pytest.raises(PromptNotFoundError):
        load_prompt("no_such_prompt")
    assert issubclass(PromptNotFoundError, LookupError)


def test_available_prompts_lists_the_guard_prompts() -> None:
    names = available_prompts()
    assert {"self_audit", "extract_candidates"} <= set(names)
    assert names == sorted(names)
    for name in names:
        assert load_prompt(name).version  # each one loads
