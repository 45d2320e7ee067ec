"""mirage-guard: provenance tagging for LLM memory writes.

Every attribute about a user is tagged **stated**, **inferred** (with the ``source_turn_id`` of
its evidence) or **generated** (no evidence), and stored, stored as a hypothesis, quarantined or
blocked accordingly.
"""

from typing import TYPE_CHECKING, Any

from mirage_guard.guard._audit import AuditResponse, SelfAuditor, parse_audit
from mirage_guard.guard._domain import (
    LABEL_TO_PROVENANCE,
    Action,
    AuditVerdict,
    Candidate,
    Decision,
    EvidenceLink,
    Label,
    MemoryStatus,
    Provenance,
    Role,
    Turn,
)
from mirage_guard.guard._policy import Policy
from mirage_guard.guard.settings import AuditFailure, AuditMode, GuardSettings

if TYPE_CHECKING:
    from mirage_guard.guard._pipeline import Guard

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The pipeline imports `calibration`, which imports the domain model from here: load lazily.
    if name == "Guard":
        from mirage_guard.guard._pipeline import Guard

        return Guard
    raise AttributeError(f"module 'guard' has no attribute {name!r}")


__all__ = [
    "LABEL_TO_PROVENANCE",
    "Action",
    "AuditFailure",
    "AuditMode",
    "AuditResponse",
    "AuditVerdict",
    "Candidate",
    "Decision",
    "EvidenceLink",
    "Guard",
    "GuardSettings",
    "Label",
    "MemoryStatus",
    "Policy",
    "Provenance",
    "Role",
    "SelfAuditor",
    "Turn",
    "__version__",
    "parse_audit",
]
