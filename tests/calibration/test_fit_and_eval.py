"""Fitting and evaluation on a few hand-written labelled claims (hashing embedder, no model)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from rich.console import Console
from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score

from mirage_guard.adapters.cli._guard import suite_chunks, suite_tables
from mirage_guard.calibration._data import Example, group_by_conversation, load_examples
from mirage_guard.calibration._eval import (
    ClaimRow,
    check_writable,
    claim_rows,
    confusion_matrix,
    decide_all,
    decided_by_rule,
    decision_ranking,
    evaluate,
    stored_as_fact,
    write_claim_rows,
)
from mirage_guard.calibration._fit import (
    OI_CLASSES,
    Objective,
    choose_threshold,
    cluster_bootstrap,
    fit_logistic,
    precision_recall_at,
)
from mirage_guard.calibration._jobs import featurize, fit_profile, summarize_scores
from mirage_guard.calibration._suite import (
    SuiteRow,
    reason_lines,
    render_markdown,
    suite_table,
)
from mirage_guard.guard import (
    Action,
    Candidate,
    Decision,
    Guard,
    Label,
    Provenance,
    ReasonCode,
    reason,
)
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import (
    FEATURE_NAMES,
    PROFILE_FEATURES,
    TOPIC_FEATURES,
    EvidenceLinker,
)
from mirage_guard.guard.scoring import ProfileMode, ProfileStore
from tests.calibration.factories import labelled_verdicts
from tests.fakes.embedder import HashingEmbedder

G, R, S, F = "GROUNDED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED"

CONVERSATIONS: dict[str, list[str]] = {
    "p1": [
        "I work night shifts as an ICU nurse in Dayton.",
        "My tabby cat Biscuit sleeps on my scrubs.",
    ],
    "p2": [
        "I write backend code for a small fintech startup in Berlin.",
        "I spent Saturday building a mechanical keyboard from a kit.",
    ],
    "p3": [
        "I teach high school chemistry in Leeds.",
        "I ran my first half marathon in October.",
    ],
    "p4": [
        "I drive long-haul trucks across the Midwest.",
        "My daughter just started college in Chicago.",
    ],
}
# (persona, text, label, index of the supporting turn or None)
CLAIMS: list[tuple[str, str, str, int | None]] = [
    ("p1", "Works night shifts as an ICU nurse in Dayton", G, 0),
    ("p1", "Has a tabby cat named Biscuit", G, 1),
    ("p1", "Night shifts in the ICU probably mess with sleep", R, 0),
    ("p1", "Caring and nurturing, like most nurses", S, None),
    ("p1", "Goes to church every Sunday with her mother", F, None),
    ("p2", "Writes backend code for a fintech startup in Berlin", G, 0),
    ("p2", "Built a mechanical keyboard from a kit on Saturday", G, 1),
    ("p2", "Owns a soldering iron for keyboard kits", R, 1),
    ("p2", "Introverted gamer who votes libertarian", S, None),
    ("p2", "Has two older sisters in Hamburg", F, None),
    ("p3", "Teaches high school chemistry in Leeds", G, 0),
    ("p3", "Ran a half marathon in October", G, 1),
    ("p3", "Probably trains by running several times a week", R, 1),
    ("p3", "Strict and old-fashioned, as teachers tend to be", S, None),
    ("p3", "Drives a red vintage Vespa scooter", F, None),
    ("p4", "Drives long-haul trucks across the Midwest", G, 0),
    ("p4", "Daughter started college in Chicago", G, 1),
    ("p4", "Spends long stretches away from home on the road", R, 0),
    ("p4", "Conservative voter who loves country music", S, None),
    ("p4", "Plays bass in a jazz trio on weekends", F, None),
]


def _write_claims(path: Path) -> Path:
    """The hand-written claims in the documented input format; persona p4 is the dev split."""
    lines = []
    for n, (pid, text, label, turn) in enumerate(CLAIMS):
        turns = [
            {"id": f"{pid}-t{i + 1}", "role": "user", "content": c}
            for i, c in enumerate(CONVERSATIONS[pid])
        ]
        lines.append(
            json.dumps(
                {
                    "claim_id": f"{pid}-c{n:02d}",
                    "persona_id": pid,
                    "text": text,
                    "label": label,
                    "source_turn_id": None if turn is None else f"{pid}-t{turn + 1}",
                    "split": "dev" if pid == "p4" else "train",
                    "turns": turns,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def claims_file(tmp_path: Path) -> Path:
    return _write_claims(tmp_path / "claims.jsonl")


@pytest.fixture(scope="module")
def linker() -> EvidenceLinker:
    return EvidenceLinker(HashingEmbedder())


def _fitted_guard(examples: list[Example], path: Path, linker: EvidenceLinker) -> Guard:
    """A guard whose evidence profile is fitted on ``examples`` themselves (all splits)."""
    profile = fit_profile(
        featurize(examples, linker),
        mode=ProfileMode.EVIDENCE,
        data_path=path,
        split="all",
        embedder=linker.embedder.name,
    )
    return Guard(linker=linker, evidence_profile=profile)


# ----------------------------------------------------------------- primitives


def test_fit_logistic_separates_a_separable_feature() -> None:
    rows = [{"x": float(v), "noise": float(v % 3)} for v in range(20)]
    y = [int(r["x"] >= 10) for r in rows]
    model = fit_logistic(rows, y, ["x", "noise"])
    p = model.predict_proba(model.matrix(rows))
    assert all(p[i] > 0.5 for i in range(10, 20))
    assert all(p[i] < 0.5 for i in range(10))
    assert model.coef[0] > abs(model.coef[1])


def test_fit_logistic_handles_constant_features_and_needs_both_classes() -> None:
    rows = [{"x": float(v), "const": 1.0} for v in range(10)]
    model = fit_logistic(rows, [int(v >= 5) for v in range(10)], ["x", "const"])
    assert model.scale[1] == 1.0  # no division by zero
    assert np.all(np.isfinite(model.predict_proba(model.matrix(rows))))
    with pytest.raises(InputError, match="all 10 claims are over-inference, none is not over-inf"):
        fit_logistic(rows, [1] * 10, ["x"], classes=OI_CLASSES)
    with pytest.raises(InputError, match="all 10 claims are class 0, none is class 1"):
        fit_logistic(rows, [0] * 10, ["x"])


@pytest.mark.parametrize("text", ["recall>=0.9", "precision >= 0.85", "recall>=1", "recall>=0"])
def test_objective_parses(text: str) -> None:
    obj = Objective.parse(text)
    assert obj.metric in {"recall", "precision"}
    assert Objective.parse(str(obj)) == obj


@pytest.mark.parametrize("text", ["recall>0.9", "f1>=0.5", "recall>=1.5", "precision>=", ""])
def test_bad_objective_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError, match="objective"):
        Objective.parse(text)


@pytest.mark.parametrize(
    ("text", "metric", "target"),
    [("max-f1", "f1", 1.0), ("max-kappa", "kappa", 1.0), ("target-precision=0.9", "precision", 0.9),
     ("target-recall=0.8", "recall", 0.8)],
)  # fmt: skip
def test_named_objectives_parse_and_round_trip(text: str, metric: str, target: float) -> None:
    obj = Objective.parse(text)
    assert (obj.metric, obj.target) == (metric, target)
    assert Objective.parse(str(obj)) == obj


def test_maximising_objectives_pick_the_best_threshold() -> None:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, size=200).astype(np.int64)
    p = np.clip(0.3 * y + rng.normal(0.35, 0.2, size=200), 0, 1)
    for metric, score in (("f1", f1_score), ("kappa", cohen_kappa_score)):
        t = choose_threshold(p, y, Objective(metric, 1.0))
        best = score(y, (p >= t).astype(int))
        for other in np.quantile(p, [0.1, 0.3, 0.5, 0.7, 0.9]):
            assert best >= score(y, (p >= other).astype(int)) - 1e-12


def test_choose_threshold_meets_the_objective() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=300).astype(np.int64)
    p = np.clip(0.3 * y + rng.normal(0.35, 0.2, size=300), 0, 1)
    for target in (0.7, 0.8, 0.95):
        t = choose_threshold(p, y, Objective("recall", target))
        assert precision_recall_at(p, y, t)[1] >= target
    for target in (0.6, 0.75):
        t = choose_threshold(p, y, Objective("precision", target))
        assert precision_recall_at(p, y, t)[0] >= target


# ----------------------------------------------------------------- data -> features -> profile


def test_featurize_links_every_claim_within_its_conversation(
    claims_file: Path, linker: EvidenceLinker
) -> None:
    examples = load_examples(claims_file)
    table = featurize(examples, linker)
    assert len(table.rows) == len(CLAIMS)
    assert all(set(r) == set(FEATURE_NAMES) for r in table.rows)
    for ex, turn in zip(table.examples, table.linked_turn, strict=True):
        assert turn is not None
        assert turn.startswith(ex.conversation_id + "-t")


def test_fit_profile_on_hand_written_claims(
    claims_file: Path, linker: EvidenceLinker, tmp_path: Path
) -> None:
    train = load_examples(claims_file, split="train")
    profile = fit_profile(
        featurize(train, linker),
        mode=ProfileMode.EVIDENCE,
        data_path=claims_file,
        split="train",
        embedder=linker.embedder.name,
    )
    assert profile.profile_id == "evidence-only"
    assert profile.fitted_on.n_examples == len(train) == 15
    assert profile.oi_model.features == list(PROFILE_FEATURES)
    # on its own training data, the restatements score lower than the fabrications
    assert profile.metrics["train_auroc"] > 0.8
    assert profile.metrics["train_recall"] >= 0.8
    # and it goes through the store and into a Guard
    store = ProfileStore(tmp_path / "profiles")
    store.save(profile)
    loaded = ProfileStore(tmp_path / "profiles").evidence_only()
    assert loaded == profile
    Guard(linker=linker, evidence_profile=loaded)


def test_a_profile_fitted_with_the_topic_features_still_scores(
    claims_file: Path, linker: EvidenceLinker
) -> None:
    # profiles fitted before the topic scores left PROFILE_FEATURES name them; the linker still
    # computes them, so such a profile reads them and decides as it did
    examples = load_examples(claims_file)
    table = featurize(examples, linker)
    old = fit_profile(
        table, mode=ProfileMode.EVIDENCE, data_path=claims_file, split="all",
        embedder=linker.embedder.name, feature_names=FEATURE_NAMES,
    )  # fmt: skip
    assert set(TOPIC_FEATURES) <= set(old.oi_model.features)
    p_old = old.oi_model.predict_proba(old.oi_model.matrix(table.rows))
    new = fit_profile(
        table, mode=ProfileMode.EVIDENCE, data_path=claims_file, split="all",
        embedder=linker.embedder.name,
    )  # fmt: skip
    p_new = new.oi_model.predict_proba(new.oi_model.matrix(table.rows))
    assert not np.allclose(p_old, p_new)
    # the guard scores with the features the profile names: the old one's own scores
    decisions = anyio.run(decide_all, Guard(linker=linker, evidence_profile=old), examples)
    scores = [decisions[e.claim.claim_id].score for e in examples]
    assert scores == pytest.approx(list(p_old), abs=1e-6)


def test_support_report_compares_the_features_a_profile_reads() -> None:
    from mirage_guard.calibration._support_compare import FEATURE_SETS

    assert all(not set(TOPIC_FEATURES) & set(f) for f in FEATURE_SETS.values())
    assert set(FEATURE_SETS["current+A+C"]) <= set(PROFILE_FEATURES)


def test_fit_audit_profile_needs_verdicts_and_names_its_key(
    claims_file: Path, linker: EvidenceLinker
) -> None:
    examples = load_examples(claims_file)
    verdicts = labelled_verdicts(examples)
    profile = fit_profile(
        featurize(examples, linker, verdicts),
        mode=ProfileMode.SELF_AUDIT_SEPARATE,
        data_path=claims_file,
        split="all",
        embedder=linker.embedder.name,
        writer_model="mock/writer-a",
        prompt_version="self_audit@abc123abc123",
    )
    assert profile.writer_model == "mock/writer-a"
    assert "audit_oi" in profile.oi_model.features
    assert profile.profile_id.startswith("mock__writer-a--self_audit_separate--")
    with pytest.raises(ValueError, match="writer model"):
        fit_profile(
            featurize(examples, linker, verdicts),
            mode=ProfileMode.SELF_AUDIT_SEPARATE,
            data_path=claims_file,
            split="all",
            embedder=linker.embedder.name,
        )


async def test_evaluate_reports_what_guard_eval_prints(
    claims_file: Path, linker: EvidenceLinker
) -> None:
    examples = load_examples(claims_file)
    guard = _fitted_guard(examples, claims_file, linker)
    decisions = await decide_all(guard, examples)
    assert set(decisions) == {e.claim.claim_id for e in examples}
    report = evaluate(examples, decisions, data=str(claims_file), n_boot=50)
    assert report.n == 20
    assert report.oi_share == pytest.approx(0.4)
    assert report.profile_id == "evidence-only"
    assert set(report.per_class) == {p.value for p in Provenance}
    assert report.per_class["stated"].support == 8
    assert report.per_class["generated"].support == 8
    assert report.source_turn_n == 12
    assert 0.0 <= report.source_turn_accuracy <= 1.0
    assert report.auroc > 0.8
    low, high = report.auroc_ci
    assert low <= high
    # the decisions' AUROC ranks the claims a word rule made generated first, then by the score
    y = [int(e.is_oi) for e in examples]
    ranked = decision_ranking([decisions[e.claim.claim_id] for e in examples])
    assert report.auroc_decisions == pytest.approx(roc_auc_score(y, ranked))
    low, high = report.auroc_decisions_ci
    assert low <= high
    # accuracy is recomputed from the decisions, not taken on trust
    gold = {e.claim.claim_id: Label(e.claim.label).provenance for e in examples}
    hits = sum(decisions[cid].provenance is prov for cid, prov in gold.items())
    assert report.provenance_accuracy == pytest.approx(hits / 20)


def _decision(provenance: Provenance, score: float | None, *codes: ReasonCode) -> Decision:
    linked = provenance is not Provenance.GENERATED
    return Decision(
        candidate=Candidate(text="Lives in Boston"),
        provenance=provenance,
        action=Action.STORE if provenance is Provenance.STATED else Action.QUARANTINE,
        source_turn_id="t1" if linked else None,
        similarity=0.5,
        evidence_span=None,
        score=score,
        threshold=0.5,
        profile_id="evidence-only",
        calibrated=True,
        reasons=[reason(c) for c in codes],
    )


def test_the_decisions_ranking_puts_what_a_rule_blocked_before_every_score() -> None:
    """A claim a later turn retracted scores 0.1 and is blocked: in the ranking of the guard's
    decisions it comes before a claim the score alone made generated (0.8), which comes before
    a stated one; a claim with no score to rank by (undecidable) counts as 1.0."""
    retracted = _decision(Provenance.GENERATED, 0.1, ReasonCode.RETRACTED)
    by_score = _decision(Provenance.GENERATED, 0.8, ReasonCode.OVER_INFERENCE_SCORE)
    stated = _decision(Provenance.STATED, 0.05, ReasonCode.STATED_SCORE)
    undecidable = _decision(Provenance.GENERATED, None, ReasonCode.SCORE_UNDECIDABLE)
    decisions = [retracted, by_score, stated, undecidable]
    assert [decided_by_rule(d) for d in decisions] == [True, False, False, True]
    assert decision_ranking(decisions).tolist() == pytest.approx([1.1, 0.8, 0.05, 2.0])
    # an over-inference the score missed but a rule caught is ranked first; the score alone
    # ranks it last
    y = [1, 0, 0, 1]
    assert roc_auc_score(y, decision_ranking(decisions)) == 1.0
    assert roc_auc_score(y, [d.score or 1.0 for d in decisions]) == 0.75


def test_cluster_bootstrap_reads_other_rankings_on_the_same_resamples() -> None:
    """Another ranking of the same rows gets its AUROC CI from the same resampled conversations:
    the same scores give the same interval, reversed ones its mirror."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 120)
    p = np.clip(0.3 * y + rng.random(120) * 0.7, 0, 1)
    clusters = [f"c{i // 4}" for i in range(120)]
    ci = cluster_bootstrap(p, y, clusters, 0.5, n_boot=200, also={"same": p, "flipped": 1 - p})
    assert ci["auroc_same"] == ci["auroc"]
    assert ci["auroc_flipped"] == pytest.approx([1 - ci["auroc"][1], 1 - ci["auroc"][0]])
    assert set(cluster_bootstrap(p, y, clusters, 0.5, n_boot=20)) == {
        "auroc",
        "precision",
        "recall",
    }


def test_summarize_scores_uses_the_profile_threshold(
    claims_file: Path, linker: EvidenceLinker
) -> None:
    examples = load_examples(claims_file)
    table = featurize(examples, linker)
    profile = fit_profile(
        table,
        mode=ProfileMode.EVIDENCE,
        data_path=claims_file,
        split="all",
        embedder=linker.embedder.name,
    )
    summary: dict[str, Any] = summarize_scores(profile, table, n_boot=30)
    assert summary["threshold"] == profile.oi_threshold
    assert summary["n"] == 20.0
    assert 0.0 <= summary["precision"] <= 1.0


async def test_figures_are_the_same_with_or_without_persona_ids_when_turn_ids_repeat(
    claims_file: Path, linker: EvidenceLinker, tmp_path: Path
) -> None:
    """Users' files reuse turn ids (t1, t2...) in every conversation: none may be merged."""

    def reuse_ids(row: dict[str, Any], *, keep_persona: bool) -> dict[str, Any]:
        pid = row["persona_id"]
        out = {**row, "turns": [{**t, "id": t["id"].removeprefix(f"{pid}-")} for t in row["turns"]]}
        if out["source_turn_id"]:
            out["source_turn_id"] = out["source_turn_id"].removeprefix(f"{pid}-")
        if not keep_persona:
            del out["persona_id"]
        return out

    rows = [json.loads(line) for line in claims_file.read_text().splitlines()]  # noqa: ASYNC240
    paths = []
    for keep in (True, False):
        path = tmp_path / f"reused-{keep}.jsonl"
        text = "".join(json.dumps(reuse_ids(r, keep_persona=keep)) + "\n" for r in rows)
        path.write_text(text)
        paths.append(path)
    examples = load_examples(paths[0])
    assert len(group_by_conversation(load_examples(paths[1]))) == len(CONVERSATIONS)
    guard = _fitted_guard(examples, paths[0], linker)
    reports = []
    for path in paths:
        ex = load_examples(path)
        reports.append(evaluate(ex, await decide_all(guard, ex), data="x", n_boot=50).model_dump())
    assert reports[0] == reports[1]


async def test_labels_written_as_the_guards_tags_give_the_same_figures(
    claims_file: Path, linker: EvidenceLinker, tmp_path: Path
) -> None:
    """A set labelled stated / inferred / generated (the guard's promise) scores as the same
    set in the four-way taxonomy; its per-claim rows keep the labels as written."""
    tag = {"GROUNDED": "stated", "INFERRED_REASONABLE": "Inferred",
           "INFERRED_STEREOTYPE": "generated", "FABRICATED": "GENERATED"}  # fmt: skip
    rows = [json.loads(line) for line in claims_file.read_text().splitlines()]  # noqa: ASYNC240
    tagged = tmp_path / "tagged.jsonl"
    tagged.write_text("".join(json.dumps({**r, "label": tag[r["label"]]}) + "\n" for r in rows))
    examples = load_examples(claims_file)
    guard = _fitted_guard(examples, claims_file, linker)
    reports, labels = [], []
    for path in (claims_file, tagged):
        ex = load_examples(path)
        decisions = await decide_all(guard, ex)
        reports.append(evaluate(ex, decisions, data="x", n_boot=50).model_dump())
        labels.append([r.label for r in claim_rows(ex, decisions, data="x")])
    assert reports[0] == reports[1]
    assert labels[0] == [r["label"] for r in rows]
    assert labels[1] == [tag[r["label"]] for r in rows]


async def test_claim_rows_say_what_the_guard_decided_about_each_claim(
    claims_file: Path, linker: EvidenceLinker, tmp_path: Path
) -> None:
    examples = load_examples(claims_file)
    decisions = await decide_all(_fitted_guard(examples, claims_file, linker), examples)
    report = evaluate(examples, decisions, data="mine", n_boot=50)
    rows = claim_rows(examples, decisions, data="mine")
    assert [r.claim_id for r in rows] == [e.claim.claim_id for e in examples]
    for e, r in zip(examples, rows, strict=True):
        d = decisions[e.claim.claim_id]
        assert (r.set, r.text, r.label) == ("mine", e.claim.text, e.claim.label.value)
        assert r.expected == Label(e.claim.label).provenance.value
        assert (r.provenance, r.source_turn_id, r.score) == (
            d.provenance.value,
            d.source_turn_id,
            d.score,
        )
        assert r.correct is (r.provenance == r.expected)
        if r.expected == "generated":
            assert r.source_turn_correct is None
            assert r.expected_turn_text is None
        else:
            assert r.source_turn_correct is (d.source_turn_id == e.claim.source_turn_id)
            turn = next(t for t in e.turns if t.id == e.claim.source_turn_id)
            assert r.expected_turn_text == turn.content
        assert r.reasons[0].code is ReasonCode.SCORED_WITH_PROFILE
    # the rows agree with the report's figures
    assert sum(r.correct for r in rows) == round(report.provenance_accuracy * report.n)
    linked = [r for r in rows if r.source_turn_correct is not None]
    assert len(linked) == report.source_turn_n
    assert sum(bool(r.source_turn_correct) for r in linked) == round(
        report.source_turn_accuracy * report.source_turn_n
    )
    # over-inference stored as stated facts, counted from the rows
    leaked = [r for r in rows if r.expected == "generated" and r.provenance == "stated"]
    assert report.oi_stored_as_fact == len(leaked)
    n_oi = sum(r.expected == "generated" for r in rows)
    assert report.oi_stored_as_fact_share == pytest.approx(len(leaked) / n_oi)
    n_stated = sum(r.provenance == "stated" for r in rows)
    assert report.stored_facts_oi_share == pytest.approx(len(leaked) / n_stated)
    # how often the decisions carrying each reason code match their label
    assert "scored_with_profile" not in report.by_reason
    assert report.by_reason
    for code, score in report.by_reason.items():
        carrying = [r for r in rows if code in {x.code for x in r.reasons}]
        assert score.n == len(carrying) > 0
        assert score.provenance_accuracy == pytest.approx(
            sum(r.correct for r in carrying) / len(carrying)
        )
    row = SuiteRow(
        set="mine", origin="project", variant="as-written", report=report,
        cue_auroc_oi=0.5, cue_auroc_inferred=0.5,
    )  # fmt: skip
    table = reason_lines([row])
    assert table[0].startswith("3-way accuracy of the decisions that carry each reason code")
    code, score = next(iter(report.by_reason.items()))
    assert any(
        line.startswith(f"| {code} ") and f"{score.provenance_accuracy:.2f} ({score.n})" in line
        for line in table
    )
    assert "\n".join(table) in render_markdown([row], command="x")
    cells = dict(suite_table([row]))
    share = f"{report.oi_stored_as_fact_share:.3f}"
    assert cells["over-inference stored as stated (share)"] == [f"{len(leaked)} ({share})"]
    _many_sets_print_whole(row)
    out = tmp_path / "deep" / "claims-out.jsonl"
    check_writable(out, "the per-claim rows")
    write_claim_rows(out, rows)
    back = [ClaimRow.model_validate_json(line) for line in out.read_text("utf-8").splitlines()]
    assert back == rows
    assert "reasons" in json.loads(out.read_text("utf-8").splitlines()[0])
    assert [p.name for p in out.parent.iterdir()] == ["claims-out.jsonl"]  # no partial file


def _many_sets_print_whole(row: SuiteRow) -> None:
    """`eval-suite` prints 30 sets as several tables that each fit the console, every set's
    name and AUROC cell whole (one table squeezed them into empty slivers)."""
    many = [row.model_copy(update={"set": f"held-out set {i:02d} (hedge-free)"}) for i in range(30)]
    for width in (80, 160):
        body = suite_table(many)
        columns = [[cells[i] for _, cells in body] for i in range(len(many))]
        chunks = suite_chunks([r.set for r in many], columns, width)
        assert [i for c in chunks for i in c] == list(range(30))
        assert 1 < len(chunks) <= (30 if width < 100 else 10)
        out = Console(width=width, file=io.StringIO(), record=True)
        for table in suite_tables(many, width):
            out.print(table)
        text = out.export_text()
        assert max(len(line) for line in text.splitlines()) <= width
        auroc = dict(suite_table([row]))["AUROC [95 % CI]"][0]
        assert text.count(auroc) >= 30  # whole, once a set at least
        for r in many:
            assert f"held-out set {r.set[13:15]}" in text


def test_stored_as_fact_counts_over_inference_the_guard_stores_as_stated() -> None:
    gold = ["generated", "generated", "generated", "stated", "inferred", "stated"]
    pred = ["stated", "inferred", "generated", "stated", "stated", "generated"]
    # one over-inference claim of three stored as stated, among three claims stored as stated
    assert stored_as_fact(confusion_matrix(gold, pred)) == (1, 3, 3)
    assert stored_as_fact(confusion_matrix(["stated"], ["inferred"])) == (0, 0, 0)


def test_a_per_claim_file_that_cannot_be_written_fails_before_any_scoring(
    tmp_path: Path,
) -> None:
    with pytest.raises(InputError, match="is a directory"):
        check_writable(tmp_path, "the per-claim rows")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot write"):
        check_writable(blocker / "rows.jsonl", "the per-claim rows")
    with pytest.raises(InputError, match="cannot write"):
        write_claim_rows(blocker / "rows.jsonl", [])
