"""mirage-guard's core: provenance tagging for LLM memory writes.

Every attribute about a user is tagged **stated**, **inferred** (with the ``source_turn_id`` of
its evidence) or **generated** (no evidence), and stored, stored as a hypothesis, quarantined or
blocked accordingly.

What lives here: the domain model (turns, candidates, decisions), typed errors
(:mod:`.errors`), settings (:mod:`.settings`), the language-model seam (:mod:`.llm`), the
evidence linker (:mod:`.evidence`), self-audit, candidate extraction (:mod:`.extraction`),
calibration profiles and their store (:mod:`.scoring`), the policy, the pure decision rule
(:func:`decide`, whose :class:`Reason` codes are rendered to words only by
:func:`render_reason`), and the :class:`Guard` pipeline, which reports through a
:class:`GuardObserver`.

May import: :mod:`mirage_guard.prompts`, pydantic, numpy, anyio, httpx (litellm lazily, inside
:mod:`.llm`). Never: calibration, benchmark, adapters, a web framework, an ORM, a store SDK, a
CLI framework or a metrics client (``lint-imports`` checks it).
"""

from mirage_guard.guard._audit import AuditResponse, SelfAuditor, parse_audit
from mirage_guard.guard._decision import decide
from mirage_guard.guard._domain import (
    LABEL_TO_PROVENANCE,
    Action,
    AuditSource,
    AuditVerdict,
    Candidate,
    Decision,
    DecisionSummary,
    EvidenceLink,
    Label,
    MemoryStatus,
    Provenance,
    QuoteCheck,
    Role,
    Turn,
    has_text,
    well_formed,
)
from mirage_guard.guard._limits import RequestLimits, check_limits, check_turns
from mirage_guard.guard._markdown import markdown_table
from mirage_guard.guard._observer import STAGES, GuardObserver, NullObserver
from mirage_guard.guard._pipeline import (
    ActiveProfiles,
    Guard,
    LinkerThread,
    profile_embedders,
    settings_limits,
    settings_policy,
)
from mirage_guard.guard._policy import Policy
from mirage_guard.guard._quotes import check_quotes, find_quote, quote_links
from mirage_guard.guard._reasons import (
    Reason,
    ReasonCode,
    ReasonParam,
    as_reasons,
    describe_reason_code,
    reason,
    render_reason,
)
from mirage_guard.guard.settings import AuditFailure, AuditMode, GuardSettings

__version__ = "0.1.0"

__all__ = [
    "LABEL_TO_PROVENANCE",
    "STAGES",
    "Action",
    "ActiveProfiles",
    "AuditFailure",
    "AuditMode",
    "AuditResponse",
    "AuditSource",
    "AuditVerdict",
    "Candidate",
    "Decision",
    "DecisionSummary",
    "EvidenceLink",
    "Guard",
    "GuardObserver",
    "GuardSettings",
    "Label",
    "LinkerThread",
    "MemoryStatus",
    "NullObserver",
    "Policy",
    "Provenance",
    "QuoteCheck",
    "Reason",
    "ReasonCode",
    "ReasonParam",
    "RequestLimits",
    "Role",
    "SelfAuditor",
    "Turn",
    "__version__",
    "as_reasons",
    "check_limits",
    "check_quotes",
    "check_turns",
    "decide",
    "describe_reason_code",
    "find_quote",
    "has_text",
    "markdown_table",
    "parse_audit",
    "profile_embedders",
    "quote_links",
    "reason",
    "render_reason",
    "settings_limits",
    "settings_policy",
    "well_formed",
]
