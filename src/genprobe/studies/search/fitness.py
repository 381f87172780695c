"""How much a failure search wants an input: how badly it is failed, weighted by its printed
text. Both searches score this way: SAGGA's failure is 1 or 0 (its one model failed the
problem or not); the generic search's is its target's score over the members
(`failure_score`: most, any or disagree). Every fitness is zero where the failure score is;
inputs scoring at least tau are archived (SAGGA's: when novel) and can be parents of the next
generation. `s` is the printed input:

    length_penalty       failed / len(s)            short failures first
    trig_length_penalty  as above, 0 unless s holds sin, cos or tan
    target_length        failed / (|len(s) - L| + 1)  failures of about L characters
    target_problems      failed * max cosine similarity to the target inputs' embeddings
    any_failure          failed                      every failure alike

Example:
    fitness = make_fitness("length_penalty")
    fitness(["2*x", "sin(x)"], np.array([True, False]))  ->  [0.333, 0.0]
    fitness(["2*x", "sin(x)"], np.array([0.5, 1.0]))     ->  [0.167, 0.167]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from genprobe.errors import ConfigError, DataFormatError, check_choice
from genprobe.studies.search.embedding import Embedder, make_embedder
from genprobe.tasks.lines import some_rows

# (texts, failure score: (N,) bool, or float in [0, 1]) -> (N,) fitness
Fitness = Callable[[Sequence[str], np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Target:
    """An input's fitness (`generation.fitness`): `most`, the share of members failing it;
    `any`, 1 if one fails it; `disagree`, the share of members `right` that get it right less
    the share of members `wrong` that do, or 0 if that is negative (for one member each: 1 if
    the first is right and the second is not)."""

    how: str
    right: tuple[int, ...] = ()  # member positions
    wrong: tuple[int, ...] = ()


def failure_score(failed: np.ndarray, target: Target) -> np.ndarray:
    """(N,) the generic search's failure score of inputs from (S, N) bool: member s failed
    input n (`Target`)."""
    if target.how == "disagree":
        wrong, right = failed[list(target.wrong)], failed[list(target.right)]
        return np.maximum(0.0, wrong.mean(axis=0) - right.mean(axis=0))
    if target.how == "any":
        return failed.any(axis=0).astype(float)
    return failed.mean(axis=0)


def _lengths(texts: Sequence[str]) -> np.ndarray:
    return np.array([len(t) for t in texts], dtype=float)


def length_penalty(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
    return failed / _lengths(texts)


def trig_length_penalty(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
    trig = np.array([any(f in t for f in ("sin", "cos", "tan")) for t in texts], dtype=bool)
    return length_penalty(texts, failed * trig)


def any_failure(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
    return failed.astype(float)


def near_length(length: int) -> Fitness:
    def fitness(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
        return failed / (np.abs(_lengths(texts) - length) + 1)

    return fitness


def target_problems(embedder: Embedder, targets: Sequence[str]) -> Fitness:
    reference = embedder.embed(targets)  # embedded once, not per call as in the original

    def fitness(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
        if not len(texts):
            return np.zeros(0)
        similarity = (embedder.embed(texts) @ reference.T).max(axis=1)
        return failed * similarity.astype(float)

    return fitness


SIMPLE: dict[str, Fitness] = {
    "length_penalty": length_penalty,
    "trig_length_penalty": trig_length_penalty,
    "any_failure": any_failure,
}
NAMES = (*SIMPLE, "target_length", "target_problems")


def make_fitness(
    name: str, *, length: int | None = None, targets: Sequence[str] = (), embedding: str = "char"
) -> Fitness:
    """The fitness called `name`: `target_problems` compares with `targets` by the embedder
    `embedding` names (`embedding.make_embedder`), made here and only for it.

    Raises:
        ConfigError: an unknown name, or a setting it needs is missing.
    """
    check_choice("--fitness", name, NAMES)
    if name in SIMPLE:
        return SIMPLE[name]
    if name == "target_length":
        if length is None or length < 1:
            raise ConfigError("--target-length", "a positive length for target_length", length)
        return near_length(length)
    if not targets:
        raise ConfigError("--targets", "target problems for target_problems", None)
    return target_problems(make_embedder(embedding), targets)


def read_target_texts(path: str | Path) -> list[str]:
    """The target inputs of a user file for the generic search's `target_problems`: one per
    line as the task prints them (`Probes.input_text`), blank lines skipped. They are embedded,
    never parsed.

    Raises:
        DataFormatError: the file cannot be read or holds no input.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(path, None, f"cannot be read ({error})") from None
    return some_rows(path, [line.strip() for line in lines if line.strip()])
