"""MirageBench: how much do models over-infer about their users, with and without the guard.

Stages Probe, Task, Self-audit, Judge and Accum over 150 personas x 6 tasks, for any litellm
model string (``hosted_vllm/...`` included; ``mock/...`` is the offline mock). A run lives in a
resumable directory (manifest + append-only JSONL records + call cache); ``analyse`` and
``write_report`` turn it into figures. The metrics are pure functions in
:mod:`mirage_guard.benchmark.metrics`.

CLI: ``mirage bench run|report|judge-sample|judge-agreement`` and ``mirage perf harness``.
"""

from mirage_guard.benchmark import metrics
from mirage_guard.benchmark._analysis import RunAnalysis, analyse
from mirage_guard.benchmark._cache import CACHE_KEY_EXCLUDE, CachedLLM, DiskCache, prompt_scope
from mirage_guard.benchmark._cli import bench_app
from mirage_guard.benchmark._config import GuardArm, RunConfig, RuntimeOptions, Stage
from mirage_guard.benchmark._guard_arm import ClaimTagger
from mirage_guard.benchmark._judge_validation import (
    AgreementReport,
    BlindItem,
    compare,
    draw_sample,
)
from mirage_guard.benchmark._limits import ConcurrencyLimits, LimitedLLM
from mirage_guard.benchmark._offline import offline_answer, offline_llm
from mirage_guard.benchmark._perf import perf_harness
from mirage_guard.benchmark._persona_drafting import draft_persona
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
from mirage_guard.benchmark._runner import BenchmarkRun, RunSummary
from mirage_guard.benchmark._schemas import Accuracy
from mirage_guard.benchmark._tasks import Task
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
    "BenchmarkRun",
    "BlindItem",
    "CachedLLM",
    "ClaimTagger",
    "ConcurrencyLimits",
    "DiskCache",
    "GuardArm",
    "GuardTagRecord",
    "JudgeRecord",
    "JudgeTarget",
    "LimitedLLM",
    "Persona",
    "PersonaGroup",
    "ProbeRecord",
    "Record",
    "ReportFiles",
    "RetentionPolicy",
    "RevealedFact",
    "RunAnalysis",
    "RunConfig",
    "RunDirectory",
    "RunManifest",
    "RunSummary",
    "RuntimeOptions",
    "SelfAuditRecord",
    "Stage",
    "Task",
    "TaskRecord",
    "analyse",
    "bench_app",
    "compare",
    "draft_persona",
    "draw_sample",
    "load_personas",
    "metrics",
    "offline_answer",
    "offline_llm",
    "perf_harness",
    "prompt_scope",
    "select_personas",
    "write_report",
]
