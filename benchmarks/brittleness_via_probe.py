"""Does `genprobe probe` give the brittleness study's numbers? Every problem of a probe run's
brittleness suites (the integration task's `robustness-simple`, `integer-extrapolation`,
`operator-extrapolation`) decoded again by the brittleness study's own solve stage (its model
loading, beam search and ranked verification, as `integration brittleness` runs them), and per
suite Fail@1, Fail@k and Unresolved@1 and @k (the search-vs-model split against each problem's
reference) by each, with the problems whose first correct rank differs.

Run: genprobe probe --model bundled:integration-cpu --task integration \
         --task-option max_ops=6 --data-seed 43 --families '' --relations '' \
         --splits operator-extrapolation --size 200 --k 10 --out runs/brittleness-probe
     .venv/bin/python benchmarks/brittleness_via_probe.py runs/brittleness-probe
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from genprobe.analysis.judged import from_brittleness
from genprobe.decoding.config import DecodingConfig
from genprobe.studies.brittleness import tables
from genprobe.studies.brittleness.solve import SuiteRow, solve
from genprobe.studies.probe.results import read_probe, read_results
from genprobe.studies.probe.summary import unresolved
from genprobe.tasks.integration.prefix import from_prefix
from genprobe.tasks.integration.suites.splits import SPLITS
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.verdict import TimeoutPolicy
from genprobe.under_test.adapters.integration_tokens import load_integration_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a probe run of an integration model on the integration task")
    args = parser.parse_args()
    config = read_probe(args.run)
    task = config.load_task()
    results = read_results(args.run)
    settings = replace(config.model, decoding=DecodingConfig(beam_size=config.k))
    model = load_integration_model(settings, min_beam=config.k)
    verifier = VerifierConfig(deadline=task.deadline, policy=TimeoutPolicy("strict"))
    rows = []
    with Verifier(verifier) as verify:
        for name in SPLITS:
            probed = results[results["suite"] == f"task-{name}"].sort_values("index")
            if probed.empty:
                continue
            problems = [
                SuiteRow(i, from_prefix(text.split()), reference and from_prefix(reference.split()))
                for i, (text, reference) in enumerate(
                    zip(probed["input"], probed["reference"], strict=True)
                )
            ]
            started = time.perf_counter()
            table = solve(model, verify, name, problems, config.k, 64, True).to_pandas()
            seconds = time.perf_counter() - started
            table["first_correct_rank"] = table["first_correct_rank"].astype("Int64")
            judged = from_brittleness(table, str(config.model.spec))
            theirs_unresolved = tables.unresolved(judged, sorted({1, config.k}))
            ours_unresolved = unresolved(probed, config.k)
            ours = probed["first_correct"].fillna(0).to_numpy(int)
            theirs = table["first_correct_rank"].fillna(0).to_numpy(int)
            rows.append(
                {
                    "suite": name,
                    "problems": len(problems),
                    "probe Fail@1": _fail(ours, 1),
                    "brittleness Fail@1": _fail(theirs, 1),
                    f"probe Fail@{config.k}": _fail(ours, config.k),
                    f"brittleness Fail@{config.k}": _fail(theirs, config.k),
                    "ranks differ": int((ours != theirs).sum()),
                    **{
                        f"{who} Unresolved@{k}": round(share, 1)
                        for who, shares in (
                            ("probe", 100 * ours_unresolved["unresolved"]),
                            ("brittleness", theirs_unresolved["Unresolved@k"]),
                        )
                        for k, share in zip(sorted({1, config.k}), shares, strict=True)
                    },
                    "brittleness seconds": round(seconds, 1),
                }
            )
    model.close()
    print(f"{config.model.spec} on {task.options()}, beam {config.k}, data seed {config.data_seed}")
    print(pd.DataFrame(rows).set_index("suite").T.to_string())


def _fail(first_correct: np.ndarray, k: int) -> float:
    """Percent of problems without a correct candidate among the first k (rank 0: none)."""
    return round(100 * float(((first_correct == 0) | (first_correct > k)).mean()), 1)


if __name__ == "__main__":
    main()
