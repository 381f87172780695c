"""Our numbers beside the paper's, like with like: the same k, the paper's rule for a verifier
timeout (it passes: our `generous` policy), and the paper's beam (`paper.BEAMS`: 10 for Fail@1
and Fail@10, 50 for Fail@50).

A run decodes one beam of max(beam, max(k)) for every k, so its Fail@1 and Fail@10 come from a
beam of 50 when k goes to 50; a paper cell whose beam differs from the run's is marked, and the
note under the table says why. A paper k the run did not compute is left out, and said so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from genprobe.studies.brittleness import paper, tables
from genprobe.under_test.registry import ModelSpec

PAPER_POLICY = "generous"  # the paper counted a verifier timeout as correct
MARK = "†"  # on a paper cell whose beam is not the run's


@dataclass(frozen=True)
class Beside:
    """What a run's Fail@k are, to set beside the paper's."""

    ks: tuple[int, ...]
    policy: str  # of the tables' own Fail@k
    beam: int | None  # the beam every k's candidates came from; None: not a beam search
    search: str  # how the candidates were found, in words

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Beside:
        """From a run's recorded config."""
        ks, policy = tuple(config["ks"]), config["policy"]
        model = config["model"]
        decoding = model["decoding"]
        if not ModelSpec.read(model["spec"]).kind.seq2seq:
            return cls(ks, policy, None, "its own answers, up to k per problem")
        if decoding["method"] != "beam":
            return cls(ks, policy, None, f"{decoding['method']} decoding")
        beam = max(decoding["beam_size"], max(ks))
        return cls(ks, policy, beam, f"one beam search of width {beam} for every k")

    def shared(self, paper_ks: Sequence[int]) -> list[int]:
        """The k both the run and the paper's table have, ascending."""
        return sorted(set(self.ks) & set(paper_ks))

    def marked(self, k: int) -> bool:
        """Whether the paper's Fail@k came from another beam than the run's."""
        return self.beam != paper.BEAMS[k]


def paper_columns(
    problems: pd.DataFrame,
    by: Sequence[str],
    beside: Beside,
    numbers: Mapping[Any, Sequence[float]],
    paper_ks: Sequence[int],
) -> tuple[pd.DataFrame, set[str]]:
    """For each k of `beside.shared(paper_ks)`: our Fail@k under the paper's rule (when the
    tables' policy is another: `generous Fail@k`) and the paper's (`paper Fail@k`), one row per
    group of `by` in `tables.fail_table`'s order, and the columns to mark.

    Args:
        numbers: a group (the value of `by`, a tuple for several columns) -> the paper's
            Fail@k in the order of `paper_ks`; a group the paper does not have is NaN.
    """
    shared = beside.shared(paper_ks)
    ours = tables.fail_table(problems, by, shared or [1], PAPER_POLICY)
    groups = [tuple(row) if len(by) > 1 else row[0] for row in ours[list(by)].to_numpy()]
    out = pd.DataFrame(index=ours.index)
    marked = set()
    for k in shared:
        if beside.policy != PAPER_POLICY:
            out[f"generous Fail@{k}"] = ours[f"Fail@{k}"]
        column = f"paper Fail@{k}"
        position = list(paper_ks).index(k)
        out[column] = [numbers[g][position] if g in numbers else float("nan") for g in groups]
        if beside.marked(k):
            marked.add(column)
    return out, marked


def notes(beside: Beside, paper_ks: Sequence[int]) -> list[str]:
    """What a table beside the paper's leaves out, and why its marked cells are marked."""
    out = []
    missing = sorted(set(paper_ks) - set(beside.ks))
    if missing:
        out.append(
            f"The paper's {_fail_at(missing)} {'is' if len(missing) == 1 else 'are'} left out: "
            f"this run has no k = {', '.join(map(str, missing))}."
        )
    marked = [k for k in beside.shared(paper_ks) if beside.marked(k)]
    if marked:
        beams = " and ".join(
            f"{_fail_at([k for k in marked if paper.BEAMS[k] == beam])} from a beam of {beam}"
            for beam in sorted({paper.BEAMS[k] for k in marked})
        )
        ours = (
            f"ours from one beam of {beside.beam} for every k (a beam of another width can rank "
            "its first candidates differently)"
            if beside.beam is not None
            else f"this model's candidates are {beside.search}"
        )
        out.append(f"{MARK} The paper's {beams}; {ours}.")
    return out


def _fail_at(ks: Sequence[int]) -> str:
    return ", ".join(f"Fail@{k}" for k in ks)
