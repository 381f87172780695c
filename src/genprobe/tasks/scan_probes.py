"""What SCAN declares for the probe studies: perturbation families that move a command within
the grammar, the relation "x twice" = "x and x", the compositions `S1 and S2` and `S1 after
S2` of two one-sentence commands, and readable features."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from genprobe.tasks.probing import Composition, Family, Perturbed, Probes, Relation
from genprobe.tasks.row_edits import appended, inserted
from genprobe.tasks.scan import PRIMITIVES, WORDS, Scan, sentences

ID = {word: i for i, word in enumerate(WORDS, start=1)}
PRIMITIVE_IDS = np.array([ID[word] for word in PRIMITIVES])
MODIFIER_IDS = np.array([ID["twice"], ID["thrice"]])
CONJUNCTION_IDS = np.array([ID["and"], ID["after"]])


@dataclass(frozen=True)
class ScanProbes(Probes):
    task: Scan

    def families(self) -> Mapping[str, Family]:
        return {
            "swap_primitive": Family(
                "one primitive (walk, look, run, jump) replaced by another wherever it occurs",
                partial(_swap_primitive, self),
            ),
            "add_modifier": Family(
                "a sentence without twice/thrice gets one of them", partial(_add_modifier, self)
            ),
            "lengthen_conjunction": Family(
                "a one-sentence command gets `and S` or `after S`, S a sentence of the grammar",
                partial(_lengthen_conjunction, self),
            ),
        }

    def relations(self) -> Mapping[str, Relation]:
        return {
            "and_is_after": Relation(
                "`S1 and S2` and `S2 after S1` mean the same actions (two-sentence commands; "
                "`S1 after S2` is paired with `S2 and S1`)",
                lambda src, rng: _conjunction_turned(self, src),
            ),
            "twice_is_and": Relation(
                "`x twice` and `x and x` mean the same actions (one-sentence commands ending in "
                "twice)",
                lambda src, rng: _twice_as_and(self, src),
            ),
        }

    def compositions(self) -> Mapping[str, Composition]:
        return {
            conjunction: Composition(
                f"two one-sentence commands S1, S2 joined as `S1 {conjunction} S2`",
                2,
                partial(_one_sentence, self),
                partial(_joined, self, conjunction=ID[conjunction]),
            )
            for conjunction in ("and", "after")
        }

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The default's (length: actions; a count per word, `count and` among them), and
        input words, sentences (1 or 2) and twice/thrice modifiers per command."""
        src = np.asarray(src)
        return {
            **super().features(src),
            "words": (src > 0).sum(axis=1),
            "sentences": 1 + np.isin(src, CONJUNCTION_IDS).sum(axis=1),
            "modifiers": np.isin(src, MODIFIER_IDS).sum(axis=1),
        }


def _swap_primitive(probes: ScanProbes, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    src = np.asarray(src)
    present = (src[:, :, None] == PRIMITIVE_IDS).any(axis=1) & probes.valid_inputs(src)[:, None]
    rows = np.flatnonzero(present.any(axis=1))
    old = np.argmax(np.where(present[rows], rng.random((len(rows), len(PRIMITIVE_IDS))), -1), 1)
    new = (old + rng.integers(1, len(PRIMITIVE_IDS), size=len(rows))) % len(PRIMITIVE_IDS)
    moved = np.where(
        src[rows] == PRIMITIVE_IDS[old][:, None], PRIMITIVE_IDS[new][:, None], src[rows]
    )
    return Perturbed(moved, rows)


def _add_modifier(probes: ScanProbes, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    src = np.asarray(src)
    after = np.pad(src[:, 1:], ((0, 0), (0, 1)))
    # A sentence ends before a conjunction or at the end; a bare one has no modifier there.
    ends = (src > 0) & ((after == 0) | np.isin(after, CONJUNCTION_IDS))
    bare = ends & ~np.isin(src, MODIFIER_IDS) & probes.valid_inputs(src)[:, None]
    rows = np.flatnonzero(bare.any(axis=1))
    end = np.argmax(np.where(bare[rows], rng.random((len(rows), src.shape[1])), -1), axis=1)
    modifier = MODIFIER_IDS[rng.integers(0, len(MODIFIER_IDS), size=len(rows))]
    return Perturbed(inserted(src[rows], end + 1, modifier), rows)


def _lengthen_conjunction(
    probes: ScanProbes, src: np.ndarray, rng: np.random.Generator
) -> Perturbed:
    src = np.asarray(src)
    single = ~np.isin(src, CONJUNCTION_IDS).any(axis=1) & probes.valid_inputs(src)
    rows = np.flatnonzero(single)
    drawn = sentences()[rng.integers(0, len(sentences()), size=len(rows))]
    conjunction = CONJUNCTION_IDS[rng.integers(0, len(CONJUNCTION_IDS), size=len(rows))]
    return Perturbed(appended(src[rows], np.column_stack([conjunction, drawn])), rows)


def _conjunction_turned(probes: ScanProbes, src: np.ndarray) -> Perturbed:
    src = np.asarray(src)
    conjunction = np.isin(src, CONJUNCTION_IDS)
    rows = np.flatnonzero(conjunction.any(axis=1) & probes.valid_inputs(src))
    src = src[rows]
    length = (src > 0).sum(axis=1)[:, None]
    at = np.argmax(conjunction[rows], axis=1)[:, None]  # S1 is src[:at], S2 src[at + 1:]
    column = np.arange(src.shape[1])[None, :]
    second = length - at - 1  # S2's words, which now come first
    source = np.where(column < second, column + at + 1, column - second - 1)
    turned = np.take_along_axis(src, np.clip(source, 0, src.shape[1] - 1), axis=1)
    other = CONJUNCTION_IDS.sum() - src[np.arange(len(src)), at[:, 0]]  # and <-> after
    turned = np.where(column == second, other[:, None], turned)
    return Perturbed(np.where(column < length, turned, 0), rows)


def _twice_as_and(probes: ScanProbes, src: np.ndarray) -> Perturbed:
    src = np.asarray(src)
    length = (src > 0).sum(axis=1)
    last = src[np.arange(len(src)), np.maximum(length - 1, 0)]
    single = ~np.isin(src, CONJUNCTION_IDS).any(axis=1)
    rows = np.flatnonzero(single & (last == ID["twice"]) & probes.valid_inputs(src))
    once = np.where(np.arange(src.shape[1]) < length[rows, None] - 1, src[rows], 0)
    tail = np.column_stack([np.full(len(rows), ID["and"]), once])
    return Perturbed(appended(once, tail), rows)


def _one_sentence(probes: ScanProbes, src: np.ndarray) -> np.ndarray:
    return ~np.isin(src, CONJUNCTION_IDS).any(axis=1) & probes.valid_inputs(src)


def _joined(probes: ScanProbes, parts: Sequence[np.ndarray], conjunction: int) -> Perturbed:
    first, second = (np.asarray(part) for part in parts)
    rows = np.flatnonzero(_one_sentence(probes, first) & _one_sentence(probes, second))
    tail = np.column_stack([np.full(len(rows), conjunction), second[rows]])
    return Perturbed(appended(first[rows], tail), rows)
