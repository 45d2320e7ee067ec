"""The persona-collapse diagnostic on MirageBench's harness (``mirage bench collapse``).

Does a model take the stance an advice situation needs? A re-implementation of the protocol of
"Diagnosing and Repairing Persona Collapse in LLM Advice" (arXiv 2607.08326) on 140 hand-written
situations (``benchmark/data/collapse``): three inference-time conditions (Instruct, Plan-First,
Persona Oracle), an independent judge scoring hedonic valence H and agentic depth E (strict
JSON), the five personas from (H, E), N_eff and Jensen–Shannon divergence to a reference
distribution per context; and, linking the two studies, the same situations asked with a user
memory that is clean, polluted by over-inferred attributes, or stored through the guard.

It reuses MirageBench's runner pieces (client stack with named concurrency limits, the
content-addressed call cache, the run directory and its accounting, the mock provider, judge
validation metrics). Figures are pure functions in :mod:`mirage_guard.benchmark.collapse.metrics`.
"""

from mirage_guard.benchmark.collapse import metrics
from mirage_guard.benchmark.collapse._analysis import CollapseAnalysis, analyse
from mirage_guard.benchmark.collapse._config import CollapseConfig, Condition, MemoryArm
from mirage_guard.benchmark.collapse._mapping import PersonaThresholds, persona_of
from mirage_guard.benchmark.collapse._offline import collapse_offline_answer, collapse_offline_llm
from mirage_guard.benchmark.collapse._records import AnswerRecord, MemoryRecord, ScoreRecord
from mirage_guard.benchmark.collapse._report import write_collapse_report
from mirage_guard.benchmark.collapse._rundir import CollapseManifest, CollapseRunDirectory
from mirage_guard.benchmark.collapse._runner import CollapseRun
from mirage_guard.benchmark.collapse._schemas import (
    ScoreErrorCode,
    StanceOutputError,
    StancePlan,
    StanceScore,
    parse_strict,
)
from mirage_guard.benchmark.collapse._situations import (
    PERSONAS,
    AdviserPersona,
    ReferenceSet,
    Situation,
    Stance,
    load_reference,
    load_situations,
    select_situations,
)
from mirage_guard.benchmark.collapse._validation import (
    BlindAnswer,
    StanceAgreement,
    agreement_as_json,
    compare_ratings,
    draw_blind_sample,
    judge_ratings,
    read_ratings,
    write_sample,
)

__all__ = [
    "PERSONAS",
    "AdviserPersona",
    "AnswerRecord",
    "BlindAnswer",
    "CollapseAnalysis",
    "CollapseConfig",
    "CollapseManifest",
    "CollapseRun",
    "CollapseRunDirectory",
    "Condition",
    "MemoryArm",
    "MemoryRecord",
    "PersonaThresholds",
    "ReferenceSet",
    "ScoreErrorCode",
    "ScoreRecord",
    "Situation",
    "Stance",
    "StanceAgreement",
    "StanceOutputError",
    "StancePlan",
    "StanceScore",
    "agreement_as_json",
    "analyse",
    "collapse_offline_answer",
    "collapse_offline_llm",
    "compare_ratings",
    "draw_blind_sample",
    "judge_ratings",
    "load_reference",
    "load_situations",
    "metrics",
    "parse_strict",
    "persona_of",
    "read_ratings",
    "select_situations",
    "write_collapse_report",
    "write_sample",
]
