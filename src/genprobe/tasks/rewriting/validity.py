"""The validity rule (the paper's accuracy), vectorized over many sequences.

An output is valid for an input of n symbols iff it has exactly k·n tokens (k letters per
group), the i-th group of k tokens all carry the id of the i-th input symbol, and the group holds
each letter exactly once; variants are free. End-of-sequence is not counted. Any other token
(special, junk, another grammar's) makes the output invalid; it never raises.
"""

from __future__ import annotations

import numpy as np

from genprobe.tasks.rewriting.grammar import Grammar


def valid_outputs(
    grammar: Grammar, src: np.ndarray, out: np.ndarray, out_len: np.ndarray
) -> np.ndarray:
    """Judge many outputs at once.

    Args:
        grammar: the grammar that defines ids and letters.
        src: (n, L) 1-based input symbol ids, 0 = padding.
        out: (n, M) output token indices, any negative value = not an output token.
        out_len: (n,) number of output tokens before the end of sequence.

    Returns:
        (n,) bool, True where the output is valid.
    """
    k = grammar.group_size
    n, width = src.shape
    src_len = (src > 0).sum(axis=1)
    expected_len = k * src_len
    # Outputs longer than k·L are invalid for every row; compare only the first k·L tokens.
    tokens = np.full((n, k * width), -1, dtype=np.int64)
    keep = min(out.shape[1], k * width)
    tokens[:, :keep] = out[:, :keep]
    tokens[np.arange(k * width)[None, :] >= expected_len[:, None]] = -1  # ignore beyond the rule

    known = (tokens >= 0) & (tokens < len(grammar.output_tokens))
    ids, letters = grammar.token_parts(np.where(known, tokens, 0))
    in_rule = np.arange(k * width)[None, :] < expected_len[:, None]
    ids_ok = (known & (ids == np.repeat(src, k, axis=1))) | ~in_rule
    groups = np.where(in_rule, letters, np.arange(k * width) % k).reshape(n, width, k)
    letters_ok = (np.sort(groups, axis=2) == np.arange(k)).all(axis=(1, 2))
    return (out_len == expected_len) & ids_ok.all(axis=1) & letters_ok
