"""`mirage calibrate train-support` is deterministic and learns from the train split only."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mirage_guard.calibration import (
    AuthoredPair,
    TrainConfig,
    build_pairs,
    load_authored,
    load_examples,
    packaged,
    train_support,
)
from mirage_guard.calibration._support_pairs import (
    change_detail,
    glue_detail,
    nearest_turns,
    negate,
    swap_word,
)
from mirage_guard.calibration._support_train import frozen, spread_layers
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import (
    CrossSupportModel,
    SupportClass,
    content_stems,
    keep_layers,
    n_layers,
)
from tests.fakes.embedder import HashingEmbedder


def test_pairs_come_from_the_train_split_only() -> None:
    dev = load_examples(packaged("claims.jsonl"), split="dev")[:5]
    with pytest.raises(ValueError, match="train split"):
        build_pairs(dev)


def test_pairs_have_every_class_and_both_twins() -> None:
    train = load_examples(packaged("claims.jsonl"), split="train")[:120]
    pairs = build_pairs(train)
    assert {p.label for p in pairs} == set(SupportClass)
    origins = {p.origin for p in pairs}
    assert {"glued", "negated", "question", "compound", "other_turn"} <= origins
    assert build_pairs(train) == pairs  # fixed order, seeded


@pytest.mark.parametrize(
    ("claim", "negated"),
    [
        ("Is a night-shift nurse.", "Is not a night-shift nurse."),
        ("Enjoys bouldering on weekends.", "Does not enjoy bouldering on weekends."),
        ("You're based in Dubai.", "You're not based in Dubai."),
    ],
)
def test_negation_rules(claim: str, negated: str) -> None:
    assert negate(claim) == negated


def test_a_changed_number_and_a_glued_detail_are_not_in_the_evidence() -> None:
    import random

    rng = random.Random(0)
    premise = "I train jiu-jitsu 4 nights a week."
    changed = change_detail("Trains jiu-jitsu 4 nights a week.", premise, rng)
    assert changed is not None
    assert "4" not in changed
    glued = glue_detail("Trains jiu-jitsu.", premise, rng)
    assert glued.startswith("Trains jiu-jitsu ")
    assert glued != "Trains jiu-jitsu."


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_training_is_deterministic_on_a_tiny_subset(tmp_path: Path, precision: str) -> None:
    path = packaged("claims.jsonl")
    train = load_examples(path, split="train")[:40]
    cfg = TrainConfig(epochs=1, batch_size=8, precision=precision)
    a = train_support(train, tmp_path / "a", data_path=path, cfg=cfg, limit=24, log=False)
    b = train_support(train, tmp_path / "b", data_path=path, cfg=cfg, limit=24, log=False)
    assert a.sha256 == b.sha256
    other = replace(cfg, seed=cfg.seed + 1)
    c = train_support(train, tmp_path / "c", data_path=path, cfg=other, limit=24, log=False)
    assert c.sha256 != a.sha256
    assert CrossSupportModel(tmp_path / "a").sha256 == a.sha256
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["precision"] == precision


@pytest.mark.slow
def test_a_distilled_student_keeps_spread_layers_and_loads_with_them(tmp_path: Path) -> None:
    path = packaged("claims.jsonl")
    train = load_examples(path, split="train")[:40]
    teacher = CrossSupportModel()
    cfg = TrainConfig(epochs=1, batch_size=8, layers=2, teacher=str(teacher.path))
    a = train_support(train, tmp_path / "a", data_path=path, cfg=cfg, limit=24, log=False)
    b = train_support(train, tmp_path / "b", data_path=path, cfg=cfg, limit=24, log=False)
    assert a.sha256 == b.sha256  # deterministic, the teacher's probabilities included
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["architecture"]["layers"] == 2
    assert manifest["teacher_sha256"] == teacher.sha256
    student = CrossSupportModel(tmp_path / "a")
    assert n_layers(student.module) == 2
    # it starts from the teacher's first and last layer (one epoch of 3 steps moves them little)
    t_layers, s_layers = teacher.module.encoder.encoder.layer, student.module.encoder.encoder.layer
    for s_i, t_i in ((0, 0), (1, 5)):
        s_w = s_layers[s_i].attention.self.query.weight.detach()
        t_w = t_layers[t_i].attention.self.query.weight.detach()
        assert float((s_w - t_w).abs().mean()) < 0.1 * float(t_w.abs().mean())
    probs = student.predict_text(["I live in Lisbon."], ["Lives in Lisbon."])
    assert probs.shape == (1, len(SupportClass))
    assert abs(float(probs.sum()) - 1.0) < 1e-5


@pytest.mark.parametrize(
    ("name", "layers", "expected"),
    [("encoder.embeddings.position_embeddings.weight", 1, True),
     ("encoder.embeddings.LayerNorm.bias", 0, False),
     ("encoder.encoder.layer.2.attention.self.query.weight", 3, True),
     ("encoder.encoder.layer.3.attention.self.query.weight", 3, False),
     ("encoder.encoder.layer.11.output.dense.weight", 2, False),
     ("classifier.weight", 6, False)],
)  # fmt: skip
def test_frozen_names_the_embeddings_and_the_lower_layers(
    name: str, layers: int, expected: bool
) -> None:
    assert frozen(name, layers) is expected


@pytest.mark.slow
def test_frozen_layers_keep_minilm_weights_and_the_rest_learn(tmp_path: Path) -> None:
    import torch

    from mirage_guard.guard.evidence import build_cross

    path = packaged("claims.jsonl")
    train = load_examples(path, split="train")[:40]
    cfg = TrainConfig(epochs=1, batch_size=8, frozen_layers=2)
    train_support(train, tmp_path / "a", data_path=path, cfg=cfg, limit=24, log=False)
    base = build_cross()[0].state_dict()
    trained = CrossSupportModel(tmp_path / "a").module.state_dict()
    # the shipped weights are fp16: compare with MiniLM's weights rounded the same way
    same = {k for k, v in trained.items() if torch.equal(v, base[k].to(torch.float16).to(v.dtype))}
    layer = "encoder.encoder.layer."
    assert "encoder.embeddings.position_embeddings.weight" in same
    assert f"{layer}1.output.dense.weight" in same
    assert f"{layer}2.output.dense.weight" not in same
    assert "classifier.weight" not in same


@pytest.mark.parametrize(
    ("n", "of", "expected"), [(6, 6, [0, 1, 2, 3, 4, 5]), (3, 6, [0, 2, 5]), (2, 6, [0, 5]),
                              (1, 6, [5])]
)  # fmt: skip
def test_student_layers_are_spread_with_the_first_and_last(
    n: int, of: int, expected: list[int]
) -> None:
    assert spread_layers(n, of) == expected


def test_a_student_cannot_have_more_layers_than_its_teacher() -> None:
    with pytest.raises(InputError, match=r"layers must be 1\.\.6"):
        spread_layers(7, 6)
    with pytest.raises(InputError, match="not layers of a 6-layer encoder"):
        keep_layers(CrossSupportModel().module, [6])


def test_precision_auto_uses_bf16_only_on_a_cpu_with_bf16_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    from mirage_guard.guard.evidence import resolve_precision

    assert resolve_precision("fp32") == "fp32"
    assert resolve_precision("bf16") == "bf16"
    for amx, avx512_bf16, expected in [
        (True, False, "bf16"), (False, True, "bf16"), (False, False, "fp32")
    ]:  # fmt: skip
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda v=amx: v)
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda v=avx512_bf16: v)
        assert resolve_precision("auto") == expected
    with pytest.raises(InputError, match="precision must be one of auto, bf16, fp32"):
        resolve_precision("fp16")


def test_a_correction_in_the_same_turn_contradicts_the_old_claim() -> None:
    from mirage_guard.calibration._support_pairs import _corrected

    premise = "I train jiu-jitsu 4 nights a week."
    pairs = _corrected(
        premise, "Trains jiu-jitsu 4 nights a week.", "Trains jiu-jitsu 6 nights a week."
    )
    by_origin = {p.origin: p for p in pairs}
    old, new = by_origin["corrected_old"], by_origin["corrected_new"]
    assert old.premise == new.premise
    assert old.premise.startswith("I train jiu-jitsu 4 nights a week. ")
    assert "6 nights" in old.premise.split(". ", 1)[1]
    assert old.label is SupportClass.CONTRADICTED
    assert new.label is SupportClass.ENTAILED
    # more than one changed word: no pair (the swap could not be mirrored in the evidence)
    assert _corrected(premise, "Trains 4 nights.", "Trains 6 days.") == []


def test_the_evidence_said_about_someone_else_supports_nothing() -> None:
    from mirage_guard.calibration._support_pairs import someone_else

    moved = someone_else("I'm a nurse on a cardiac ward.", random.Random(1))
    assert moved is not None
    assert moved.startswith("My ")
    assert moved.endswith(" is a nurse on a cardiac ward.")
    assert someone_else("Spent Saturday building a keyboard.", random.Random(1)) is None


@pytest.mark.parametrize(
    ("premise", "echoed"),
    [
        ("I went climbing last weekend.", "Went climbing last weekend"),
        ("so I work nights at the ER, it's rough", "Works nights at the ER"),
        ("I'm a nurse on nights.", "Is a nurse on nights"),
        ("I have two cats and a dog.", "Has two cats"),
        ("my wife and I moved. I live in Denver now", "Lives in Denver now"),
        ("I'm so behind on my dissertation.", "Is so behind on their dissertation"),
    ],
)
def test_an_echo_restates_the_first_first_person_clause(premise: str, echoed: str) -> None:
    from mirage_guard.calibration._support_pairs import echo

    out = echo(premise, random.Random(0))
    assert out is not None
    assert out.removeprefix("User ").removeprefix("The user ").lower() == echoed.lower()


@pytest.mark.parametrize(
    "premise",
    [
        "I don't drive.",  # a negation: the rule would have to carry it
        "I'm doing a masters at UCL - wait, KCL",  # a correction takes the first clause back
        "I only started reading music last year",  # an adverb, not a verb
        "are you married?",  # no first-person clause
    ],
)
def test_no_echo_where_the_rule_cannot_be_sure(premise: str) -> None:
    from mirage_guard.calibration._support_pairs import echo

    assert echo(premise, random.Random(0)) is None


def test_echoes_enter_training_as_restatements() -> None:
    train = load_examples(packaged("claims.jsonl"), split="train")[:200]
    echoes = [p for p in build_pairs(train) if p.origin == "echo"]
    assert echoes
    assert {p.label for p in echoes} == {SupportClass.ENTAILED}


def test_train_support_refuses_an_unknown_precision_before_any_work(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app

    out = tmp_path / "model"
    result = CliRunner().invoke(
        app, ["calibrate", "train-support", "--precision", "fp16", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert "precision must be one of auto, bf16, fp32" in " ".join(result.output.split())
    assert not out.exists()


def _authored() -> list[AuthoredPair]:
    rows = [
        ("I adopted a rescue greyhound called Biscuit.", "Has a dog", "ENTAILED"),
        ("I adopted a rescue greyhound called Biscuit.", "Owns a cat", "UNSUPPORTED"),
        ("We moved to Porto in March for my new job.", "Lives in Porto", "ENTAILED"),
        ("We moved to Porto in March for my new job.", "Started a job recently", "INFERABLE"),
        ("My sister and I run a bakery stall on Saturdays.", "Has a sister", "ENTAILED"),
        ("Mum and I took over her bakery stall in the market.", "Runs a bakery stall", "ENTAILED"),
    ]
    return [
        AuthoredPair(pair_id=f"t-{i}", premise=p, claim=c, label=lab, case="plain")
        for i, (p, c, lab) in enumerate(rows)
    ]


def test_other_messages_pair_each_message_with_unrelated_claims_of_others() -> None:
    authored = _authored()
    said = {a.claim: a.premise for a in authored if a.label in ("ENTAILED", "INFERABLE")}
    plain = build_pairs([], authored=authored)
    made = build_pairs([], authored=authored, other_messages=2)
    assert made[: len(plain)] == plain  # off by default: the shipped recipe is unchanged
    extra = made[len(plain) :]
    assert extra
    assert {p.origin for p in extra} == {"authored:other_message"}
    assert {p.label for p in extra} == {SupportClass.UNSUPPORTED}
    for premise in {a.premise for a in authored}:
        mine = [p for p in extra if p.premise == premise]
        assert 1 <= len(mine) <= 2
        for p in mine:
            assert said[p.claim] != premise  # a claim of another message
            assert not content_stems(p.claim) & content_stems(premise)  # sharing no content word
    assert build_pairs([], authored=authored, other_messages=2) == made  # seeded
    # with room for every other claim: all of them, except those that share a content word
    every = build_pairs([], authored=authored, other_messages=10)[len(plain) :]
    sister = "My sister and I run a bakery stall on Saturdays."
    assert {p.claim for p in every if p.premise == sister} == {
        "Has a dog", "Lives in Porto", "Started a job recently"
    }  # fmt: skip
    assert {p.claim for p in every if p.premise.startswith("I adopted")} == {
        "Has a sister", "Lives in Porto", "Started a job recently", "Runs a bakery stall"
    }  # fmt: skip


def _spun_claims(tmp_path: Path) -> Path:
    turns = [
        {"id": "t1", "role": "user", "content": "I'm a police officer in Lyon."},
        {"id": "a1", "role": "assistant", "content": "Police officer in Lyon, watercolours too?"},
        {"id": "t2", "role": "user", "content": "How long have you been a police officer in Lyon?"},
        {"id": "t3", "role": "user", "content": "I paint watercolours on Mondays."},
    ]
    rows = [
        ("c1", "Is a police officer in Lyon", "GROUNDED", "t1"),
        ("c2", "Exhibits her watercolours at a cafe", "FABRICATED", None),
        ("c3", "A police officer is bound to be tough", "INFERRED_STEREOTYPE", None),
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text(
        "".join(
            json.dumps({"claim_id": cid, "text": text, "label": label, "source_turn_id": src,
                        "split": "train", "turns": turns}) + "\n"
            for cid, text, label, src in rows
        ),
        encoding="utf-8",
    )  # fmt: skip
    return path


def test_nearest_turns_are_the_user_turns_the_guard_would_read_an_over_inference_against(
    tmp_path: Path,
) -> None:
    examples = load_examples(_spun_claims(tmp_path))
    near = nearest_turns(examples, HashingEmbedder())
    assert set(near) == {"c2", "c3"}  # over-inferred claims only
    # nearest first; never the assistant's turn, never a question to the other party
    assert near["c2"] == ["I paint watercolours on Mondays.", "I'm a police officer in Lyon."]
    assert near["c3"] == ["I'm a police officer in Lyon.", "I paint watercolours on Mondays."]
    assert nearest_turns(examples, HashingEmbedder(), k=1)["c3"] == near["c3"][:1]


def test_nearest_negatives_change_only_the_over_inferred_claims_pairs() -> None:
    train = load_examples(packaged("claims.jsonl"), split="train")[:120]
    near = nearest_turns(train, HashingEmbedder())
    plain, hard = build_pairs(train), build_pairs(train, nearest=near)
    assert len(plain) == len(hard)
    changed = [(a, b) for a, b in zip(plain, hard, strict=True) if a != b]
    assert changed
    over = {"FABRICATED", "INFERRED_STEREOTYPE"}
    assert all(a.origin in over and b.origin == a.origin for a, b in changed)
    assert {b.label for _, b in changed} == {SupportClass.UNSUPPORTED}
    by_claim = {e.claim.claim_id: e for e in train}
    premises = {p for turns in near.values() for p in turns}
    assert all(b.premise in premises for _, b in changed)
    assert any(by_claim[c].claim.label.value in over for c in near)


def test_train_support_takes_extra_pair_folders_and_other_messages(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app

    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "part_z.jsonl").write_text(
        "".join(p.model_dump_json() + "\n" for p in _authored()), encoding="utf-8"
    )
    out = tmp_path / "model"
    result = CliRunner().invoke(
        app,
        ["calibrate", "train-support", "--out", str(out), "--epochs", "1", "--limit", "24",
         "--extra-pairs", str(extra), "--other-messages", "1", "--subject-forms",
         "--seed", "14", "--frozen-layers", "2", "--nearest-negatives",
         "--name-subjects", "0.5", "--authored-repeat", "2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["other_messages"] == 1
    assert manifest["config"]["subject_forms"] is True
    assert manifest["config"]["name_subjects"] == 0.5
    assert manifest["config"]["seed"] == 14
    assert manifest["config"]["frozen_layers"] == 2
    assert manifest["config"]["nearest_negatives"] is True
    assert manifest["config"]["authored_repeat"] == 2
    packaged_pairs = load_authored()
    n = manifest["data"]["authored_pairs"]
    assert n["train"] + n["test"] == len(packaged_pairs) + len(_authored())


@pytest.mark.slow
def test_the_command_trains_a_distilled_student(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app
    from mirage_guard.guard.evidence import cross_model_dir

    out = tmp_path / "student"
    result = CliRunner().invoke(
        app,
        ["calibrate", "train-support", "--out", str(out), "--epochs", "1", "--limit", "24",
         "--layers", "3", "--teacher", str(cross_model_dir()), "--distill-weight", "0.7"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["architecture"]["layers"] == 3
    assert manifest["config"]["distill_weight"] == 0.7
    assert manifest["teacher_sha256"] == CrossSupportModel().sha256
    too_many = CliRunner().invoke(
        app, ["calibrate", "train-support", "--out", str(out), "--layers", "7"]
    )
    assert too_many.exit_code == 2
    assert "--layers" in too_many.output


VERBS = frozenset(["play", "work", "live", "finished", "watch", "study"])


@pytest.mark.parametrize(
    ("claim", "form", "expected"),
    [
        ("Plays volleyball on Sundays", "User ", "User plays volleyball on Sundays"),
        ("Plays volleyball on Sundays", "The user ", "The user plays volleyball on Sundays"),
        ("Plays volleyball on Sundays", "You ", "You play volleyball on Sundays"),
        ("Plays volleyball on Sundays", "", "Plays volleyball on Sundays"),
        ("Is a nurse", "You ", "You are a nurse"),
        ("Has two kids", "You ", "You have two kids"),
        ("Doesn't eat pork", "You ", "You don't eat pork"),
        ("Probably works nights", "You ", "You probably work nights"),
        ("Probably works nights", "User ", "User probably works nights"),
        ("Watches anime late", "You ", "You watch anime late"),
        ("Studies law in Leeds", "You ", "You study law in Leeds"),
        ("Finished the course", "You ", "You finished the course"),
        ("Can swim", "You ", "You can swim"),
        # a subject already, or a first word that does not read as a verb: kept as written
        ("User plays volleyball", "You ", None),
        ("Mondays are busy for them", "You ", None),
        ("Ahmed is their brother", "User ", None),
        ("Kunle's son graduated", "You ", None),
        ("Parents live in Porto", "You ", None),
        ("Family lives in Porto", "You ", None),
        ("Italy is home now", "User ", None),
        ("Usually works nights", "You ", "You usually work nights"),
    ],
)
def test_a_bare_memory_entry_takes_a_subject(claim: str, form: str, expected: str | None) -> None:
    from mirage_guard.calibration._support_pairs import with_subject

    assert with_subject(claim, form, VERBS) == expected


def test_the_verbs_a_first_word_must_come_from_are_those_said_after_i() -> None:
    from mirage_guard.calibration._support_pairs import first_person_verbs

    texts = ["I play in a league and I really love it.", "Mondays I work late", "i guess so"]
    assert first_person_verbs(texts) == {"play", "love", "work"}


def test_subject_forms_are_balanced_across_classes_and_seeded() -> None:
    from collections import Counter

    from mirage_guard.calibration._support_pairs import SupportPair, balance_subjects

    premise = "I play volleyball and I work nights and I live in Porto."
    claims = ["Plays volleyball", "Works nights", "Lives in Porto", "User plays volleyball"]
    pairs = [
        SupportPair(premise, c, label, "test") for label in SupportClass for c in claims * 60
    ]  # fmt: skip
    made = balance_subjects(pairs, seed=13)
    assert made == balance_subjects(pairs, seed=13)
    assert made != balance_subjects(pairs, seed=14)
    assert [(p.premise, p.label, p.origin) for p in made] == [
        (p.premise, p.label, p.origin) for p in pairs
    ]
    for label in SupportClass:
        mine = [p.claim for p, q in zip(made, pairs, strict=True) if q.label is label]
        first = Counter(
            "You" if c.startswith("You ") else "The user" if c.startswith("The user ")
            else "User" if c.startswith("User ") else "bare"
            for c in mine
        )  # fmt: skip
        # 180 bare claims per class drawn four ways, and 60 that have "User" already
        assert min(first["bare"], first["You"], first["The user"]) > 20
        assert first["User"] > 60
    # a claim with a subject already is never rewritten
    assert all(
        p.claim == "User plays volleyball"
        for p, q in zip(made, pairs, strict=True) if q.claim == "User plays volleyball"
    )  # fmt: skip
    # off by default: the recipe of the shipped weights is unchanged
    assert TrainConfig().subject_forms is False


def test_a_share_of_bare_entries_are_called_by_a_name_and_keep_their_class() -> None:
    from mirage_guard.calibration._support_pairs import (
        USER_NAMES,
        SupportPair,
        name_subjects,
    )

    premise = "I play volleyball and I work nights and I live in Porto."
    claims = ["Plays volleyball", "Works nights", "Probably lives in Porto"]
    pairs = [SupportPair(premise, c, label, "test") for label in SupportClass for c in claims * 50]
    made = name_subjects(pairs, 0.3, seed=13)
    assert made == name_subjects(pairs, 0.3, seed=13)
    assert made != name_subjects(pairs, 0.3, seed=14)
    assert [(p.premise, p.label, p.origin) for p in made] == [
        (p.premise, p.label, p.origin) for p in pairs
    ]
    for label in SupportClass:
        mine = [p.claim for p, q in zip(made, pairs, strict=True) if q.label is label]
        named = [c for c in mine if c.split()[0] in USER_NAMES]
        assert 20 < len(named) < 70  # about 0.3 of 150 in every class
        # the rest of the entry is as written, its first letter lowered
        assert all(c.split(" ", 1)[1] in {"plays volleyball", "works nights",
                                          "probably lives in Porto"} for c in named)  # fmt: skip
    assert name_subjects(pairs, 0.0, seed=13) == pairs


def test_a_name_is_not_drawn_where_it_could_be_someone_else() -> None:
    from mirage_guard.calibration._support_pairs import (
        USER_NAMES,
        SupportPair,
        name_subjects,
    )

    kept = [
        # the premise says the name drawn (here every one): someone the user talks about
        SupportPair(f"My friends {', '.join(USER_NAMES)} work nights.", "Works nights",
                    SupportClass.UNSUPPORTED, "t"),
        # the claim has a subject, opens with a comparison, or calls the user he or she
        SupportPair("I work nights.", "User works nights", SupportClass.ENTAILED, "t"),
        SupportPair("I like trucks, I drive them.", "Like most truckers, votes early",
                    SupportClass.UNSUPPORTED, "t"),
        SupportPair("I work nights.", "Works nights, as his father did", SupportClass.INFERABLE,
                    "t"),
    ]  # fmt: skip
    assert name_subjects(kept * 3, 1.0, seed=13) == kept * 3


def test_the_shipped_weights_were_made_by_the_default_recipe() -> None:
    """`mirage calibrate train-support` with no option is the command that made them; an option
    added after they were made (absent from their manifest) is off by default."""
    from mirage_guard.guard.evidence import cross_model_dir

    manifest = json.loads((cross_model_dir() / "manifest.json").read_text(encoding="utf-8"))
    made, default = manifest["config"], TrainConfig().__dict__
    assert {k: default[k] for k in made} == made
    later = {k: v for k, v in default.items() if k not in made}
    assert later == {
        "other_messages": 0, "subject_forms": False, "name_subjects": 0.0,
        "nearest_negatives": False, "swapped_words": False,
        "precision": "fp32", "layers": 6, "frozen_layers": 0, "teacher": "",
        "distill_weight": 0.5, "temperature": 2.0,  # read only with a teacher
    }  # fmt: skip


@pytest.mark.parametrize(
    ("claim", "premise", "swapped"),
    [
        ("Studies nursing at Cardiff", "I'm in my second year of nursing at Cardiff", True),
        ("Has a cat named Miso", "my cat Miso hates the carrier", True),
        ("Sister lives in Leeds", "my sister lives in Leeds", True),
        # the premise does not say the claim's word of the class: nothing to swap
        ("Has a cat named Miso", "Miso hates the carrier", False),
        ("Works in Leeds", "I work in Leeds", False),
    ],
)  # fmt: skip
def test_a_word_of_a_closed_class_is_swapped_for_another_the_premise_does_not_say(
    claim: str, premise: str, swapped: bool
) -> None:
    from mirage_guard.guard.evidence import same_class_values

    out = swap_word(claim, premise, random.Random(3))
    if not swapped:
        assert out is None
        return
    assert out is not None
    assert out != claim
    (old,) = set(claim.split()) - set(out.split())
    (new,) = set(out.split()) - set(claim.split())
    assert new.lower() in same_class_values(old)
    assert new.lower() not in premise.lower().split()
    assert new[:1].isupper() == old[:1].isupper()


def test_swapped_words_add_contradicted_pairs_and_change_no_other() -> None:
    train = load_examples(packaged("claims.jsonl"), split="train")[:200]
    authored = load_authored()[:300]
    plain = build_pairs(train, authored=authored)
    more = build_pairs(train, authored=authored, swapped_words=True)
    added = [p for p in more if p.origin.endswith("swapped_word")]
    assert added
    assert {p.label for p in added} == {SupportClass.CONTRADICTED}
    assert [p for p in more if not p.origin.endswith("swapped_word")] == plain
    assert build_pairs(train, authored=authored, swapped_words=True) == more  # seeded


class _CountingTeacher:
    """A teacher whose probabilities depend on the pair's text alone; it records what it reads."""

    def __init__(self) -> None:
        self.read: list[tuple[str, str]] = []

    def predict_text(self, premises: list[str], claims: list[str]) -> np.ndarray:
        self.read += list(zip(premises, claims, strict=True))
        pairs = zip(premises, claims, strict=True)
        rows = [[1.0 + len(p) % 3, 1.0 + len(c) % 5, 1.0, 2.0] for p, c in pairs]
        probs = np.array(rows, dtype=np.float32)
        return probs / probs.sum(axis=1, keepdims=True)


def test_the_teacher_reads_each_distinct_pair_once_shortest_first() -> None:
    """The soft targets are the teacher's reading of every pair, in the pairs' order, though each
    repeated pair is read once and the pairs are read by length (B2's teacher pass: 8 min ->
    1.5)."""
    from mirage_guard.calibration._support_pairs import SupportPair
    from mirage_guard.calibration._support_train import _soft_targets

    texts = [
        ("I work nights at the depot.", "Works nights"),
        ("I live in Leeds.", "Lives in Leeds"),
        ("My sister is a nurse and lives in Hull.", "Sister is a nurse"),
    ]
    pairs = [SupportPair(p, c, SupportClass.ENTAILED, "t") for p, c in texts]
    pairs = [pairs[0], pairs[1], pairs[0], pairs[2], pairs[1]]
    lengths = [len(q.premise) + len(q.claim) for q in pairs]
    teacher = _CountingTeacher()
    soft = _soft_targets(teacher, pairs, lengths, 2.0)  # type: ignore[arg-type]
    assert teacher.read == sorted(set(texts), key=lambda t: len(t[0]) + len(t[1]))
    one_by_one = np.concatenate([_CountingTeacher().predict_text([q.premise], [q.claim])
                                 for q in pairs])  # fmt: skip
    expected = one_by_one.astype(np.float64) ** 0.5
    expected /= expected.sum(axis=1, keepdims=True)
    assert soft.numpy() == pytest.approx(expected, abs=1e-6)
