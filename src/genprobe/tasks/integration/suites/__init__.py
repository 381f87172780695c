"""Test suites of the brittleness study as data: one table of problems per suite.

Each suite is a pandas DataFrame with the columns of `COLUMNS` (problem and known antiderivative
as prefix tokens, plus the metadata of how the problem was made), written to JSONL or Parquet.
The builders are pure functions: a study can call them in-process, and the suites derived from a
model's successes (`robustness-validation`, `compositionality`: `derived_suite`, which the
brittleness study and the probe's derived suites both build by) take those successes as input.
`SUITE_BUILDERS` maps each name to its builder for the command line (`genprobe integration suite`).
"""

from genprobe.tasks.integration.suites.compositionality import (
    FAMILIES,
    compositionality,
    solved_families,
)
from genprobe.tasks.integration.suites.in_distribution import in_distribution
from genprobe.tasks.integration.suites.operators import operator_extrapolation
from genprobe.tasks.integration.suites.primitives import (
    SOLVED,
    Primitive,
    dataset_primitives,
    solved_primitives,
)
from genprobe.tasks.integration.suites.registry import (
    DERIVED,
    SUITE_BUILDERS,
    VALID,
    Built,
    SuiteRequest,
    build_suite,
    derived_suite,
    get_suite,
)
from genprobe.tasks.integration.suites.simple import (
    integer_extrapolation,
    robustness_simple,
    simple_draws,
)
from genprobe.tasks.integration.suites.table import COLUMNS, read_suite, suite_path, write_suite
from genprobe.tasks.integration.suites.validation import (
    robustness_validation,
    validation_candidates,
    validation_primitives,
)

__all__ = [
    "COLUMNS",
    "DERIVED",
    "FAMILIES",
    "SOLVED",
    "SUITE_BUILDERS",
    "VALID",
    "Built",
    "Primitive",
    "SuiteRequest",
    "build_suite",
    "compositionality",
    "dataset_primitives",
    "derived_suite",
    "get_suite",
    "in_distribution",
    "integer_extrapolation",
    "operator_extrapolation",
    "read_suite",
    "robustness_simple",
    "robustness_validation",
    "simple_draws",
    "solved_families",
    "solved_primitives",
    "suite_path",
    "validation_candidates",
    "validation_primitives",
    "write_suite",
]
