"""End-to-end: the `genprobe rewriting` and `genprobe report` commands on tiny sweeps."""

import io
import json
import zipfile

import pandas as pd
import pytest
import torch
from helpers import rerecord

from genprobe.analysis.judged import COLUMNS
from genprobe.cli import main
from genprobe.runs.provenance import config_hash

TINY = [
    "--seeds",
    "2",
    "--train-size",
    "400",
    "--validation-size",
    "40",
    "--suite-size",
    "30",
    "--max-epochs",
    "2",
]


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


@pytest.mark.slow
def test_sweep_writes_a_complete_run_and_resumes_without_redoing_work(tmp_path, capsys):
    run = tmp_path / "run"
    if not torch.cuda.is_available():
        # the device is checked when training needs it, and is no part of the run's identity
        code, _, err = run_cli(
            ["rewriting", "sweep", *TINY, "--device", "cuda", "--out", str(run), "--json"], capsys
        )
        assert code == 2 and "device must be a device that exists here" in err
        if torch.version.cuda is None:
            assert "CPU build; docs/gpu.md" in err
        assert len(err.strip().splitlines()) == 1 and not (run / "members").exists()
    code, out, _ = run_cli(["rewriting", "sweep", *TINY, "--out", str(run), "--json"], capsys)
    assert code == 0
    summary = json.loads(out)["summary"]
    assert set(summary) == {"standard", "repeat", "short", "long", "uncharacteristic"}

    config = json.loads((run / "config.json").read_text())
    assert config["config"]["seeds"] == [1, 2] and len(config["hash"]) == 16
    assert "device" not in config["config"] and config["config"]["seeds_per_shard"] == 25
    assert config["provenance"]["versions"]["torch"] == torch.__version__
    manifest = json.loads((run / "shards" / "train" / "seeds=1-2.json").read_text())
    assert manifest["device"] == "cpu" and set(manifest["files"]) == {
        "members/seed=1.pt",
        "members/seed=2.pt",
        "training/seeds=1-2.json",
    }
    assert sorted(p.name for p in (run / "shards" / "predict").iterdir()) == [
        "long.json",
        "repeat.json",
        "short.json",
        "standard.json",
        "uncharacteristic.json",
    ]
    member = torch.load(run / "members" / "seed=2.pt", weights_only=True)
    assert member["seed"] == 2 and member["state"]["gen_w"].shape == (32, 243)
    predictions = pd.read_parquet(run / "predictions" / "long.parquet")
    assert list(predictions.columns) == [*COLUMNS, "seed", "length"]  # judged, the sweep's own
    assert (predictions["member"] == "seed=" + predictions["seed"].astype(str)).all()
    assert set(predictions["outcome"]) <= {"correct", "incorrect"}
    assert (
        len(predictions) == 2 * 30
        and predictions["input"].str.split().str.len().between(11, 15).all()
        and (predictions["input"].str.split().str.len() == predictions["length"]).all()
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["seeds"]) == {"1", "2"}
    acc = metrics["seeds"]["1"]["accuracy"]["long"]
    assert acc == (predictions[predictions.seed == 1]["outcome"] == "correct").mean()
    for name in (
        "report.md",
        "report.html",
        "stats.json",
        "figures/suites.png",
        "figures/scatter_repeat_long.png",
        "figures/learning_curves.png",
        "figures/per_length.png",
        "data/train.jsonl",
        "data/long.jsonl",
    ):
        assert (run / name).stat().st_size > 0
    assert not (run / "figures" / "correlations.png").exists()  # 2 seeds: no correlation
    html = (run / "report.html").read_text()
    assert "data:image/png;base64," in html and "<table>" in html
    assert "<title>Seed sensitivity of generalization</title>" in html
    report = (run / "report.md").read_text()
    assert "Beside the paper (Weber et al. 2018, Table 3)" in report
    assert "| repeat |" in report and "| 86.67 ± 13.39 | 45.70 – 99.85 |" in report
    assert "a seed stops after 2 epochs without improvement" in report
    assert "Differs from Weber et al. 2018, Table 3 in: --train-size 400 (paper: 100000)" in report
    roles = json.loads((run / "data" / "roles.json").read_text())
    assert roles["train"] == {"split": "train", "examples": 400, "lengths": [5, 10]}
    assert not (run / "scratch").exists()  # the trainer's resume point goes once it is done

    def written():  # the members, and the report (a finished run's rerun only reads it)
        files = [*(run / "members").iterdir(), *(run / "figures").iterdir(), run / "report.html"]
        return {p: p.stat().st_mtime_ns for p in files}

    stamps = written()
    code, _, _ = run_cli(["rewriting", "sweep", *TINY, "--out", str(run), "--json"], capsys)
    assert code == 0
    assert stamps == written()

    src = tmp_path / "ext.src"
    src.write_text("A B C\nOS\n")
    evaluate = ["rewriting", "evaluate", str(run), "--src", str(src), "--name", "mine"]
    code, _, _ = run_cli(evaluate, capsys)
    assert code == 0
    assert len(pd.read_parquet(run / "predictions" / "mine.parquet")) == 4
    assert "mine" in json.loads((run / "metrics.json").read_text())["suites"]
    assert (run / "shards" / "predict" / "mine.json").exists()
    mine = (run / "predictions" / "mine.parquet").stat().st_mtime_ns
    code, _, _ = run_cli([*evaluate, "--device", "cuda:7"], capsys)  # done: no device needed
    assert code == 0 and (run / "predictions" / "mine.parquet").stat().st_mtime_ns == mine
    src.write_text("A B C\nOS\nA\n")  # other inputs under the same name replace it
    code, _, _ = run_cli(evaluate, capsys)
    assert code == 0 and len(pd.read_parquet(run / "predictions" / "mine.parquet")) == 6
    code, _, err = run_cli([*evaluate[:-1], "long"], capsys)
    assert code == 2 and "name must be a name other than" in err

    (run / "report.md").unlink()
    code, _, _ = run_cli(["report", str(run)], capsys)
    assert code == 0 and "| mine |" in (run / "report.md").read_text()

    if not torch.cuda.is_available():  # members as a GPU machine saves them: evaluated here
        for member in (run / "members").iterdir():
            saved_on_cuda(member)
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(run / "members" / "seed=1.pt", weights_only=True)
        code, _, _ = run_cli([*evaluate[:-1], "again"], capsys)
        assert code == 0 and "| again |" in (run / "report.md").read_text()


def saved_on_cuda(path):
    """Rewrite a checkpoint so that its tensors say they were saved on cuda:0, and its shard's
    manifest so that it records those bytes (as a GPU machine's run would)."""
    original = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as rewritten:
        for info in original.infolist():
            data = original.read(info)
            if info.filename.endswith("/data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            rewritten.writestr(info, data)
    rerecord(path.parents[1], path)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--train-size", "-5"], "--train-size must be an integer >= 1"),
        (["--device", "tpu"], "--device must be"),
        (["--letters", "AAB"], "letters must be"),
        (["--loss-normalization", "mean"], "--loss-normalization must be one of sequences"),
        (["--cell", "gur"], "--cell must be one of lstm, gru (did you mean gru?)"),
        (["--attention", "none", "--input-feeding"], "--input-feeding must be off when"),
        (["--patience", "0"], "--patience must be an integer >= 1"),
        (["--min-delta", "1.5"], "--min-delta must be in [0, 1)"),
    ],
)
def test_bad_sweep_arguments_exit_2_and_write_nothing(tmp_path, capsys, args, message):
    code, _, err = run_cli(["rewriting", "sweep", *args, "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_generate_then_check(tmp_path, capsys):
    prefix = tmp_path / "long"
    code, _, _ = run_cli(
        ["rewriting", "generate", "--suite", "long", "--n", "40", "--out", str(prefix)], capsys
    )
    assert code == 0
    code, out, _ = run_cli(
        ["rewriting", "check", "--src", f"{prefix}.src", "--tgt", f"{prefix}.tgt", "--json"], capsys
    )
    assert json.loads(out) == {
        "n": 40, "valid": 40, "invalid": 0, "accuracy": 1.0, "invalid_lines": []
    }  # fmt: skip

    lines = (tmp_path / "long.tgt").read_text().splitlines()
    lines[0] = "junk " + lines[0]
    lines[1] = ""
    (tmp_path / "bad.tgt").write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(
        [
            "rewriting",
            "check",
            "--src",
            f"{prefix}.src",
            "--tgt",
            str(tmp_path / "bad.tgt"),
            "--json",
        ],
        capsys,
    )
    assert json.loads(out)["invalid"] == 2 and json.loads(out)["invalid_lines"] == [1, 2]

    code, _, _ = run_cli(
        [
            "rewriting",
            "generate",
            "--suite",
            "repeat",
            "--n",
            "5",
            "--format",
            "tsv",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    code, out, _ = run_cli(
        ["rewriting", "check", "--src", str(tmp_path / "r.tsv"), "--json"], capsys
    )
    assert json.loads(out)["valid"] == 5

    (tmp_path / "short.tgt").write_text("A1_1\n")
    code, _, err = run_cli(
        ["rewriting", "check", "--src", f"{prefix}.src", "--tgt", str(tmp_path / "short.tgt")],
        capsys,
    )
    assert code == 2 and "short.tgt" in err and "40" in err


@pytest.mark.parametrize(
    "config, message",
    [
        (None, "is not a run directory (no config.json)"),
        ({"kind": "unheard-of", "hash": config_hash({}), "config": {}}, "which no study knows"),
        ({"kind": "sweep", "hash": "0", "config": {}}, "config.json is damaged (its config"),
    ],
)
def test_report_of_a_directory_that_is_no_known_run_exits_2(tmp_path, capsys, config, message):
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    code, _, err = run_cli(["report", str(tmp_path)], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
