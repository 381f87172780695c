"""The brittleness study's suites that need no model, as shifted splits of the integration token
task, so `genprobe probe` decodes the same problems as `integration brittleness` (Welleck et al.
2022, Table 2 top, Figure 2 and Table 9) for any model of the task, every seed of a sweep too.

    robustness-simple       the paper-size suite (N = 500: 28,210 problems), in a seeded order
    integer-extrapolation   its `simple_coeff1_range` set alone (21,000 problems), the same way
    operator-extrapolation  generated problems with 1-M, M+5, ..., M+20 operators (M: the task's
                            max_ops), one set after another in turn, Lample & Charton's engine
    in-distribution         the problems of the task's `data` file (a test or validation set of
                            the model's distribution: Lample & Charton's text, JSONL or Parquet),
                            in a seeded order
    validation-primitives   those of them the study's notebooks keep (no inverse trigonometric
                            or hyperbolic function, no I), in a seeded order: what its suites of
                            solved validation problems are made of

A split's first n problems are those of `generate(split, n, seed)` for any larger n. The data
seed is the brittleness study's `--seed`: the first two splits hold exactly that study's
problems at its paper size, in another order, and `operator-extrapolation` at n = 5N holds the
problems of its suite at N per set. `operator-extrapolation` is made by the generator (about a
CPU-second per problem), so it is not among the suites `probe` decodes unless asked for. The
two splits of a `data` file hold its problems as the study reads them (`dataset_primitives`,
`validation_candidates`), all of them in another order; a sample of n is the first n of that
order, where the study samples n in file order (`sample_primitives`).
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.errors import ConfigError, TaskContractError
from genprobe.runs.cpus import usable_cpus
from genprobe.tasks.integration.suites.in_distribution import sample_primitives
from genprobe.tasks.integration.suites.operators import operator_extrapolation, set_names
from genprobe.tasks.integration.suites.primitives import Primitive, dataset_primitives
from genprobe.tasks.integration.suites.sampling import set_rng
from genprobe.tasks.integration.suites.simple import (
    PAPER_N,
    Draw,
    build_draws,
    coeff1_range_draws,
    range_label,
    simple_draws,
)
from genprobe.tasks.integration.suites.validation import validation_candidates

ROBUSTNESS = "robustness-simple"
INTEGERS = "integer-extrapolation"
OPERATORS = "operator-extrapolation"
SPLITS = {
    ROBUSTNESS: "the brittleness study's k1*f(k2*x) primitives with sampled coefficients "
    "(Welleck et al. Table 2, top; its paper size, in a seeded order)",
    INTEGERS: "the brittleness study's primitives with coefficients up to 11,000 (Figure 2; "
    "its paper size, in a seeded order)",
    OPERATORS: "generated problems of 1-M, M+5, M+10, M+15 and M+20 operators, M the task's "
    "max_ops (Table 9; a set each in turn)",
}
IN_DISTRIBUTION = "in-distribution"
VALIDATION = "validation-primitives"
# the splits of a task given a `data` file
FILE_SPLITS = {
    IN_DISTRIBUTION: "the problems of the task's data file, in a seeded order (the brittleness "
    "study's in-distribution)",
    VALIDATION: "the data file's problems the study's notebooks keep, in a seeded order (what "
    "its suites of solved validation problems are made of)",
}
SEEDED, CELLS = ORDERS = ("seeded", "cells")  # the orders of the simple primitives' splits
SHIFTED = (ROBUSTNESS, INTEGERS)  # cheap enough to be among the task's default suites
# problems a split gives by default (a sweep's suites; operator-extrapolation: the brittleness
# study's quick preset, 8 per set)
DEFAULT_SIZES = {ROBUSTNESS: 500, INTEGERS: 500, OPERATORS: 40}


# a split's table is asked for twice in a row, its problems (`IntegrationTask.generate`) then
# their sets (`IntegrationProbes.split_columns`): operator-extrapolation's generator must not
# run again (it costs about a CPU-second a problem, and may make a problem or two otherwise)
@lru_cache(maxsize=4)
def suite_table(
    split: str, n: int, seed: int, method: str, max_ops: int, order: str = SEEDED
) -> pd.DataFrame:
    """The first `n` problems of `split` (a suite table: problem, reference and how each was
    made), in the `order` of `ORDERS` (operator extrapolation has its own: a set each in
    turn); the same frame for the same arguments, not to be changed.

    Raises:
        ConfigError: more problems than a seeded-order split holds.
        TaskContractError: the generator kept fewer than the problems asked for.
    """
    if split != OPERATORS:
        draws = _pool(split, seed)
        if n > len(draws):
            raise ConfigError("n", f"<= {len(draws):,} (all of split {split})", n)
        shuffled = set_rng(seed, split, "order").permutation(len(draws))
        if order == CELLS:
            cells = [
                (d.set, d.template, range_label(d.coeff_range))
                for d in map(draws.__getitem__, shuffled)
            ]
            shuffled = _by_cells(shuffled, cells)
        return build_draws(split, [draws[i] for i in shuffled[:n]])
    sets = set_names(max_ops)
    per_set = -(-n // len(sets))
    frame = operator_extrapolation(
        per_set, seed, method=method, workers=usable_cpus(), max_ops=max_ops
    )
    turns = [frame[frame["set"] == name].reset_index(drop=True) for name in sets]
    if any(len(rows) < per_set for rows in turns):
        raise TaskContractError(
            f"integration: the generator kept fewer than {per_set} problems of a set of {split}"
        )
    rows = [turns[i % len(sets)].iloc[i // len(sets)] for i in range(n)]
    return pd.DataFrame(rows).reset_index(drop=True)


def _by_cells(rows: np.ndarray, cells: list[tuple[str, ...]]) -> np.ndarray:
    """`rows` (in their order, each of cell `cells[i]`: its set, template and coefficient
    range) taken a row of each cell in turn: the first of every cell (cells in the order they
    first come), then the second, ..."""
    codes = pd.factorize(pd.Series(["\0".join(cell) for cell in cells]))[0]
    turn = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    return rows[np.lexsort((codes, turn))]


@cache
def _pool(split: str, seed: int) -> tuple[Draw, ...]:
    draws = simple_draws if split == ROBUSTNESS else coeff1_range_draws
    return tuple(draws(PAPER_N, seed))


@lru_cache(maxsize=4)
def file_primitives(split: str, path: str, data_split: str, digest: str) -> tuple[Primitive, ...]:
    """The primitives of split `split` (`FILE_SPLITS`) of the file `path` (of sha256 `digest`:
    another file at the path is read again), as the brittleness study reads them.

    Raises:
        DataFormatError: a malformed file, or one with no primitive.
    """
    read = dataset_primitives if split == IN_DISTRIBUTION else validation_candidates
    return tuple(read(path, data_split or None)[0])


def file_table(
    split: str, n: int, seed: int, path: str, data_split: str, digest: str
) -> pd.DataFrame:
    """The first `n` problems of `split` of the file `path` (`file_primitives`) in a seeded
    order, as a suite table whose set is the study's: the file's name for in-distribution,
    `valid_primitive` for validation-primitives.

    Raises:
        ConfigError: more problems than the file holds.
    """
    primitives = file_primitives(split, path, data_split, digest)
    if n > len(primitives):
        raise ConfigError("n", f"<= {len(primitives):,} (the problems of {path})", n)
    order = set_rng(seed, split, "order").permutation(len(primitives))[:n]
    set_name = Path(path).name if split == IN_DISTRIBUTION else "valid_primitive"
    return sample_primitives(split, set_name, [primitives[i] for i in order], None, seed)
