"""Settings: every field is a MIRAGE_* env var; unsafe policies are refused at load time."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from mirage_guard.guard import Action, AuditFailure, AuditMode, GuardSettings


def test_defaults_are_offline_and_closed() -> None:
    s = GuardSettings()
    assert s.writer_model is None
    assert s.audit_mode is AuditMode.OFF
    assert s.on_audit_failure is AuditFailure.QUARANTINE
    assert s.inferred_action is Action.STORE_AS_HYPOTHESIS
    assert s.generated_action is Action.QUARANTINE
    assert s.stated_min is None  # the profile's own stated threshold
    assert s.tenant_keys() == {}


def test_env_vars_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MIRAGE_WRITER_MODEL", "hosted_vllm/Qwen/Qwen3-8B")
    monkeypatch.setenv("MIRAGE_AUDIT_MODE", "separate")
    monkeypatch.setenv("MIRAGE_ON_AUDIT_FAILURE", "error")
    monkeypatch.setenv("MIRAGE_AUDIT_TIMEOUT_S", "2.5")
    monkeypatch.setenv("MIRAGE_GENERATED_ACTION", "block")
    monkeypatch.setenv("MIRAGE_STATED_MIN", "0.9")
    monkeypatch.setenv("MIRAGE_PROFILE_DIR", str(tmp_path))
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    s = GuardSettings()
    assert s.writer_model == "hosted_vllm/Qwen/Qwen3-8B"
    assert s.audit_mode is AuditMode.SEPARATE
    assert s.on_audit_failure is AuditFailure.ERROR
    assert s.audit_timeout_s == 2.5
    assert s.generated_action is Action.BLOCK
    assert s.stated_min == 0.9
    assert s.profile_dir == tmp_path
    assert (
        s.resolved_database_url() == f"sqlite:///{(tmp_path / 'data' / 'decisions.db').resolve()}"
    )


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("MIRAGE_INFERRED_ACTION", "store"),
        ("MIRAGE_GENERATED_ACTION", "store"),
        ("MIRAGE_GENERATED_ACTION", "store_as_hypothesis"),
        ("MIRAGE_AUDIT_MODE", "sometimes"),
        ("MIRAGE_AUDIT_TIMEOUT_S", "0"),
        ("MIRAGE_STATED_MIN", "1.5"),
        ("MIRAGE_STATED_MIN", "high"),
    ],
)
def test_unsafe_or_invalid_values_are_refused(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ValidationError):
        GuardSettings()


def test_api_keys_map_to_tenants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRAGE_API_KEYS", "k1:acme, k2:globex,")
    assert GuardSettings().tenant_keys() == {"k1": "acme", "k2": "globex"}
    monkeypatch.setenv("MIRAGE_API_KEYS", "k1acme")
    with pytest.raises(ValueError, match="key1:tenant1"):
        GuardSettings().tenant_keys()


def test_api_keys_are_not_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRAGE_API_KEYS", "supersecret:acme")
    s = GuardSettings()
    assert "supersecret" not in repr(s)
    assert "supersecret" not in s.model_dump_json()


@pytest.mark.parametrize(
    ("field", "bad"), [("inferred_action", "store"), ("generated_action", "store_as_hypothesis")]
)
def test_policy_and_settings_refuse_the_same_actions_with_one_rule(field: str, bad: str) -> None:
    from pydantic import ValidationError

    from mirage_guard.guard import Policy
    from mirage_guard.guard.settings import GuardSettings

    messages = []
    for build in (Policy, GuardSettings):
        with pytest.raises(ValidationError) as err:
            build(**{field: bad})
        messages.append(err.value.errors()[0]["msg"])
    assert messages[0] == messages[1]
    assert field in messages[0]
