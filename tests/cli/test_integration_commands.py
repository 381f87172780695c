"""`genprobe integration tokens | verify | generate`, run through the real entry point."""

import json

import pytest

from genprobe.cli import main
from genprobe.runs.rundir import read_config
from genprobe.tasks.integration import VOCAB


def run(capsys, *argv):
    code = 0
    try:
        main(["integration", *argv])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tokens_json_lists_the_vocabulary_in_id_order(capsys):
    code, out, _ = run(capsys, "tokens", "--json")
    assert code == 0
    assert json.loads(out) == list(VOCAB)


def test_sagga_says_what_its_time_budget_bounds_and_what_bounds_the_analysis(capsys):
    code, out, _ = run(capsys, "sagga", "--help")
    text = "".join(out.split())  # the help wraps anywhere, inside an option's name too
    assert code == 0 and "StopthesearchafterthismanyminutesofitsCPUtimeinthisprocess" in text
    assert "Theanalysisafterthesearchisnotcounted:--tag-limitand--nearby-attempts" in text
    tag_limit = text.split("--tag-limit<int>")[1].split("--nearby-attempts<int>")[0]
    assert "[default:200]" in tag_limit


@pytest.fixture
def answers(tmp_path):
    lines = [
        {"problem": "sub Y' pow x INT+ 2", "candidate": "x^3/3 + C"},
        {"problem": ["cos", "x"], "candidate": ["sin", "x"]},
        {"problem": "2*x", "candidate": "The answer is x**2 + 7."},
        {"problem": "2*x", "candidate": "x^3"},
        {"problem": "x*y", "candidate": "x"},
        {"problem": "x", "candidate": "x^^2"},
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_verify_json_gives_one_verdict_per_line_in_order(capsys, answers):
    code, out, _ = run(capsys, "verify", "--input", str(answers), "--json", "--workers", "2")
    assert code == 0
    verdicts = [json.loads(line) for line in out.splitlines()]
    outcomes = ["correct", "correct", "correct", "incorrect", "unsupported", "unparseable"]
    assert [v["outcome"] for v in verdicts] == outcomes
    assert [v["passed"] for v in verdicts] == [True, True, True, False, False, False]
    assert all({"outcome", "passed", "method", "seconds", "policy"} <= set(v) for v in verdicts)
    assert {v["policy"] for v in verdicts} == {"strict"}


def test_verify_summary_table(capsys, answers):
    code, out, err = run(capsys, "verify", "--input", str(answers), "--policy", "generous")
    assert code == 0
    assert "policy generous" in out and "passed: 3/6" in out
    assert "] verifying: " in err  # off a terminal, progress comes as plain lines


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"problem": "x +", "candidate": "x"}\n', "bad.jsonl:1: field 'problem'"),
        ('{"problem": "x"}\n', "bad.jsonl:1: field 'candidate'"),
        ('{"problem": "x", "candidate": "x"}\nnot json\n', "bad.jsonl:2: not JSON"),
    ],
)
def test_verify_bad_input_is_one_line_and_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    code, _, err = run(capsys, "verify", "--input", str(path))
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_verify_rejects_an_unknown_policy(capsys, answers):
    code, _, err = run(capsys, "verify", "--input", str(answers), "--policy", "lenient")
    assert code == 2 and "--policy" in err


def test_generate_writes_lample_charton_files_that_verify(capsys, tmp_path):
    out = tmp_path / "prim_bwd"
    # shards of 16 attempts, not 256: the first 16 hold the 12 pairs (L&C's engine simplifies
    # with SymPy, a few hundredths of a second per attempt)
    code, _, err = run(
        capsys, "generate", "--method", "bwd", "--n", "12", "--max-ops", "5", "--out", str(out),
        "--test-fraction", "0.25", "--workers", "2", "--seed", "3", "--shard-size", "16",
    )  # fmt: skip
    assert code == 0, err
    assert "] bwd pairs" in err  # off a terminal, progress comes as plain lines
    meta = json.loads((tmp_path / "prim_bwd.meta.json").read_text())
    assert meta["n_written"] == 12 and meta["counters"]["ok"] == 12
    # Lample & Charton's data unless told otherwise
    assert read_config(tmp_path / "prim_bwd.run")["config"]["generator"]["engine"] == "lc"
    lines = []
    for split in ("train", "valid", "test"):
        lines += (tmp_path / f"prim_bwd.{split}").read_text().splitlines()
    assert len(lines) == 12
    pairs = []
    for line in lines:
        count, rest = line.split("|", 1)
        problem, answer = rest.split("\t")
        assert count.isdigit() and problem.startswith("sub Y' ")
        pairs.append({"problem": problem, "candidate": answer})
    answers = tmp_path / "gold.jsonl"
    answers.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    code, out, _ = run(capsys, "verify", "--input", str(answers), "--json")
    assert [json.loads(line)["outcome"] for line in out.splitlines()] == ["correct"] * 12


def test_generate_rejects_bad_settings(capsys, tmp_path):
    code, _, err = run(capsys, "generate", "--method", "sideways", "--out", str(tmp_path / "d"))
    assert code == 2 and "method must be one of" in err


@pytest.fixture
def one_answer(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"problem": "2*x", "candidate": "x^2"}) + "\n")
    return path


@pytest.mark.parametrize("args", [["--confirm"], ["--symbolic", "confirm"]])
def test_verify_confirm_and_symbolic_confirm_ask_sympy_for_a_proof(capsys, one_answer, args):
    code, out, err = run(capsys, "verify", "--input", str(one_answer), "--json",
                         "--workers", "1", "--deadline", "5", *args)  # fmt: skip
    assert code == 0, err
    (verdict,) = map(json.loads, out.splitlines())
    assert (verdict["outcome"], verdict["method"]) == ("correct", "numeric+sympy")


def test_verify_without_confirm_trusts_the_numbers(capsys, one_answer):
    code, out, err = run(capsys, "verify", "--input", str(one_answer), "--json", "--workers", "1")
    assert code == 0, err
    assert json.loads(out)["method"] == "numeric"


def test_the_moved_options_help_is_their_configs_comment(capsys):
    for command, words in [
        ("verify", "How a timeout counts: strict (it fails) or generous (it passes)"),
        ("mix", "Share of inputs in the valid split."),
        ("generate", "text (Lample & Charton's count|in<TAB>out;"),
    ]:
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and " ".join(words.split()) in " ".join(out.split())


MISSING = ["--part", "no/such/part"]  # never read: the settings are refused first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify", "--policy", "lenient"],
         "--policy must be strict or generous. Got 'lenient' instead."),
        (["verify", "--symbolic", "maybe"],
         "--symbolic must be fallback or confirm. Got 'maybe' instead."),
        (["verify", "--deadline", "0"],
         "--deadline must be a positive number of seconds. Got 0.0 instead."),
        (["verify", "--confirm", "--symbolic", "fallback"],
         "--confirm must be left out with --symbolic fallback. Got '--confirm' instead."),
        (["mix", *MISSING, "--out", "{out}", "--format", "xml"],
         "--format must be text, jsonl or parquet. Got 'xml' instead."),
        (["mix", *MISSING, "--out", "{out}", "--valid-fraction", "0.5", "--test-fraction", "0.5"],
         "valid and test fractions must be non-negative with a sum below 1."),
        (["generate", "--out", "{out}", "--format", "xml"],
         "--format must be text, jsonl or parquet. Got 'xml' instead."),
        (["generate", "--out", "{out}", "--test-fraction", "-0.1"],
         "valid and test fractions must be non-negative with a sum below 1."),
    ],
)  # fmt: skip
def test_bad_settings_are_one_line_exit_2_before_anything_runs(capsys, tmp_path, one_answer,
                                                                args, message):  # fmt: skip
    out = tmp_path / "out"
    args = [arg.format(out=out) for arg in args]
    if args[0] == "verify":
        args += ["--input", str(one_answer)]
    code, stdout, err = run(capsys, *args)
    assert code == 2 and err.startswith(f"genprobe: error: {message}") and err.count("\n") == 1
    assert stdout == "" and list(tmp_path.iterdir()) == [one_answer]


def test_score_takes_the_model_options_groups_model_batch_size_and_device(
    capsys, monkeypatch, tmp_path
):
    from genprobe.cli.model_options import ModelOptions

    asked = []

    class Scorer:
        def score(self, pairs):
            return [-1.5] * len(pairs)

        def close(self):
            pass

    monkeypatch.setattr(ModelOptions, "load", lambda self: asked.append(self) or Scorer())
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"problem": "2*x", "candidate": "x^2"}) + "\n")
    code, out, err = run(capsys, "score", "--model", "sympy", "--input", str(pairs),
                         "--batch-size", "3", "--device", "cuda:1", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["logprob"] == -1.5
    (model,) = asked
    assert (model.model_spec, model.batch_size, model.device) == ("sympy", 3, "cuda:1")
    code, _, err = run(capsys, "score", "--model", "sympy", "--input", str(pairs), "--beam", "3")
    assert code == 2 and "No such option: --beam" in err  # scoring decodes nothing
