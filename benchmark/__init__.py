"""MirageBench: how much do models over-infer about their users, with and without the guard.

Stages Probe, Task, Self-audit, Judge and Accum over 150 personas x 6 tasks, for any litellm
model string (``hosted_vllm/...`` included; ``mock/...`` is the offline mock). A run lives in a
resumable directory (manifest + append-only JSONL records + call cache); ``analyse`` and
``write_report`` turn it into figures. The metrics are pure functions in
:mod:`mirage_guard.benchmark.metrics`.

Commands (``mirage bench run|report|judge-sample|judge-agreement``, ``mirage perf harness``) live
in :mod:`mirage_guard.adapters.cli`; this package has no CLI framework, so importing
:mod:`mirage_guard.benchmark.metrics` loads no typer.

May import: :mod:`mirage_guard.guard`, :mod:`mirage_guard.prompts`, numpy, scipy, rich (progress
bars), matplotlib and jinja2 (the ``bench`` extra, lazily). Never: :mod:`mirage_guard.calibration`,
:mod:`mirage_guard.adapters`.
"""

from mirage_guard.benchmark import metrics
from mirage_guard.benchmark._analysis import RunAnalysis, analyse
from mirage_guard.benchmark._cache import CACHE_KEY_EXCLUDE, CachedLLM, DiskCache, prompt_scope
from mirage_guard.benchmark._capabilities import CapabilityAwareLLM, ParamsSent, resolve_params
from mirage_guard.benchmark._config import GuardArm, RunConfig, RuntimeOptions, Stage
from mirage_guard.benchmark._guard_arm import ClaimTagger, training_personas
from mirage_guard.benchmark._judge_validation import (
    AgreementReport,
    BlindItem,
    agreement_json,
    compare,
    draw_sample,
    judge_labels,
    read_labels,
    write_jsonl,
)
from mirage_guard.benchmark._limits import ConcurrencyLimits, LimitedLLM
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._offline import is_offline, offline_answer, offline_llm
from mirage_guard.benchmark._perf import (
    CachedRerunFigures,
    ConcurrencyFigures,
    measure_cached_rerun,
    measure_concurrency,
    measure_event_loop,
)
from mirage_guard.benchmark._persona_drafting import draft_persona
from mirage_guard.benchmark._progress import RichProgress
from mirage_guard.benchmark._records import (
    AccumRoundRecord,
    GuardTagRecord,
    JudgeRecord,
    JudgeTarget,
    ProbeRecord,
    Record,
    RetentionPolicy,
    SelfAuditRecord,
    TaskRecord,
)
from mirage_guard.benchmark._report import ReportFiles, write_report
from mirage_guard.benchmark._rundir import RunDirectory, RunManifest
from mirage_guard.benchmark._runner import (
    BenchmarkRun,
    ProviderFactory,
    RunSummary,
    litellm_provider,
)
from mirage_guard.benchmark._schemas import Accuracy, ClaimUnits
from mirage_guard.benchmark._self_audit_pairs import (
    AlignedClaim,
    AlignmentCounts,
    SelfAuditAlignment,
    align_self_audit,
    run_models,
)
from mirage_guard.benchmark._tasks import Task, parse_tasks
from mirage_guard.benchmark.personas import (
    Persona,
    PersonaGroup,
    RevealedFact,
    load_personas,
    select_personas,
)

__all__ = [
    "CACHE_KEY_EXCLUDE",
    "AccumRoundRecord",
    "Accuracy",
    "AgreementReport",
    "AlignedClaim",
    "AlignmentCounts",
    "BenchmarkRun",
    "BlindItem",
    "CachedLLM",
    "CachedRerunFigures",
    "CapabilityAwareLLM",
    "ClaimTagger",
    "ClaimUnits",
    "ConcurrencyFigures",
    "ConcurrencyLimits",
    "DiskCache",
    "GuardArm",
    "GuardTagRecord",
    "JudgeRecord",
    "JudgeTarget",
    "LimitedLLM",
    "ParamsSent",
    "Persona",
    "PersonaGroup",
    "ProbeRecord",
    "ProviderFactory",
    "Record",
    "ReportFiles",
    "RetentionPolicy",
    "RevealedFact",
    "RichProgress",
    "RunAnalysis",
    "RunConfig",
    "RunDirectory",
    "RunManifest",
    "RunSummary",
    "RuntimeOptions",
    "SelfAuditAlignment",
    "SelfAuditRecord",
    "SemanticMatcher",
    "Stage",
    "Task",
    "TaskRecord",
    "agreement_json",
    "align_self_audit",
    "analyse",
    "compare",
    "draft_persona",
    "draw_sample",
    "is_offline",
    "judge_labels",
    "litellm_provider",
    "load_personas",
    "measure_cached_rerun",
    "measure_concurrency",
    "measure_event_loop",
    "metrics",
    "offline_answer",
    "offline_llm",
    "parse_tasks",
    "prompt_scope",
    "read_labels",
    "resolve_params",
    "run_models",
    "select_personas",
    "training_personas",
    "write_jsonl",
    "write_report",
]
