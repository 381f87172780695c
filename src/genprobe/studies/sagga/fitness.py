"""How much the search wants a problem: SAGGA's fitness functions, all zero on a success.

A fitness maps the generation's printed problems and which of them the model failed to a
score per problem; problems scoring at least tau are archived (when novel) and can seed the
next generation. `s` is the printed problem:

    length_penalty       failed / len(s)            short failures first
    trig_length_penalty  as above, 0 unless s holds sin, cos or tan
    target_length        failed / (|len(s) - L| + 1)  failures of about L characters
    target_problems      failed * max cosine similarity to the target problems' embeddings
    any_failure          failed                      every failure alike

Example:
    fitness = make_fitness("length_penalty")
    fitness(["2*x", "sin(x)"], np.array([True, False]))  ->  [0.333, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from genprobe.errors import ConfigError, check_choice
from genprobe.studies.search.embedding import Embedder

Fitness = Callable[[Sequence[str], np.ndarray], np.ndarray]


def _lengths(texts: Sequence[str]) -> np.ndarray:
    return np.array([len(t) for t in texts], dtype=float)


def length_penalty(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
    return failed / _lengths(texts)


def trig_length_penalty(texts: Sequence[str], failed: np.ndarray) -> np.ndarray:
    trig = np.array([any(f in t for f in ("sin", "cos", "tan")) for t in texts], dtype=bool)
    return length_penalty(texts, failed & trig)


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
    name: str,
    *,
    length: int | None = None,
    embedder: Embedder | None = None,
    targets: Sequence[str] = (),
) -> Fitness:
    """The fitness called `name`.

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
    if embedder is None or not targets:
        raise ConfigError("--targets", "target problems for target_problems", None)
    return target_problems(embedder, targets)
