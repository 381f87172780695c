"""A brittleness run as a preset of the probe: the study's suites are the integration task's
splits (`tasks/integration/suites/splits.py`) and the probe's derived suites, its large search
the probe's, so `integration brittleness` is `genprobe probe` with these settings
(`as_probe`), in a run that records the study's own config.

    suites that need no model   the task's splits: in-distribution and validation-primitives
                                of the `--validation` file (the task's `data`), and
                                robustness-simple, integer-extrapolation and
                                operator-extrapolation (of the model's training max_ops), each
                                as many problems as the study's N gives (`problems`); the
                                first of them the probe's base suite
    suites of solved problems   `--derived` robustness-validation and compositionality, of
                                what the model solves (`--solved-by`)
    k                           the largest of `--k`, every candidate of the beam, the first
                                the answer (`--answer first`)
    search budget               the large search on robustness-simple's `simple_coeff1`
                                k1*{exp,sin,cos,tan}(k2*x) problems

Below the paper's sizes, a split's problems are the first of a seeded order of the paper-size
suite (as the probe reads every split), where the study's own builder drew N per cell; at the
paper's sizes both hold the same problems.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from genprobe.studies.brittleness.config import PRESETS, BrittlenessConfig
from genprobe.studies.probe.config import ProbeConfig, suite_key
from genprobe.tasks.integration.suites import DERIVED
from genprobe.under_test.settings import ENDPOINT

BASE_ORDER = ("validation-primitives", "in-distribution")  # the base suite, where asked
SEARCHED = {  # the problems of the large search (Welleck et al. 2022, section 6.1)
    "set": "simple_coeff1",
    "template": "k1*exp(k2*x)|k1*sin(k2*x)|k1*cos(k2*x)|k1*tan(k2*x)",
}


def model_free(config: BrittlenessConfig) -> list[str]:
    """The suites built before any model call, the base suite first: those asked for, and what
    the derived suites and the search budget are made from."""
    names = [s for s in config.suites if s not in DERIVED]
    if "compositionality" in config.suites or config.search_budget is not None:
        names.append("robustness-simple")
    if config.validation is not None and set(DERIVED) & set(config.suites):
        names.append("validation-primitives")
    names = list(dict.fromkeys(names))
    base = next((name for name in BASE_ORDER if name in names), names[0])
    return [base, *(name for name in names if name != base)]


def problems(config: BrittlenessConfig, suite: str, file_size: int | None = None) -> int:
    """How many problems the study's N of `suite` gives (`genprobe integration suite`'s
    reading of N): pairs per cell of the simple primitives, problems per operator set, the
    problems of the validation file (all of them, `file_size`, where N is more or not
    given), N of the suites made of solved problems (at most: fewer where few are solved)."""
    from genprobe.tasks.integration.suites.operators import set_names
    from genprobe.tasks.integration.suites.simple import coeff1_range_draws, simple_draws

    n = config.sizes.get(suite, PRESETS["paper"].sizes[suite])
    if suite == "robustness-simple":
        return len(simple_draws(n, config.seed))
    if suite == "integer-extrapolation":
        return sum(1 for _ in coeff1_range_draws(n, config.seed))
    if suite == "operator-extrapolation":
        return n * len(set_names(config.max_ops))
    if suite in BASE_ORDER and file_size is not None:
        return min(n, file_size) if suite in config.sizes else file_size
    return n


def as_probe(config: BrittlenessConfig) -> ProbeConfig:
    """The probe's config of the run (see the module's docstring); `config` validated, with its
    training max_ops resolved (`run._with_training`)."""
    from genprobe.tasks.integration.task import IntegrationTask

    options = {
        "max_ops": config.max_ops, "method": config.method, "deadline": config.deadline,
        "order": "cells",  # a small suite holds every set and template, as the study's N per cell
    }  # fmt: skip
    if config.validation is not None:
        options["data"] = str(Path(config.validation).absolute())
        options["data_split"] = config.split or ""
    task = IntegrationTask(**options)
    names = model_free(config)
    base, splits = names[0], names[1:]
    held = task.splits()
    sizes = {
        name: problems(config, name, held[name].size if name in BASE_ORDER else None)
        for name in names
    }
    derived = tuple(name for name in DERIVED if name in config.suites)
    key = {base: "base", **{name: suite_key("task", name) for name in splits}}
    sized = [(key[name], sizes[name]) for name in splits]
    sized += [(suite_key("derived", name), problems(config, name)) for name in derived]
    search = config.search_budget is not None
    # the study ignores the endpoint's settings for another kind of model, the probe refuses them
    ignored = {k: v for k, v in ENDPOINT.items() if k not in config.model.spec.kind.settings}
    model = replace(config.model, **ignored).with_beam(config.k_max)  # k candidates: a beam of k
    return ProbeConfig(
        model=model,
        task="integration",
        task_options=tuple(sorted(task.options().items())),
        families=(),
        relations=(),
        derived=derived,
        solved_by=config.solved_by,
        task_suites=False,
        splits=tuple(splits),
        base_split=base,
        size=sizes[base],
        suite_sizes=tuple(sorted(sized)),
        data_seed=config.seed,
        seed=config.seed,
        k=config.k_max,
        answer="first",
        search_budget=config.search_budget,
        search_temperatures=config.temperatures if search else (),
        search_suites=(key["robustness-simple"],) if search else (),
        search_where=tuple(SEARCHED.items()) if search else (),
        workers=config.workers,
        shard_size=config.shard_size,
    )


def study_suite(key: str, base: str) -> str:
    """The study's name of the probe's suite `key` (`base`: the base suite's split)."""
    if key == "base":
        return base
    return key.split("-", 1)[1]
