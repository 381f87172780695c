"""`--draws D`: a family perturbs each base input D times, one draw after another from its
random stream, and its suite keeps the distinct perturbations in the order of their originals;
D = 1 is the suite a run made before the option has, with its hash."""

import json
import zlib
from dataclasses import replace

import numpy as np
import pytest
from helpers import model_settings
from test_probe import probe_wrong

from genprobe.errors import ConfigError
from genprobe.runs.provenance import config_hash
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.suites import POOL, _drawn, build_suites
from genprobe.tasks.probing import Family, Perturbed, input_keys
from genprobe.tasks.registry import task_probes

CONFIG = ProbeConfig(
    model_settings("sympy"), task="addition", families=("leading_zeros", "operand_swap"),
    relations=(), task_suites=False, size=30,
)  # fmt: skip


RNG = np.random.default_rng(0)


def suite(config, name):
    task = config.load_task()
    return next(s for s in build_suites(config, task) if s.name == name)


def test_each_base_input_is_perturbed_once_per_draw_the_distinct_ones_kept():
    task, drawn = CONFIG.load_task(), replace(CONFIG, draws=3)
    moved = suite(drawn, "leading_zeros")
    # the draws as the suite makes them: the pool's first `size` inputs, one draw after another
    # from the family's stream (every input takes a leading zero: no more inputs are needed)
    rng = np.random.default_rng([CONFIG.seed, zlib.crc32(b"family:leading_zeros")])
    pool = task.generate(task.validation_split, POOL * CONFIG.size, CONFIG.data_seed).src
    first = pool[: CONFIG.size]
    draws = [task_probes(task).families()["leading_zeros"].perturb(first, rng) for _ in range(3)]
    made = {(int(o), k) for d in draws for o, k in zip(d.origin, input_keys(d.src), strict=True)}
    got = list(zip(moved.origin.tolist(), input_keys(moved.src), strict=True))
    assert set(got) == made and len(set(got)) == len(got)  # every distinct draw, none twice
    assert moved.origin.tolist() == sorted(moved.origin.tolist())  # by original
    once = suite(CONFIG, "leading_zeros")
    assert set(moved.origin.tolist()) == set(once.origin.tolist())  # the same 30 originals
    # a base input has two operands to draw from: most get both of its perturbations
    per_origin = np.bincount(moved.origin)
    assert per_origin.max() == 2 and (per_origin[per_origin > 0] == 2).mean() > 0.5


def test_draws_go_on_through_the_pool_until_size_inputs_have_a_perturbation():
    """A family that applies to one input in three: 10 inputs need about 30 of the pool."""
    task = CONFIG.load_task()
    pool = task.generate(task.validation_split, POOL * 10, CONFIG.data_seed)
    asked = []

    def perturb(src, rng):
        asked.append(len(src))
        rows = np.flatnonzero(src[:, 0] % 3 == 0)  # whether it applies: by the first token
        return Perturbed(src[rows], rows)

    moved, valid = _drawn(task_probes(task), Family("a third", perturb), pool, RNG, False, 2, 10)
    applies = np.flatnonzero(pool.src[:, 0] % 3 == 0)
    kept = np.unique(moved.origin[valid])
    assert kept.tolist() == applies[: len(kept)].tolist() and len(kept) >= 10
    assert asked == [10, 10] * (len(asked) // 2) and 3 <= len(asked) // 2 < POOL  # not all


def test_a_family_that_draws_nothing_gives_its_one_perturbation_whatever_the_draws():
    """operand_swap has one perturbation per input: three draws make the suite of one."""
    once, thrice = suite(CONFIG, "operand_swap"), suite(replace(CONFIG, draws=3), "operand_swap")
    assert np.array_equal(once.src, thrice.src) and np.array_equal(once.origin, thrice.origin)


def test_one_draw_keeps_the_hash_of_runs_made_before_the_option_and_zero_is_refused():
    assert "draws" not in CONFIG.identity()
    drawn = replace(CONFIG, draws=10)
    assert drawn.identity()["draws"] == 10
    assert config_hash(drawn.identity()) != config_hash(CONFIG.identity())
    assert ProbeConfig.from_identity(json.loads(json.dumps(drawn.identity()))) == drawn
    with pytest.raises(ConfigError, match="--draws must be at least 1"):
        replace(CONFIG, draws=0).validated()


@pytest.mark.slow
def test_a_probe_with_draws_decodes_them_and_says_so(cli, tmp_path):
    out = tmp_path / "run"
    args = probe_wrong(3, "--families", "coefficient", "--relations", "", "--draws", "2")
    code, _, err = cli("probe", *args, "--out", str(out))
    assert code == 0, err
    rows = json.loads((out / "suites.json").read_text())
    assert [(r["suite"], r["inputs"]) for r in rows] == [("base", 3), ("family-coefficient", 6)]
    assert (
        "perturbations drawn with seed 0, 2 per input and family" in (out / "report.md").read_text()
    )
