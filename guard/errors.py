"""Errors raised by mirage-guard.

One root, subclasses carry context and say whether a retry can help::

    MirageError                      root of everything raised on purpose
    ├── InputError                   the caller's data is invalid (bad turn ids, empty text...)
    │   ├── IdempotencyConflictError an idempotency key was reused for a different request
    │   │   └── IdempotencyInProgressError  another request holds the key now (retryable)
    │   └── LimitExceededError       a request is over a size limit (.limit, .value, .maximum)
    ├── MemoryNotFoundError          no memory with that id (for this tenant)
    ├── ConfigError                  settings or an extra are missing/invalid
    │   ├── MissingExtraError        an optional dependency is not installed (prints the pip line)
    │   └── SupportModelError        the shipped support model is missing or fails its hash check
    ├── ProfileError                 calibration profiles
    │   ├── ProfileNotFoundError     no profile for (model, prompt version, mode)
    │   └── ProfileMismatchError     a profile fitted for another model/prompt/mode was offered
    ├── LLMError                     a call to a language model failed (.model, .retryable)
    │   ├── LLMTimeoutError          retryable
    │   ├── LLMRateLimitError        retryable, honour .retry_after
    │   ├── LLMUnavailableError      connection / 5xx, retryable
    │   ├── LLMAuthError             not retryable
    │   ├── LLMRefusalError          the model refused or a content filter fired
    │   ├── LLMRequestError          the provider rejected the request itself (4xx, validation)
    │   └── LLMOutputError           output is not valid JSON for the schema (malformed, partial)
    ├── BackendError                 the memory backend failed (.retryable)
    │   ├── BackendUnavailableError  upstream store cannot be reached
    │   └── DatabaseUnavailableError the decision log's database cannot be reached (retryable)
    ├── EncoderBusyError             a request's encoding ran past its budget (retryable)
    └── ClosedError                  a guarded memory was used after close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class MirageError(Exception):
    """Root of all errors raised on purpose by mirage-guard."""

    retryable: bool = False


class InputError(MirageError, ValueError):
    """The caller's input is invalid; nothing was written."""


def validation_message(exc: ValidationError) -> str:
    """The first error of ``exc`` as "field: message" (just the message for the whole object),
    for an :class:`InputError` that names the file and line of a bad record."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


class IdempotencyConflictError(InputError):
    """An idempotency key was already used for a different request body."""


class IdempotencyInProgressError(IdempotencyConflictError):
    """Another request with the same idempotency key (on this or another replica) has not
    answered yet; retrying later returns its answer."""

    retryable = True


class LimitExceededError(InputError):
    """A request is over one of the per-request limits (``.limit`` names it); nothing was
    encoded or written. Retrying the same request cannot help: split it. ``.value`` is None
    when counting stopped once past ``.maximum`` (the request's own total is not known)."""

    def __init__(self, limit: str, value: int | None, maximum: int) -> None:
        self.limit = limit
        self.value = value
        self.maximum = maximum
        over = f"more than {maximum}" if value is None else f"{value} > {maximum}"
        super().__init__(f"request over the {limit} limit: {over}")


class MemoryNotFoundError(MirageError, LookupError, ValueError):
    """No memory with that id is visible to the caller (unknown, deleted or another tenant's).

    Also a ``ValueError``: ``mem0.Memory.update`` / ``delete`` raise that for an unknown id, so
    a caller's ``except ValueError`` keeps working with the drop-in."""

    def __init__(self, memory_id: str) -> None:
        self.memory_id = memory_id
        super().__init__(f"memory {memory_id!r} not found")


class ConfigError(MirageError):
    """Configuration is missing or invalid."""


class MissingExtraError(ConfigError, ImportError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is required for this feature: pip install 'mirage-guard[{extra}]'"
        )


class SupportModelError(ConfigError):
    """The claim-support model's files are missing or their sha256 differs from the manifest."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        super().__init__(
            f"support model at {path}: {detail} (regenerate with `mirage calibrate train-support`)"
        )


class ProfileError(MirageError):
    """Calibration profile problem."""


class ProfileNotFoundError(ProfileError, LookupError):
    """No profile matches the requested key."""


class ProfileMismatchError(ProfileError):
    """A profile fitted for one (model, prompt version, mode) was offered for another."""

    def __init__(self, profile_id: str, field: str, expected: str, actual: str) -> None:
        self.profile_id = profile_id
        self.field = field
        self.expected = expected
        self.actual = actual
        fix = (
            "`mirage calibrate fit-evidence --support-dir` with the model in use, or point "
            "MIRAGE_SUPPORT_DIR at the model it was fitted with"
            if field == "support model"
            else "`mirage calibrate fit`"
        )
        super().__init__(
            f"calibration profile {profile_id!r} was fitted for {field}={actual!r}, "
            f"not {expected!r}; refusing to reuse it (fit one with {fix})"
        )


class LLMError(MirageError):
    """A language-model call failed."""

    def __init__(self, message: str, *, model: str | None = None) -> None:
        self.model = model
        super().__init__(f"[{model}] {message}" if model else message)


class LLMTimeoutError(LLMError):
    retryable = True


class LLMRateLimitError(LLMError):
    retryable = True

    def __init__(
        self, message: str, *, model: str | None = None, retry_after: float | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, model=model)


class LLMUnavailableError(LLMError):
    retryable = True


class LLMAuthError(LLMError):
    """Credentials are missing or rejected."""


class LLMRefusalError(LLMError):
    """The model refused to answer or a content filter blocked it."""


class LLMRequestError(LLMError):
    """The provider rejected the request as invalid (a 4xx, or a validation error in a 5xx).

    Not retryable: the same request cannot succeed. ``.status`` is the HTTP status if known.
    """

    def __init__(self, message: str, *, model: str | None = None, status: int | None = None):
        self.status = status
        super().__init__(message, model=model)


class LLMOutputError(LLMError):
    """The model's output does not parse against the expected schema."""

    def __init__(self, message: str, *, model: str | None = None, output: str = "") -> None:
        self.output = output
        super().__init__(message, model=model)


class BackendError(MirageError):
    """The memory backend failed."""


class BackendUnavailableError(BackendError):
    retryable = True


class DatabaseUnavailableError(BackendError):
    """The decision log's database could not be reached (a restart, a failover, a full
    connection pool). Nothing was left written: a write's store items are undone when its log
    rows cannot be written. Retrying later can help; the driver's error is ``__cause__``."""

    retryable = True

    def __init__(self) -> None:
        super().__init__("the decision log's database is unavailable; retry later")


class EncoderBusyError(MirageError):
    """The sentence encoder did not finish a request's texts within its budget (it waited
    behind other requests' chunks, or is too large to encode in time). Nothing was written;
    retrying later, or sending less text, can help."""

    retryable = True

    def __init__(self, budget_s: float, encoded: int, total: int) -> None:
        super().__init__(
            f"the encoder did not finish this request's texts within {budget_s:g} s "
            f"({encoded} of {total} encoded); nothing was written, retry later or send less"
        )
        self.budget_s = budget_s
        self.encoded = encoded
        self.total = total


class ClosedError(MirageError):
    """A guarded memory was called after :meth:`close`: build a new one (nothing was done)."""

    def __init__(self) -> None:
        super().__init__("this guarded memory is closed: build a new one (nothing was done)")
