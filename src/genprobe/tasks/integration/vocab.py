"""Lample & Charton's 91-token integration vocabulary, in their exact id order.

The order is what ties a checkpoint to its data: their released models only store embedding
matrices of shape [91, dim], so a token at a different id silently means something else.
`<s>` (id 0) is both BOS and EOS, `</s>` (id 1) is padding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from genprobe.errors import ParseError

SPECIAL_TOKENS = ("<s>", "</s>", "<pad>", "(", ")", *(f"<SPECIAL_{i}>" for i in range(5, 10)))
CONSTANT_TOKENS = ("pi", "E")
VARIABLE_TOKENS = ("x", "y", "z", "t")
COEFFICIENT_TOKENS = tuple(f"a{i}" for i in range(10))
# all 44 operators of their environment, sorted by name; the integration data uses a subset
OPERATOR_TOKENS = (
    "abs", "acos", "acosh", "acot", "acoth", "acsc", "acsch", "add", "asec", "asech", "asin",
    "asinh", "atan", "atanh", "cos", "cosh", "cot", "coth", "csc", "csch", "derivative", "div",
    "exp", "f", "g", "h", "inv", "ln", "mul", "pow", "pow2", "pow3", "pow4", "pow5", "rac",
    "sec", "sech", "sign", "sin", "sinh", "sqrt", "sub", "tan", "tanh",
)  # fmt: skip
SYMBOL_TOKENS = ("I", "INT+", "INT-", "INT", "FLOAT", "-", ".", "10^", "Y", "Y'", "Y''")
DIGIT_TOKENS = tuple(str(d) for d in range(10))

VOCAB: tuple[str, ...] = (
    SPECIAL_TOKENS
    + CONSTANT_TOKENS
    + VARIABLE_TOKENS
    + COEFFICIENT_TOKENS
    + OPERATOR_TOKENS
    + SYMBOL_TOKENS
    + DIGIT_TOKENS
)
TOKEN_TO_ID: dict[str, int] = {token: index for index, token in enumerate(VOCAB)}
EOS_INDEX = TOKEN_TO_ID["<s>"]
PAD_INDEX = TOKEN_TO_ID["</s>"]


def encode_tokens(tokens: Iterable[str]) -> list[int]:
    """Token ids for `tokens`. Unlike the original collate function, an unknown token is an
    error, not silently dropped.

    Raises:
        ParseError: a token is not in `VOCAB`.
    """
    ids = []
    for position, token in enumerate(tokens):
        index = TOKEN_TO_ID.get(token)
        if index is None:
            raise ParseError(f"token {position} ({token!r}) is not in the vocabulary")
        ids.append(index)
    return ids


def decode_ids(ids: Sequence[int]) -> list[str]:
    """Tokens for ids. Raises ParseError for an id outside 0..90."""
    tokens = []
    for position, index in enumerate(ids):
        if not 0 <= index < len(VOCAB):
            raise ParseError(f"id {position} ({index}) is outside 0..{len(VOCAB) - 1}")
        tokens.append(VOCAB[index])
    return tokens
