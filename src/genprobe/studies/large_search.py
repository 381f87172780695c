"""A large search (Welleck et al. 2022, section 6.1): for every member and input, a beam of B
candidates and, at each temperature, the distinct outputs among B samples, every distinct
answer judged once however many decodings found it. A failure of the ordinary search that the
large one fixes is a search error; one where no right output is found, or the right ones sit
far below the top candidate, is the model's. `integration brittleness --search-budget` and
`probe --search-budget` run it; `analysis/large_search.py` reads its rows.

Example:
    rows = large_search(model, src, budget=500, temperatures=(0.6, 1.0), seed=0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from genprobe.tasks.tokens import output_lines
from genprobe.under_test.sequences import CandidateJudge, Ranked, SequenceModel, output_keys

BEAM = "beam"


def large_search(
    model: SequenceModel,
    src: np.ndarray,
    budget: int,
    temperatures: Sequence[float],
    seed: int,
    judge_of: Callable[[Ranked], CandidateJudge] | None = None,
) -> pd.DataFrame:
    """The rows of a large search of inputs src (N, L) (`searched_rows`): `searched`, every
    distinct answer judged once (`judged_once`) by `judge_of` (default: the task's verifier,
    `Ranked.judge_of`)."""
    found = searched(model, src, budget, temperatures, seed)
    judge_of = judge_of or (lambda joined: joined.judge_of(model.task, src))
    return searched_rows(found, judged_once(found, judge_of), model.task.target_vocab)


def searched(
    model: SequenceModel,
    src: np.ndarray,
    budget: int,
    temperatures: Sequence[float],
    seed: int,
) -> dict[str, Ranked]:
    """Decoding name -> every member's candidates for inputs src (N, L): the beam of width
    `budget` ("beam"), then the distinct outputs among `budget` samples at each temperature
    ("T=0.6", ...; `SequenceModel.sampled`, seeded by `seed` and each input's ids)."""
    found = {BEAM: model.candidates(src, budget)}
    for temperature in temperatures:
        found[f"T={temperature:g}"] = model.sampled(src, budget, temperature, seed)
    return found


def judged_once(
    found: Mapping[str, Ranked], judge_of: Callable[[Ranked], CandidateJudge]
) -> dict[str, np.ndarray]:
    """Decoding name -> (S, N, k) the judgement of each of its candidates (None where there is
    none): every decoding's candidates side by side (`Ranked.joined`), and every distinct
    answer of a member and input (its text where the model gives text, else its ids, length
    and whether it ended: `output_keys`) judged once, all in one call of `judge_of(joined)`."""
    parts = list(found.values())
    joined = parts[0].joined(*parts[1:])
    members, n, k = joined.score.shape
    present = joined.present.reshape(-1)
    if joined.text is not None:
        answer = pd.factorize(joined.text.reshape(-1))[0][:, None]
    else:
        answer = output_keys(joined.out, joined.length, joined.finished)
    pair = np.repeat(np.arange(members * n), k)
    keys = np.column_stack([pair, present, answer])
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    asked = present[first]
    judgements = np.full(len(first), None, dtype=object)
    if asked.any():
        values = np.empty(int(asked.sum()), dtype=object)
        values[:] = judge_of(joined)(*np.unravel_index(first[asked], (members, n, k)))
        judgements[asked] = values
    every = judgements[inverse.reshape(-1)].reshape(members, n, k)
    ends = np.cumsum([part.score.shape[2] for part in parts])[:-1]
    return dict(zip(found, np.split(every, ends, axis=2), strict=True))


def searched_rows(
    found: Mapping[str, Ranked], judged: Mapping[str, np.ndarray], target_vocab: Sequence[str]
) -> pd.DataFrame:
    """One row per candidate found: member and input (positions), decoding, rank (1-based,
    within its decoding), answer (as the model gave it, else in the task's output tokens),
    logprob, judgement; by member, input, then decoding and rank."""
    frames = []
    for name, ranked in found.items():
        member, row, rank = np.nonzero(ranked.present)
        if ranked.text is not None:
            answer = ranked.text[member, row, rank]
        else:
            answer = output_lines(target_vocab, ranked.out[member, row, rank])
        frames.append(
            pd.DataFrame(
                {
                    "member": member,
                    "input": row,
                    "decoding": name,
                    "rank": rank + 1,
                    "answer": answer,
                    "logprob": ranked.logprob[member, row, rank],
                    "judgement": judged[name][member, row, rank],
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    return frame.sort_values(["member", "input"], kind="stable", ignore_index=True)
