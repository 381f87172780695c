"""Few-shot examples: k examples of a task's training split per draw, never the test input."""

from __future__ import annotations

import numpy as np

from genprobe.errors import ConfigError
from genprobe.options import is_integer
from genprobe.tasks.row_edits import trim
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import Examples, Task

POOL = 512  # the first training examples of the data seed that draws choose from


def shot_pool(task: Task, seed: int) -> Examples:
    """The distinct inputs among the first `POOL` examples of the training split (data seed
    `seed`), in the split's order."""
    split = task.train_split
    examples = task.generate(split, min(task.split_spec(split).size, POOL), seed)
    _, first = np.unique(examples.src, axis=0, return_index=True)
    keep = np.sort(first)
    return Examples(examples.src[keep], examples.tgt[keep])


def check_shots(task: Task, k: int, seed: int) -> Examples:
    """`shot_pool(task, seed)`, which `k` shots per prompt must leave an input to spare.

    Raises:
        ConfigError: k is not an integer in 0..len(pool) - 1.
    """
    pool = shot_pool(task, seed)
    if not is_integer(k) or not 0 <= k < len(pool):
        expected = f"an integer in 0..{len(pool) - 1} (distinct training inputs available)"
        raise ConfigError("shots", expected, k)
    return pool


def draw_shots(task: Task, k: int, draw: int, seed: int, src: np.ndarray) -> list[Examples]:
    """For each of the (n, L) test inputs, `k` examples for few-shot draw `draw`: the same k
    for every input, drawn from `shot_pool(task, seed)` by (seed, draw), in the order drawn,
    except that an input equal to the test input is skipped for the next one drawn.

    Raises:
        ConfigError: k or draw is not an integer >= 0, or k is not below the pool's size.
    """
    pool = check_shots(task, k, seed)
    if not is_integer(draw) or draw < 0:
        raise ConfigError("shot draw", "an integer >= 0", draw)
    order = split_stream(seed, "shots", draw).permutation(len(pool))[: k + 1]
    src = np.asarray(src)
    width = max(pool.src.shape[1], src.shape[1])
    drawn, tests = (np.pad(a, ((0, 0), (0, width - a.shape[1]))) for a in (pool.src[order], src))
    same = (drawn[None, :, :] == tests[:, None, :]).all(axis=2)  # (n, k + 1)
    chosen = [order[~row][:k] for row in same]
    return [Examples(trim(pool.src[rows], 0), trim(pool.tgt[rows], -1)) for rows in chosen]
