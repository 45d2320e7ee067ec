"""Calibration: fit the per-model profiles that give a guard score its meaning, and evaluate the
guard on labelled claims.

What lives here: the labelled-claims loader, feature tables, threshold / logistic fitting
(scikit-learn), self-audit verdict jobs, and the evaluation behind ``mirage guard eval``. The
profiles themselves and their store belong to the core (:mod:`mirage_guard.guard.scoring`), so
the guard never imports this package.

May import: :mod:`mirage_guard.guard`, :mod:`mirage_guard.prompts`, numpy, scipy, scikit-learn.
Never: :mod:`mirage_guard.benchmark`, :mod:`mirage_guard.adapters`, a CLI or web framework.
"""

from mirage_guard.calibration._agreement import (
    AgreementReport,
    PairAgreement,
    SecondLabel,
    agreement,
    load_second_labels,
    run_agreement,
    second_labels_path,
)
from mirage_guard.calibration._audit_jobs import (
    collect_verdicts,
    load_verdicts,
    save_verdicts,
    verdict_turns,
    verdicts_mode,
)
from mirage_guard.calibration._begin import convert_begin, write_begin
from mirage_guard.calibration._claim_diff import (
    ClaimDiff,
    GroupDiff,
    MovedClaim,
    diff_runs,
    load_claim_rows,
    parse_groups,
    run_diff,
)
from mirage_guard.calibration._cues import CueBaseline
from mirage_guard.calibration._data import (
    LABEL_ALIASES,
    Example,
    LabelledClaim,
    TextVariant,
    TrainHalf,
    chat_lines,
    conversation_key,
    group_by_conversation,
    label_key,
    load_examples,
    packaged,
    read_jsonl,
    strip_hedges,
    train_half,
    typographic,
)
from mirage_guard.calibration._eval import (
    ClaimRow,
    EvalReport,
    check_not_an_input,
    check_writable,
    claim_rows,
    decide_all,
    evaluate,
    write_claim_rows,
    write_whole,
)
from mirage_guard.calibration._evaluate import build_eval_guard, run_eval
from mirage_guard.calibration._fit import (
    Objective,
    choose_threshold,
    cluster_bootstrap,
    precision_recall_at,
)
from mirage_guard.calibration._jobs import (
    FeatureTable,
    featurize,
    fit_profile,
    is_never_stated,
    oi_scores,
    summarize_scores,
)
from mirage_guard.calibration._judged_fit import (
    CrossValidated,
    JudgedClaims,
    ModelFigures,
    PathFigures,
    ScoredClaims,
    TransferRow,
    cross_validate,
    fit_judged_profile,
    held_out_metrics,
    persona_folds,
    score_claims,
    transfer_table,
)
from mirage_guard.calibration._stale_pairs import (
    Triple,
    load_triples,
    stale_pairs_folder,
    triple_claims,
    write_triples_set,
)
from mirage_guard.calibration._stated_floor import (
    DEFAULT_FLOORS,
    FloorReport,
    FloorRow,
    choose_floor,
    floor_row,
    run_stated_floor,
)
from mirage_guard.calibration._suite import (
    EvalSet,
    SuiteRow,
    default_sets,
    render_markdown,
    run_suite,
    suite_table,
)
from mirage_guard.calibration._support_authored import (
    AuthoredPair,
    PairReport,
    PairSide,
    authored_side,
    load_authored,
    pair_report,
)
from mirage_guard.calibration._support_compare import (
    quick_sets,
    render_support_report,
    run_support_report,
)
from mirage_guard.calibration._support_labelled import labelled_set_pairs, write_pairs
from mirage_guard.calibration._support_pairs import SupportPair, build_pairs
from mirage_guard.calibration._support_train import TrainConfig, TrainResult, train_support
from mirage_guard.guard.evidence import resolve_precision

__all__ = [
    "DEFAULT_FLOORS",
    "LABEL_ALIASES",
    "AgreementReport",
    "AuthoredPair",
    "ClaimDiff",
    "ClaimRow",
    "CrossValidated",
    "CueBaseline",
    "EvalReport",
    "EvalSet",
    "Example",
    "FeatureTable",
    "FloorReport",
    "FloorRow",
    "GroupDiff",
    "JudgedClaims",
    "LabelledClaim",
    "ModelFigures",
    "MovedClaim",
    "Objective",
    "PairAgreement",
    "PairReport",
    "PairSide",
    "PathFigures",
    "ScoredClaims",
    "SecondLabel",
    "SuiteRow",
    "SupportPair",
    "TextVariant",
    "TrainConfig",
    "TrainHalf",
    "TrainResult",
    "TransferRow",
    "Triple",
    "agreement",
    "authored_side",
    "build_eval_guard",
    "build_pairs",
    "chat_lines",
    "check_not_an_input",
    "check_writable",
    "choose_floor",
    "choose_threshold",
    "claim_rows",
    "cluster_bootstrap",
    "collect_verdicts",
    "conversation_key",
    "convert_begin",
    "cross_validate",
    "decide_all",
    "default_sets",
    "diff_runs",
    "evaluate",
    "featurize",
    "fit_judged_profile",
    "fit_profile",
    "floor_row",
    "group_by_conversation",
    "held_out_metrics",
    "is_never_stated",
    "label_key",
    "labelled_set_pairs",
    "load_authored",
    "load_claim_rows",
    "load_examples",
    "load_second_labels",
    "load_triples",
    "load_verdicts",
    "oi_scores",
    "packaged",
    "pair_report",
    "parse_groups",
    "persona_folds",
    "precision_recall_at",
    "quick_sets",
    "read_jsonl",
    "render_markdown",
    "render_support_report",
    "resolve_precision",
    "run_agreement",
    "run_diff",
    "run_eval",
    "run_stated_floor",
    "run_suite",
    "run_support_report",
    "save_verdicts",
    "score_claims",
    "second_labels_path",
    "stale_pairs_folder",
    "strip_hedges",
    "suite_table",
    "summarize_scores",
    "train_half",
    "train_support",
    "transfer_table",
    "triple_claims",
    "typographic",
    "verdict_turns",
    "verdicts_mode",
    "write_begin",
    "write_claim_rows",
    "write_pairs",
    "write_triples_set",
    "write_whole",
]
