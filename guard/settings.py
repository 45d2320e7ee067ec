"""All configuration in one place. Every field is an env var ``MIRAGE_<FIELD>`` (see README)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from mirage_guard.guard._domain import Action
from mirage_guard.guard._policy import check_action
from mirage_guard.guard.errors import ConfigError


class AuditMode(StrEnum):
    OFF = "off"  # evidence-only scoring
    SEPARATE = "separate"  # paper-faithful: a second call labels the candidates
    INLINE = "inline"  # the extraction prompt returns labels too (zero extra calls)


class AuditFailure(StrEnum):
    QUARANTINE = "quarantine"  # fail closed: the write goes on, nothing becomes a stated fact
    ERROR = "error"  # fail closed: the write is refused with a typed error


def _api_key_pairs(raw: str) -> dict[str, str]:
    """``MIRAGE_API_KEYS`` as API key -> tenant. Key and tenant are stripped (as a presented key
    is); an entry that is not ``key:tenant`` or repeats a key is a ``ValueError`` naming its
    position in the comma list, never the key (a secret)."""
    pairs: dict[str, str] = {}
    where: dict[str, int] = {}
    for position, item in enumerate(raw.split(","), start=1):
        if not item.strip():
            continue
        key, sep, tenant = (part.strip() for part in item.partition(":"))
        if not sep or not key or not tenant:
            raise ValueError(
                f"entry {position} is not key:tenant (must look like key1:tenant1,key2:tenant2)"
            )
        if key in where:
            raise ValueError(
                f"entry {position} repeats the key of entry {where[key]}: a key is listed once, "
                "for one tenant"
            )
        where[key] = position
        pairs[key] = tenant
    return pairs


def _admin_keys(raw: str) -> list[str]:
    return [k.strip() for k in raw.split(",") if k.strip()]


class GuardSettings(BaseSettings):
    # a timeout or a budget of inf (or NaN) is no setting: every number must be finite; an
    # invalid value is never echoed in an error (API keys and database URLs are secrets)
    model_config = SettingsConfigDict(
        env_prefix="MIRAGE_",
        env_file=None,
        extra="ignore",
        allow_inf_nan=False,
        hide_input_in_errors=True,
    )

    @classmethod
    def from_env(cls) -> Self:
        """The settings of the environment (``MIRAGE_*``); a value that is not valid is a
        :class:`ConfigError` naming its variable, not a pydantic ``ValidationError``."""
        try:
            return cls()
        except ValidationError as exc:
            first = exc.errors()[0]
            name = f"MIRAGE_{str(first['loc'][0]).upper()}" if first["loc"] else "MIRAGE_*"
            raise ConfigError(f"{name}: {first['msg']}") from exc

    data_dir: Path = Field(default=Path(".mirage"), description="where embedded stores live")
    min_free_bytes: int = Field(
        default=64 * 1024 * 1024, ge=0, description="below this free space the sidecar is not ready"
    )
    writer_model: str | None = Field(
        default=None, description="litellm model string of the model that writes memories"
    )
    writer_api_base: str | None = Field(default=None, description="e.g. a vLLM server URL")
    # 4 tries of 25 s with back-off: 110 s at most, under the idempotency lease (120 s)
    writer_timeout_s: float = Field(
        default=25.0, gt=0, description="one call to the writer model (extraction) may take this"
    )
    writer_attempts: int = Field(
        default=4, ge=1, le=10, description="tries of a writer call that timed out or failed"
    )
    audit_mode: AuditMode = AuditMode.OFF
    audit_timeout_s: float = Field(default=30.0, gt=0)
    on_audit_failure: AuditFailure = AuditFailure.QUARANTINE
    auditor_model: str | None = Field(
        default=None,
        description="litellm model string of an independent auditor: with audit_mode "
        "'separate', this model (not the writer) labels every write's candidates, and the "
        "guard uses this model's own self_audit_separate profile, fitted with the auditor's "
        "prompt (`mirage calibrate audit --model AUDITOR --as-auditor`, or `mirage calibrate "
        "job`); unset = the writer audits itself",
    )
    auditor_api_base: str | None = Field(
        default=None, description="the auditor's server URL (e.g. vLLM); unset = its provider's"
    )
    inferred_action: Action = Action.STORE_AS_HYPOTHESIS
    generated_action: Action = Action.QUARANTINE
    stated_min: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="a floor on P(stated) for a claim to be stored as a stated fact on its score "
        "(above the profile's own threshold); below it the claim is inferred (inferred_action)",
    )
    profile_dir: Path | None = Field(
        default=None, description="extra calibration profiles (JSON) besides the shipped ones"
    )
    database_url: str | None = Field(
        default=None,
        description="decision log, idempotency keys and turns (SQLAlchemy URL, e.g. "
        "postgresql://user:pw@host/db); default sqlite file in data_dir",
    )
    vector_store_url: str | None = Field(
        default=None,
        description="Mem0's store on PostgreSQL + pgvector (postgresql://...), shared by "
        "replicas; unset = embedded Qdrant in data_dir (one process)",
    )
    vector_store_collection: str = Field(
        default="mirage_memories", pattern=r"^[a-z_][a-z0-9_]{0,62}$", description="pgvector table"
    )
    idempotency_lease_s: float = Field(
        default=120.0,
        gt=0,
        description="an Idempotency-Key claimed longer ago with no answer is taken over "
        "(its owner died); longer than the slowest write",
    )
    idempotency_wait_s: float = Field(
        default=10.0,
        ge=0,
        description="how long a request waits for another one holding its Idempotency-Key",
    )
    # sidecar
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    api_keys: SecretStr | None = Field(
        default=None, description="comma list of key:tenant pairs; unset = auth disabled"
    )
    admin_keys: SecretStr | None = Field(
        default=None,
        description="comma list of keys for the admin routes (profile reload); unset = admin "
        "routes refused (SIGHUP still reloads)",
    )
    drift_window: int = Field(
        default=500,
        ge=10,
        description="live scores per writer model compared with its profile's fitted "
        "distribution (PSI); drift is unknown until a fifth of the window is filled",
    )
    max_body_bytes: int = Field(default=1_048_576, gt=0)
    max_turn_chars: int = Field(default=20_000, gt=0, description="characters per turn")
    max_candidate_chars: int = Field(default=2_000, gt=0, description="characters per candidate")
    linker_cache_bytes: int = Field(
        default=128 * 1024 * 1024, ge=0, description="evidence linker's sentence/token caches"
    )
    embedding_cache_bytes: int = Field(
        default=32 * 1024 * 1024, ge=0, description="shared guard/store embedding cache"
    )
    max_sentences_per_request: int = Field(
        default=2_000, gt=0, description="sentences of turns + candidates the encoder sees"
    )
    encode_chunk_texts: int = Field(
        default=32, gt=0, description="texts per encoder chunk (fair scheduling across requests)"
    )
    encode_budget_s: float = Field(
        default=30.0, gt=0, description="a request's encoding must finish within this (else 503)"
    )
    upstream_url: str | None = Field(
        default=None, description="remote Mem0 REST server; unset = embedded Mem0"
    )
    support_precision: Literal["fp32", "bf16", "auto"] = Field(
        default="fp32",
        description="the claim-support cross-encoder at inference: fp32 (as measured), bf16 "
        "(CPU bf16 autocast: faster where the CPU has AMX / AVX512-BF16, changes the top class "
        "of ~0.5 % of pairs) or auto (bf16 only on such a CPU)",
    )
    support_dir: Path | None = Field(
        default=None,
        description="a claim-support cross-encoder folder written by `mirage calibrate "
        "train-support` (model.safetensors + manifest.json, sha256-checked) to use instead of "
        "the shipped one; unset = the shipped one. Its evidence profile must be fitted with it "
        "(`mirage calibrate fit-evidence --support-dir`): a profile fitted with other weights is "
        "refused at start",
    )

    @field_validator("inferred_action", "generated_action")
    @classmethod
    def _allowed(cls, v: Action, info: ValidationInfo) -> Action:
        return check_action(str(info.field_name), v)  # the policy's own rule

    @field_validator("auditor_model", "auditor_api_base")
    @classmethod
    def _auditor_needs_separate(cls, v: str | None, info: ValidationInfo) -> str | None:
        """An auditor only labels in a call of its own: with 'inline' the writer's extraction
        call gives the labels, with 'off' nothing does, so a configured auditor would be
        silently ignored."""
        if v is None:
            return v
        v = v.strip()  # " openai/x" would match no profile's key
        if not v:
            raise PydanticCustomError(str(info.field_name), "must not be empty (unset it instead)")
        if info.field_name == "auditor_api_base" and not info.data.get("auditor_model"):
            raise PydanticCustomError(
                "auditor_api_base", "is the auditor's server, but MIRAGE_AUDITOR_MODEL is not set"
            )
        mode = info.data.get("audit_mode")
        if mode is not None and mode is not AuditMode.SEPARATE:
            raise PydanticCustomError(
                str(info.field_name),
                f"an independent auditor labels in a call of its own: set MIRAGE_AUDIT_MODE="
                f"separate (it is {mode.value!r}) or unset MIRAGE_{str(info.field_name).upper()}",
            )
        return v

    @field_validator("api_keys")
    @classmethod
    def _key_tenant_pairs(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            try:
                _api_key_pairs(v.get_secret_value())
            except ValueError as exc:
                raise PydanticCustomError("api_keys", str(exc)) from None
        return v

    @field_validator("admin_keys")
    @classmethod
    def _not_a_tenant_key(cls, v: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """An admin key that is also a tenant's key would open the admin routes to that tenant
        (the README: admin routes take "never a tenant key")."""
        tenant_keys: SecretStr | None = info.data.get("api_keys")
        if v is None or tenant_keys is None:
            return v
        tenants = _api_key_pairs(tenant_keys.get_secret_value())
        for position, item in enumerate(v.get_secret_value().split(","), start=1):
            if item.strip() in tenants:
                raise PydanticCustomError(
                    "admin_keys",
                    f"entry {position} is also a tenant's key in MIRAGE_API_KEYS: an admin key "
                    "must not be a tenant key",
                )
        return v

    def audit_labeller(self) -> tuple[str | None, str | None]:
        """(model, api base) of the model whose labels the self-audit profile calibrates: the
        independent auditor when one is set, else the writer (which then audits itself)."""
        if self.auditor_model:
            return self.auditor_model, self.auditor_api_base
        return self.writer_model, self.writer_api_base

    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'decisions.db').resolve()}"

    def admin_key_list(self) -> list[str]:
        """Keys of the admin routes. Empty when they are refused."""
        if self.admin_keys is None:
            return []
        return _admin_keys(self.admin_keys.get_secret_value())

    def tenant_keys(self) -> dict[str, str]:
        """API key -> tenant (key and tenant stripped). Empty when auth is disabled."""
        if self.api_keys is None:
            return {}
        return _api_key_pairs(self.api_keys.get_secret_value())
