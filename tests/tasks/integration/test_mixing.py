"""`genprobe integration mix`: generated datasets pooled into one training set."""

import json

from genprobe.studies.brittleness.training import trained_on
from genprobe.tasks.integration.datasets import SPLITS, read_dataset, split_of
from genprobe.under_test.registry import ModelSpec

BWD = [f"sub Y' mul INT+ {c} x\tmul INT+ {c} pow x INT+ 2" for c in range(1, 10)]
FWD = [f"sub Y' cos mul INT+ {c} x\tsin mul INT+ {c} x" for c in range(1, 10)]


def write_generated(folder, name, lines, max_ops, fractions=(0.3, 0.3)):
    """A dataset as `generate` writes it: NAME.train/.valid/.test and NAME.meta.json."""
    folder.mkdir(exist_ok=True)
    for split in SPLITS:
        chosen = [ln for ln in lines if split_of(ln.split("\t")[0], *fractions) == split]
        (folder / f"{name}.{split}").write_text("".join(f"2|{ln}\n" for ln in chosen))
    meta = {"method": name, "config": {"max_ops": max_ops}}
    (folder / f"{name}.meta.json").write_text(json.dumps(meta))
    return folder / name


def test_parts_are_pooled_counts_summed_split_again_by_input_and_named(cli, tmp_path):
    bwd = write_generated(tmp_path / "data", "bwd", BWD, max_ops=6)
    fwd = tmp_path / "data" / "fwd.jsonl"  # another format, sharing one pair with bwd
    fwd.write_text("".join(json.dumps(dict(zip(["input", "output"], ln.split("\t"), strict=True)))
                           + "\n" for ln in [*FWD, BWD[0]]))  # fmt: skip
    out = tmp_path / "mix.txt"
    code, _, err = cli(
        "integration", "mix", "--part", str(bwd), "--part", str(fwd), "--out", str(out),
        "--valid-fraction", "0.2", "--test-fraction", "0.2",
    )  # fmt: skip
    assert code == 0, err
    rows = {split: read_dataset(out.with_name(f"mix.txt.{split}")) for split in SPLITS}
    pooled = [row for split in SPLITS for row in rows[split]]
    assert sorted(f"{r.input}\t{r.output}" for r in pooled) == sorted(BWD + FWD)
    for split in SPLITS:
        assert all(split_of(row.input, 0.2, 0.2) == split for row in rows[split])
    counts = {row.input: row.count for row in pooled}
    assert counts[BWD[0].split("\t")[0]] == 3 and counts[BWD[1].split("\t")[0]] == 2
    meta = json.loads(out.with_name("mix.txt.meta.json").read_text())
    assert [(p["data"], p["rows"]) for p in meta["parts"]] == [(str(bwd), 9), (str(fwd), 10)]
    assert meta["parts"][0]["meta"]["config"]["max_ops"] == 6 and meta["parts"][1]["meta"] is None
    assert "max_ops" not in meta["config"]  # the JSONL part records none
    assert "wrote 18 pairs" in err  # the console is stderr


def test_the_brittleness_study_reads_the_largest_max_ops_of_the_parts(cli, tmp_path):
    bwd = write_generated(tmp_path / "data", "bwd", BWD, max_ops=6)
    fwd = write_generated(tmp_path / "data", "fwd", FWD, max_ops=4)
    out = tmp_path / "mix.txt"
    code, _, err = cli("integration", "mix", "--part", str(bwd), "--part", str(fwd),
                       "--out", str(out), "--test-fraction", "0.2")  # fmt: skip
    assert code == 0, err
    training = trained_on(ModelSpec.read("sympy"), data=str(out.with_name("mix.txt.train")))
    assert training.max_ops == 6 and "mix.txt.meta.json" in training.sources["max_ops"]


def test_a_missing_part_or_a_pair_without_output_is_one_line_and_writes_nothing(cli, tmp_path):
    bwd = write_generated(tmp_path / "data", "bwd", BWD, max_ops=6)
    out = tmp_path / "mix.txt"
    code, _, err = cli("integration", "mix", "--part", str(bwd), "--part",
                       str(tmp_path / "nope"), "--out", str(out))  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "nope" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"input": "sub Y' x"}) + "\n")
    code, _, err = cli("integration", "mix", "--part", str(bwd), "--part", str(bad),
                       "--out", str(out))  # fmt: skip
    assert code == 2 and f"{bad}:1" in err and "output" in err
    assert list(tmp_path.glob("mix.txt*")) == []
