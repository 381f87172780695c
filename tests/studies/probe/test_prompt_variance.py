"""The probe report's prompt variance (a language model's members: format × few-shot draw ×
sampling seed) and its paired drop per value of a task's categorical feature, on result frames
built here with known answers, and once end to end on a tiny language model."""

import itertools

import numpy as np
import pandas as pd
import pytest

from genprobe.studies.probe.decode import FEATURE
from genprobe.studies.probe.summary import drop_by, paired_drop, prompt_grid, prompt_variance
from genprobe.tasks.probing import Breakdown

N = 40  # inputs per suite


def label(f: int, d: int, s: int | None) -> str:
    return f"format={f} draw={d}" + ("" if s is None else f" sample={s}")


def frame(accuracies: dict[str, float], suite: str = "base") -> pd.DataFrame:
    """Result rows of one suite: member m gets the first round(accuracy · N) inputs right."""
    rows = [
        {"member": member, "suite": suite, "kind": "base", "index": i, "origin": i,
         "outcome": "correct" if i < round(acc * N) else "incorrect"}
        for member, acc in accuracies.items()
        for i in range(N)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def grid(accuracy, formats: int, draws: int, samples: int = 0) -> pd.DataFrame:
    cells = itertools.product(range(formats), range(draws), range(samples) if samples else [None])
    return frame({label(f, d, s): accuracy(f, d, s or 0) for f, d, s in cells})


def test_a_format_effect_alone_is_all_format():
    split = prompt_variance(grid(lambda f, d, s: [0.2, 0.5, 0.6, 0.9][f], 4, 3))["base"]
    assert split.prompts.init.share == pytest.approx(1)  # format: the init seed's place
    assert split.prompts.order.share == pytest.approx(0)
    assert split.sampling is None and split.sampling_share() == (None, None)


def test_a_draw_effect_alone_is_all_draw():
    split = prompt_variance(grid(lambda f, d, s: [0.3, 0.7, 0.5][d], 4, 3))["base"]
    assert split.prompts.order.share == pytest.approx(1)
    assert split.prompts.init.share == pytest.approx(0)
    assert split.spread.spread == 0


def test_three_factors_split_format_draw_and_sampling():
    # format moves accuracy by 0.3, draw by 0.1, a sampling seed by up to 0.075
    def acc(f, d, s):
        return 0.2 + 0.3 * f + 0.1 * d + [0.0, 0.075, 0.025][(s + f + d) % 3]

    split = prompt_variance(grid(acc, 3, 2, 3))["base"]
    prompts = split.prompts
    assert prompts.init.share > 0.8 and prompts.order.share > 0.05
    share, ci = split.sampling_share()
    assert 0 < share < 0.1 and ci[0] <= share <= ci[1]

    noise_only = prompt_variance(grid(lambda f, d, s: 0.2 + 0.2 * s, 2, 2, 3))["base"]
    assert noise_only.sampling_share()[0] == pytest.approx(1)
    assert noise_only.prompts.init.share is None  # every prompt's mean is the same


def test_one_factor_is_all_of_the_variance():
    only_samples = prompt_variance(grid(lambda f, d, s: 0.1 * s, 1, 1, 4))["base"]
    assert only_samples.prompts is None and only_samples.spread is None
    assert only_samples.sampling_share()[0] == pytest.approx(1)
    only_formats = prompt_variance(grid(lambda f, d, s: 0.1 * f, 3, 1))["base"]
    assert only_formats.prompts.init.share == pytest.approx(1)


def test_the_format_spread_is_best_minus_worst_with_an_interval():
    split = prompt_variance(grid(lambda f, d, s: [0.8, 0.5, 0.6][f], 3, 2, 2))["base"]
    spread = split.spread
    assert (spread.best, spread.worst) == (0, 1)
    assert spread.spread == pytest.approx(0.3)
    low, high = spread.ci
    assert 0.1 < low < 0.3 < high < 0.5  # inputs resampled: 40 of them move it by points


def test_draws_that_disagree_on_the_best_format_widen_the_spread_interval():
    def acc(f, d, s):  # format 0 is 0.2 better or worse depending on the draw
        return [0.7, 0.4][f] + (0.2 * (-1) ** d if f == 0 else 0)

    steady = prompt_variance(grid(lambda f, d, s: [0.7, 0.4][f], 2, 4))["base"].spread
    moving = prompt_variance(grid(acc, 2, 4))["base"].spread
    assert moving.spread == pytest.approx(steady.spread)
    assert moving.ci[1] - moving.ci[0] > 1.5 * (steady.ci[1] - steady.ci[0])


def test_seeds_and_incomplete_grids_get_no_prompt_variance():
    assert prompt_variance(frame({"seed=1": 0.5, "seed=2": 0.7})) == {}
    assert prompt_grid(["format=0 draw=0", "format=1 draw=1"]) is None  # not a full grid
    assert prompt_grid(["format=0 draw=0", "seed=3"]) is None
    assert prompt_variance(frame({label(0, 0, None): 0.5})) == {}  # one member


def word_problem_results() -> pd.DataFrame:
    """Three members; 12 originals of templates 0, 1, 2 (4 each), perturbed once each. Every
    member gets every original right; on the perturbed ones, template 0 drops all, template 1
    drops member m's first m + 1 pairs of 4, template 2 nothing."""
    rows = []
    for m in range(3):
        member = f"seed={m}"
        for i in range(12):
            template, j = divmod(i, 4)
            wrong = template == 0 or (template == 1 and j <= m)
            base = {"member": member, "index": i, "origin": i, FEATURE + "template": template}
            rows.append({**base, "suite": "base", "kind": "base", "outcome": "correct"})
            rows.append(
                {**base, "suite": "family-noop", "kind": "family", FEATURE + "template": 9,
                 "outcome": "incorrect" if wrong else "correct"}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_the_paired_drop_per_template_is_the_median_member_on_its_pairs():
    results = word_problem_results()
    drops = drop_by(results, Breakdown("template", ("gift", "loss", "boxes"))).set_index("value")
    assert list(drops.index) == ["gift", "loss", "boxes"]  # the original's value, not the 9
    assert (drops["pairs"] == 4).all() and set(drops["suite"]) == {"family-noop"}
    assert drops.loc["gift", "drop"] == 1 and np.isnan(drops.loc["gift", "ci_low"])
    assert drops.loc["loss", "drop"] == pytest.approx(0.5)  # members drop 1/4, 2/4, 3/4
    assert 0 <= drops.loc["loss", "ci_low"] < 0.5 < drops.loc["loss", "ci_high"] <= 1
    assert drops.loc["boxes", "drop"] == 0
    # the drops per template average to the suite's paired drop
    per_member = paired_drop(results)["family-noop"]
    assert per_member.median() == pytest.approx(drops["drop"].mean())


def test_a_value_without_a_name_reads_as_its_number():
    drops = drop_by(word_problem_results(), Breakdown("template"))
    assert list(drops["value"]) == ["0", "1", "2"]


def test_the_probe_report_of_a_language_model_splits_its_variance(cli, tmp_path):
    pytest.importorskip("transformers")
    from helpers import save_tiny_gpt2

    saved = save_tiny_gpt2(tmp_path / "gpt2", positions=512)
    out = tmp_path / "probe"
    code, _, err = cli(
        "probe", "--model", f"hf:{saved}", "--task", "addition",
        "--task-option", "format=plain", "--task-option", "train_digits=2",
        "--task-option", "test_lengths=3", "--families", "operand_swap", "--no-task-suites",
        "--size", "6", "--formats", "2", "--shots", "1", "--shot-draws", "2", "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    report = (out / "report.md").read_text()
    section = report.split("## Prompt variance")[1]
    header = section.split("|")[1:8]
    assert [h.strip() for h in header] == [
        "suite", "format", "draw", "format × draw", "sampling", "spread", "best − worst",
    ]  # fmt: skip
    assert "| base |" in section and "| family-operand_swap |" in section
    assert "## Prompt variance" in (out / "report.html").read_text().replace("<h2>", "## ")


def test_word_problems_break_their_drops_down_by_template():
    from genprobe.tasks.registry import load_task, task_probes

    task = load_task("word_problems")
    probes = task_probes(task)
    breakdown = probes.breakdown()
    src = task.generate("test", 5, seed=0).src
    templates = probes.features(src)[breakdown.feature]
    assert [breakdown.name(int(t)) for t in templates] == [p.template.name for p in task.parse(src)]
    assert task_probes(load_task("addition")).breakdown() is None
