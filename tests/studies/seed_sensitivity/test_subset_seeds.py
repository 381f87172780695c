"""Subset seeds (`--subsets`): each member trains on its own random share of the training
split, which the run records, and decodes the whole training split besides the suites; without
them a config and its hash are what they were; a share outside (0, 1), or one that cannot fill
a batch, is refused in one line before anything is written."""

import itertools
import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
from helpers import damage, levenshtein

from genprobe.errors import ConfigError, DamagedFileError, RunDirError
from genprobe.studies.seed_sensitivity import SweepConfig, report, run_sweep
from genprobe.studies.seed_sensitivity.memorization import memorization_tables
from genprobe.studies.seed_sensitivity.results import read_predictions, read_subsets
from genprobe.studies.tables import read_tables
from genprobe.training.config import TrainConfig
from genprobe.training.trainer import member_subset


def test_the_subsets_are_in_the_config_identity_only_when_on():
    off = SweepConfig(seeds=(0,))
    assert not {"subsets", "subset_fraction"} & set(off.identity()["train"])
    on = replace(off, train=TrainConfig(subsets=True))
    train = on.identity()["train"]
    assert (train["subsets"], train["subset_fraction"]) == (True, 0.7)
    assert {k: v for k, v in train.items() if "subset" not in k} == off.identity()["train"]
    half = replace(off, train=TrainConfig(subsets=True, subset_fraction=0.5))
    assert half.identity() != on.identity()
    assert SweepConfig.from_identity(half.identity()) == half
    assert on.predicted() == (*off.predicted(), "train")


@pytest.mark.parametrize("fraction", [0.0, 1.0, 1.5, float("nan")])
def test_a_fraction_outside_zero_and_one_is_refused(fraction):
    with pytest.raises(ConfigError, match="subset_fraction must be in"):
        TrainConfig(subsets=True, subset_fraction=fraction)


def test_a_fraction_without_subsets_is_refused():
    with pytest.raises(ConfigError, match=r"unless subsets are on \(--subsets\)"):
        TrainConfig(subset_fraction=0.5)


def refused(cli, out, *argv):
    code, _, err = cli("sweep", "--task", "addition", *argv, "--out", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert not out.exists()
    return err


def test_bad_fractions_are_refused_in_one_line_before_anything_is_written(cli, tmp_path):
    err = refused(cli, tmp_path / "r", "--subsets", "--subset-fraction", "1.5")
    assert "--subset-fraction must be in (0, 1)" in err
    too_few = ("--train-size", "100", "--batch-size", "64", "--subset-fraction", "0.5")
    err = refused(cli, tmp_path / "r", "--subsets", *too_few)
    assert "share of the 100 training examples (50 at 0.5) fills a batch of 64" in err


@pytest.fixture(scope="module")
def subset_run(tiny_sweep, tmp_path_factory):
    """Three members, each on 140 of the 200 training examples: 3 steps of 64 an epoch."""
    subsets = TrainConfig(max_epochs=1, subsets=True)
    config = tiny_sweep((0, 1, 2), train=subsets, seeds_per_shard=2)
    return run_sweep(config, tmp_path_factory.mktemp("subsets") / "run")


def test_each_member_trains_on_its_subset_which_the_run_records_and_decodes_all(
    cli, tmp_path, tiny_sweep, subset_run
):
    run = tmp_path / "run"
    shutil.copytree(subset_run, run)
    seeds, trained = read_subsets(run)
    assert list(seeds) == [0, 1, 2] and trained.shape == (3, 200)
    assert list(trained.sum(axis=1)) == [140] * 3
    for seed, row in zip(seeds, trained, strict=True):
        assert np.array_equal(np.flatnonzero(row), member_subset(int(seed), 200, 140))
    assert len({row.tobytes() for row in trained}) == 3
    predictions = read_predictions(run)
    train = predictions[predictions["suite"] == "train"]
    assert len(train) == 3 * 200 and set(train["seed"]) == {0, 1, 2}
    assert sorted(set(predictions["suite"]) - {"train"}) == sorted(SweepConfig((0,)).task.suites())
    report.write_report(run)  # the training split reported as one more suite
    damage(run / "subsets" / "seeds=2-2.parquet", "flipped")
    with pytest.raises(DamagedFileError, match=r"seeds=2-2\.parquet"):
        read_subsets(run)
    whole = run_sweep(tiny_sweep((0,)), tmp_path / "whole")
    for read in (read_subsets, memorization_tables):
        with pytest.raises(RunDirError, match="has no subsets"):
            read(whole)
    code, _, err = cli(
        "export", str(whole), "--table", "memorization", "--out", str(tmp_path / "t")
    )
    assert code == 2 and err.count("\n") == 1 and "--table must be one of this run's" in err, err
    assert not (tmp_path / "t").exists()
    code, _, err = cli("export", str(subset_run), "--table", "memorization", "--table", "copies",
                       "--out", str(tmp_path / "t"))  # fmt: skip
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["copies.csv", "memorization.csv"]
    assert "train" not in set(read_predictions(whole)["suite"])


def test_memorization_and_consistency_are_read_from_the_members_answers(subset_run):
    _, trained = read_subsets(subset_run)
    judged = read_predictions(subset_run)
    tables = memorization_tables(subset_run, min_members=1)
    exported = read_tables(subset_run)  # export's tables too
    assert exported["memorization"].columns.tolist() == tables["memorization"].columns.tolist()
    assert len(exported["consistency"]) == len(tables["consistency"])
    memorized, consistent = tables["memorization"], tables["consistency"]
    train = judged[judged["suite"] == "train"].sort_values(["seed", "index"])
    targets = [json.loads(line)["output"] for line in (subset_run / "data" / "train.jsonl").open()]
    assert memorized["target"].tolist() == targets and len(memorized) == 200
    assert memorized["input"].tolist() == train["input"].tolist()[:200]
    agrees = (train["output"].to_numpy() == np.tile(targets, 3)).reshape(3, 200)
    right = (train["outcome"] == "correct").to_numpy().reshape(3, 200)
    for i in (0, 57, 199):
        inside = trained[:, i]
        assert memorized.loc[i, "trained_members"] == inside.sum()
        assert memorized.loc[i, "trained_right"] == agrees[inside, i].sum()
        assert memorized.loc[i, "rule_untrained_right"] == right[~inside, i].sum()
    # every training example is trained on by some member and not by another, or undetermined
    mixed = trained.any(axis=0) & ~trained.all(axis=0)
    assert memorized["determined"].tolist() == mixed.tolist()
    assert set(consistent["suite"]) == set(judged["suite"])
    held_out = consistent[consistent["suite"] != "train"]
    assert (held_out["members"] == 3).all()  # no member trained on a suite's examples
    by_rule = judged[judged["suite"] != "train"].assign(right=lambda t: t["outcome"] == "correct")
    expected = by_rule.groupby(["suite", "index"])["right"].mean()
    got = held_out.set_index(["suite", "index"])["consistency"]
    assert got.to_numpy() == pytest.approx(expected.loc[got.index].to_numpy())
    assert not memorization_tables(subset_run)["memorization"]["determined"].any()  # 3 < 5
    influence = tables["influence"]
    assert len(influence) == len(held_out)
    for row in influence.sample(10, random_state=0).itertuples():
        gaps = [levenshtein(row.input.split(), p["input"].split()) for p in pairs_of(subset_run)]
        assert row.input_distance == min(gaps) and row.nearest == int(np.argmin(gaps))
        rows = judged[(judged["suite"] == row.suite) & (judged["index"] == row.index)]
        right = (rows.sort_values("seed")["outcome"] == "correct").to_numpy()
        inside = trained[:, row.nearest]
        if inside.all() or not inside.any():  # a group without members: no estimate
            assert np.isnan(row.influence) and not row.determined
        else:
            assert row.influence == pytest.approx(right[inside].mean() - right[~inside].mean())
            assert row.influence_low <= row.influence <= row.influence_high
    copies = tables["copies"]
    wrong = judged[(judged["suite"] != "train") & (judged["outcome"] != "correct")]
    assert len(copies) == len(wrong) > 0
    pairs = pairs_of(subset_run)
    for row in copies.sample(20, random_state=0).itertuples():
        member = trained[row.seed]  # seeds 0, 1, 2: member k is seed k
        assert member[row.nearest]
        nearest = min(levenshtein(row.input.split(), p["input"].split()) for p, m in
                      zip(pairs, member, strict=True) if m)  # fmt: skip
        assert row.input_distance == nearest
        target = pairs[row.nearest]["output"]
        assert row.output_distance == levenshtein(row.output.split(), target.split())
        assert row.copied == (row.output.split() == target.split())


def test_the_report_shows_what_was_memorized(subset_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(subset_run, run)
    markdown = report.write_report(run)[0].read_text()
    section = markdown[markdown.index("## What each member memorized, per example") :]
    assert "Each of the 3 members trained on its own random 70 % of the 200 training" in section
    assert "None determined: fewer than 5 members in a group everywhere." in section
    assert "### Copying the nearest training example" in section
    assert "### Unseen local structures" in section  # the rewriting task's symbol pairs
    for suite in SweepConfig((0,)).task.suites():
        assert f"| {suite} |" in section
    assert (run / "figures" / "memorization.png").stat().st_size > 1000


def pairs_of(run):
    return [json.loads(line) for line in (run / "data" / "train.jsonl").open()]


def test_failure_is_told_apart_by_the_structures_a_members_subset_never_held(subset_run):
    """The rewriting task's structures are adjacent symbol pairs: the table's counts are those
    of sets of pairs, per member, over the examples it did not train on for the training split."""
    seeds, trained = read_subsets(subset_run)
    judged = read_predictions(subset_run)
    table = memorization_tables(subset_run)["structures"]
    assert (
        set(table["suite"]) == set(judged["suite"]) and len(table) == 3 * table["suite"].nunique()
    )
    pairs = [set(zip(p["input"].split(), p["input"].split()[1:], strict=False))
             for p in pairs_of(subset_run)]  # fmt: skip
    for row in table.itertuples():
        member = list(seeds).index(row.seed)
        seen = set().union(*(pairs[i] for i in np.flatnonzero(trained[member])))
        answers = judged[(judged["suite"] == row.suite) & (judged["seed"] == row.seed)]
        answers = answers.sort_values("index")
        if row.suite == "train":
            answers = answers[~trained[member][answers["index"].to_numpy()]]
        words = [text.split() for text in answers["input"]]
        unseen = np.array([bool(set(itertools.pairwise(w)) - seen) for w in words])
        failed = (answers["outcome"] != "correct").to_numpy()
        assert (row.examples, row.with_unseen) == (len(answers), unseen.sum())
        if unseen.any():
            assert row.failure_with == pytest.approx(failed[unseen].mean())
        if (~unseen).any():
            assert row.failure_without == pytest.approx(failed[~unseen].mean())


def test_the_nearest_training_example_is_by_the_tasks_own_distance_where_it_has_one(
    subset_run, monkeypatch
):
    from genprobe.tasks.rewriting.task import RewritingTask

    def length_gap(a, b, **_):
        return abs(len(a) - len(b)) + 0.5

    monkeypatch.setattr(RewritingTask, "input_distance", lambda self: length_gap)
    tables = memorization_tables(subset_run)
    influence, pairs = tables["influence"], pairs_of(subset_run)
    for row in influence.sample(5, random_state=0).itertuples():
        gaps = [length_gap(row.input.split(), p["input"].split()) for p in pairs]
        assert row.input_distance == min(gaps) and row.nearest == int(np.argmin(gaps))
    assert (tables["copies"]["input_distance"] % 1 == 0.5).all()


def test_consistency_stands_beside_the_tasks_named_input_features(subset_run, tmp_path):
    consistent = memorization_tables(subset_run)["consistency"]
    assert {"feature:distinct", "feature:longest run"} <= set(consistent.columns)
    assert not any(c.startswith("feature:count") for c in consistent.columns)
    for row in consistent.sample(10, random_state=0).itertuples():
        words = row.input.split()
        assert consistent.loc[row.Index, "feature:distinct"] == len(set(words))
        longest = max(len(list(g)) for _, g in itertools.groupby(words))
        assert consistent.loc[row.Index, "feature:longest run"] == longest
    run = tmp_path / "run"
    shutil.copytree(subset_run, run)
    assert "### Consistency against input features" in report.write_report(run)[0].read_text()
