"""The suites by name: each entry turns one request (sizes, seed, input files) into a table.

The builders themselves are pure functions of their inputs; the entries here read the files a
command line names (a dataset, a results file) and pass what they hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from genprobe.errors import ConfigError, check_choice
from genprobe.tasks.integration.suites.compositionality import compositionality, solved_families
from genprobe.tasks.integration.suites.in_distribution import in_distribution
from genprobe.tasks.integration.suites.operators import PAPER_MAX_OPS, operator_extrapolation
from genprobe.tasks.integration.suites.primitives import (
    Primitive,
    dataset_primitives,
    solved_primitives,
)
from genprobe.tasks.integration.suites.sampling import DEFAULT_SEED
from genprobe.tasks.integration.suites.simple import integer_extrapolation, robustness_simple
from genprobe.tasks.integration.suites.validation import (
    robustness_validation,
    validation_candidates,
    validation_primitives,
)

# the suites made of the problems a model solved (`derived_suite`), and robustness-validation's
# one family: the solved validation primitives
DERIVED = ("robustness-validation", "compositionality")
VALID = "valid"


@dataclass(frozen=True)
class SuiteRequest:
    """What to build: the options of `genprobe integration suite`."""

    n: int | None = None  # size (per set or per cell, see each suite); None: the suite's default
    seed: int = DEFAULT_SEED
    validation: Path | None = None  # a dataset: in-distribution, validation-primitives
    solved: Path | None = None  # a results file: robustness-validation, compositionality
    solved_by: str = "paper"  # what counts as solved in it (`primitives.SOLVED`)
    method: str = "bwd"  # operator-extrapolation: fwd, bwd or ibp
    workers: int = 1  # operator-extrapolation: generator processes
    # operator-extrapolation: the most operators of the model's training expressions
    train_max_ops: int = PAPER_MAX_OPS
    split: str | None = None  # the split of a JSONL/Parquet dataset


@dataclass(frozen=True)
class Built:
    frame: pd.DataFrame
    notes: tuple[str, ...] = ()  # what was left out of the inputs, for the summary


@dataclass(frozen=True)
class SuiteBuilder:
    build: Callable[[SuiteRequest], Built]
    about: str  # one line: what it holds, which paper table, which options it needs


def _sized(n: int | None) -> dict[str, int]:
    """The size argument of a builder: none if not asked, so the builder's default holds."""
    return {} if n is None else {"n": n}


def _file(request: SuiteRequest, option: str, name: str) -> Path:
    path = getattr(request, option)
    if path is None:
        expected = "a results file" if option == "solved" else "a dataset file"
        raise ConfigError(f"--{option}", f"{expected} for the suite {name!r}", None)
    return path


def _skipped_note(skipped: list[tuple[int, str]]) -> tuple[str, ...]:
    if not skipped:
        return ()
    row, reason = skipped[0]
    return (f"{len(skipped)} rows left out (first: row {row}, {reason})",)


def _in_distribution(request: SuiteRequest) -> Built:
    path = _file(request, "validation", "in-distribution")
    primitives, skipped = dataset_primitives(path, request.split)
    frame = in_distribution(primitives, request.n, request.seed, set_name=Path(path).name)
    return Built(frame, _skipped_note(skipped))


def _validation_primitives(request: SuiteRequest) -> Built:
    path = _file(request, "validation", "validation-primitives")
    candidates, skipped = validation_candidates(path, request.split)
    frame = validation_primitives(candidates, seed=request.seed, **_sized(request.n))
    return Built(frame, _skipped_note(skipped))


def _robustness_validation(request: SuiteRequest) -> Built:
    path = _file(request, "solved", "robustness-validation")
    families = {VALID: solved_primitives(path, {"valid_primitive"}, request.solved_by)}
    return Built(derived_suite("robustness-validation", families, request.n, request.seed))


def _compositionality(request: SuiteRequest) -> Built:
    families = solved_families(_file(request, "solved", "compositionality"), request.solved_by)
    return Built(derived_suite("compositionality", families, request.n, request.seed))


def derived_suite(
    name: str,
    families: Mapping[str, Sequence[Primitive]],
    n: int | None,
    seed: int,
    exact: bool = True,
) -> pd.DataFrame:
    """A suite of `DERIVED`, made of solved primitives: `robustness-validation` perturbs those
    of `families[VALID]`, `compositionality` sums those of each family of
    `compositionality.FAMILIES` it holds; n None: the suite's default size. With `exact=False`,
    fewer problems than n where few primitives are solved (as studies build them), not an error.

    Raises:
        ConfigError: see `robustness_validation` and `compositionality`.
    """
    check_choice("suite", name, DERIVED)
    if name == "robustness-validation":
        return robustness_validation(families[VALID], seed=seed, exact=exact, **_sized(n))
    return compositionality(families, seed=seed, exact=exact, **_sized(n))


def _operator_extrapolation(request: SuiteRequest) -> Built:
    frame = operator_extrapolation(
        seed=request.seed, method=request.method, workers=request.workers,
        max_ops=request.train_max_ops, **_sized(request.n),
    )  # fmt: skip
    return Built(frame)


SUITE_BUILDERS: dict[str, SuiteBuilder] = {
    "robustness-simple": SuiteBuilder(
        lambda r: Built(robustness_simple(seed=r.seed, **_sized(r.n))),
        "simple primitives with sampled coefficients (Table 2, top); --n: pairs per cell",
    ),
    "integer-extrapolation": SuiteBuilder(
        lambda r: Built(integer_extrapolation(seed=r.seed, **_sized(r.n))),
        "simple primitives, coefficients up to 11,000 (Figure 2); --n: pairs per range",
    ),
    "validation-primitives": SuiteBuilder(
        _validation_primitives,
        "validation problems to solve first (--validation; --n default 1000)",
    ),
    "robustness-validation": SuiteBuilder(
        _robustness_validation,
        "k*f, f/k, f+exp(x), f+ln(x) of solved validation primitives (Table 2, bottom; --solved)",
    ),
    "compositionality": SuiteBuilder(
        _compositionality, "sums of 2, 3, 4 solved primitives (Table 8; --solved)"
    ),
    "operator-extrapolation": SuiteBuilder(
        _operator_extrapolation,
        "generated problems with 1-M, M+5, M+10, M+15, M+20 operators, M the model's training "
        "max_ops (Table 9; --train-max-ops, default 15; --method, --workers)",
    ),
    "in-distribution": SuiteBuilder(
        _in_distribution, "rows of a test or validation file (--validation, --split; --n: all)"
    ),
}


def get_suite(name: str) -> SuiteBuilder:
    """The suite called `name`.

    Raises:
        ConfigError: no such suite; the message suggests the nearest names.
    """
    check_choice("suite", name, SUITE_BUILDERS)
    return SUITE_BUILDERS[name]


def build_suite(name: str, request: SuiteRequest) -> Built:
    """Build the suite called `name` for `request`."""
    return get_suite(name).build(request)
