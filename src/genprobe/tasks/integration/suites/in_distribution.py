"""`in-distribution`: problems drawn from a test or validation file, as the model was trained.

The tokens are kept as the file gives them (the shape the model saw in training); `source_rows`
holds each problem's 1-based row in the file.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from genprobe.tasks.integration.suites.primitives import Primitive
from genprobe.tasks.integration.suites.sampling import (
    DEFAULT_SEED,
    check_n,
    sample_in_order,
    set_rng,
)
from genprobe.tasks.integration.suites.table import suite_frame, tree_columns


def sample_primitives(
    suite: str, set_name: str, primitives: Sequence[Primitive], n: int | None, seed: int
) -> pd.DataFrame:
    """A suite of `n` of the `primitives` (all if None), kept in their order, as given."""
    check_n(n)
    chosen = sample_in_order(set_rng(seed, set_name), primitives, n)
    rows = [
        {
            "suite": suite,
            "set": set_name,
            **tree_columns(primitive.problem, primitive.reference),
            "source_rows": [primitive.row],
        }
        for primitive in chosen
    ]
    return suite_frame(rows)


def in_distribution(
    primitives: Sequence[Primitive],
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    set_name: str = "in_distribution",
) -> pd.DataFrame:
    """`in-distribution`: `n` rows of a dataset (all if None); `set_name` names the file."""
    return sample_primitives("in-distribution", set_name, primitives, n, seed)
