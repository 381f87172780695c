"""A probe run's results as tidy tables (`genprobe.studies.tables` reads any run's):

results   one row per member and input of every decoded suite (`decode.py`), and `seen`
          where the run knows which inputs the model was trained on
members   one row per member and suite: accuracy (greedy) and Fail@k
inputs    one row per suite and input: how many members fail it
judged    one row per member, input and output (the greedy answer, and with k > 1 each of
          the k candidates): the schema of judged outputs (`analysis.judged`,
          docs/results-schema.md)
search    (a run with --search-budget) one row per candidate of the large search
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genprobe.analysis.judged import from_probe
from genprobe.studies.probe.results import read_large_search, read_probe, read_results
from genprobe.studies.probe.summary import accuracy, fail_at, members_failing


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The run's tables by name: results, members, inputs, judged, and search where there is
    one.

    Raises:
        RunDirError: not a probe run, or nothing decoded yet.
    """
    k = read_probe(run).k
    results = read_results(run)
    members = accuracy(results).stack().rename("accuracy").to_frame()
    members[f"fail@{k}"] = fail_at(results, k).stack()
    tables = {
        "results": results,
        "members": members.reset_index(),
        "inputs": members_failing(results),
        "judged": from_probe(results),
    }
    searched = read_large_search(run)
    if searched is not None:
        tables["search"] = searched
    return tables
