"""The binary-operation tables of grokking: x ∘ y = z modulo a prime p.

After Power, Burda, Edwards, Babuschkin & Misra (2022), "Grokking: Generalization beyond
overfitting on small algorithmic datasets" (arXiv 2201.02177): a small transformer trained on a
fraction of the p² equations of one operation first memorizes them and, long after, with weight
decay, generalizes to the rest. The operations and equation sets are those of the authors' code
(openai/grok, `grok/data.py`, `ArithmeticDataset`), which fixes p = 97: every pair x, y in 0..p-1,
except y = 0 for x/y (division is multiplication by y's inverse mod p, so p must be prime there
and for "x/y if y odd else x-y"). The table is listed in grok's order (for x/y: by quotient, then
divisor) and shuffled with numpy's `RandomState(seed)`, as grok shuffles it with seed 0; the
first round(train_fraction · N) equations train, the rest are held out. So data seed 0 gives
grok's own split, equation for equation. The input is Nanda et al.'s (2023) three tokens
`x y =` (grok writes `x ∘ y =`); the output is z. The S5 permutation tasks and grok's unary
list tasks (sort, reverse, copy) are left out.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.errors import ConfigError, check_choice
from genprobe.options import is_integer
from genprobe.tasks.task import NO_ANSWER, DeterministicTask, Examples, Split

MAX_P = 1_000  # a table of p² equations: a million at most


def _inverse(y: np.ndarray, p: int) -> np.ndarray:
    """y's inverse mod a prime p (0 for y = 0, which no equation divides by)."""
    return np.array([0, *(pow(v, -1, p) for v in range(1, p))])[y]


def _divided(x: np.ndarray, y: np.ndarray, p: int) -> np.ndarray:
    return x * _inverse(y, p) % p


# Each operation by its readable name; grok's name for it in the comment.
OPERATIONS: dict[str, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    "x+y": lambda x, y, p: (x + y) % p,  # +
    "x-y": lambda x, y, p: (x - y) % p,  # -
    "x*y": lambda x, y, p: x * y % p,  # *
    "x/y": _divided,  # /
    "x^2+y": lambda x, y, p: (x**2 + y) % p,  # **2+
    "x^3+y": lambda x, y, p: (x**3 + y) % p,  # **3+
    "x^2+y^2": lambda x, y, p: (x**2 + y**2) % p,  # x**2+y**2_mod_97
    "x^2+xy+y^2": lambda x, y, p: (x**2 + y**2 + x * y) % p,  # x**2+y**2+x*y_mod_97
    "x^2+xy+y^2+x": lambda x, y, p: (x**2 + y**2 + x * y + x) % p,  # x**2+y**2+x*y+x_mod_97
    "x^3+xy": lambda x, y, p: (x**3 + x * y) % p,  # x**3+x*y_mod_97
    "x^3+xy^2+y": lambda x, y, p: (x**3 + x * y**2 + y) % p,  # x**3+x*y**2+y_mod_97
    # (x._value//y)if(y._value%2==1)else(x-y)_mod_97: `//` of grok's Mod divides mod p
    "x/y if y odd else x-y": lambda x, y, p: np.where(y % 2, _divided(x, y, p), (x - y) % p),
    "x+y if x even else x*y": lambda x, y, p: np.where(x % 2, x * y, x + y) % p,  # +*
    "x+y if x even else x-y": lambda x, y, p: np.where(x % 2, x - y, x + y) % p,  # +-
}
DIVIDING = ("x/y", "x/y if y odd else x-y")
COMMUTATIVE = ("x+y", "x*y", "x^2+y^2", "x^2+xy+y^2")  # x ∘ y = y ∘ x for every x, y


@dataclass(frozen=True)
class BinaryOperation(DeterministicTask):
    """One binary operation's table modulo p, trained on a fraction and tested on the rest.

    Input `x y =`, output z = x ∘ y mod p (x, y and z are tokens 0..p-1). Splits: `train`,
    the first round(train_fraction · N) of the table's N equations shuffled by the data seed,
    and `held_out`, the rest (validation and the suite, as in the paper).

    Examples:
        5 96 =   -> 4    (5 + 96 = 101 = 97 + 4)
        40 2 =   -> 42   (40 + 2)
    """

    operation: str = "x+y"  # x+y, x-y, x*y, x/y, x^2+y^2, ... (OPERATIONS)
    p: int = 97  # the modulus; prime for the operations that divide
    train_fraction: float = 0.5  # of the table's equations, for training

    validation_split = "held_out"

    def __post_init__(self) -> None:
        check_choice("operation", self.operation, OPERATIONS)
        if not is_integer(self.p) or not 2 <= self.p <= MAX_P:
            raise ConfigError("p", f"an integer in 2..{MAX_P}", self.p)
        if self.operation in DIVIDING and not _prime(self.p):
            raise ConfigError("p", f"a prime for operation {self.operation}", self.p)
        fraction = self.train_fraction
        if not isinstance(fraction, numbers.Real) or isinstance(fraction, bool):
            raise ConfigError("train_fraction", "a number between 0 and 1", fraction)
        if not 0 < fraction < 1 or not 0 < self._train_size() < self.equations:
            leaving = f"leaving both splits of the {self.equations:,} equations non-empty"
            raise ConfigError("train_fraction", f"between 0 and 1, {leaving}", fraction)

    @property
    def equations(self) -> int:
        """N: how many equations the table has."""
        return self.p * (self.p - 1 if self.operation == "x/y" else self.p)

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return (*self.target_vocab, "=")

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return tuple(str(v) for v in range(self.p))

    def splits(self) -> Mapping[str, Split]:
        table = f"the {self.equations:,} equations z = {self.operation} mod {self.p}"
        train, held_out = self._train_size(), self.equations - self._train_size()
        first = f"the first {train:,} of {table}, shuffled by the data seed (0: grok's order)"
        return {
            "train": Split(first, (3, 3), train, True),
            "held_out": Split(f"the other {held_out:,} of {table}", (3, 3), held_out, True, True),
        }

    def suites(self) -> tuple[str, ...]:
        return ("held_out",)

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        x, y = self._table()
        order = np.random.RandomState(seed).permutation(len(x))  # grok's shuffle
        cut = self._train_size()
        chosen = (order[:cut] if split == "train" else order[cut:])[:n]
        src = np.stack([x[chosen] + 1, y[chosen] + 1, np.full(n, self.p + 1)], axis=1)
        return Examples(src, self.solve(src))

    def solve(self, src: np.ndarray) -> np.ndarray:
        src = np.asarray(src)
        src = np.pad(src, ((0, 0), (0, max(0, 3 - src.shape[1]))))
        x, y = src[:, 0] - 1, src[:, 1] - 1
        ok = (x >= 0) & (x < self.p) & (y >= 0) & (y < self.p) & (src[:, 2] == self.p + 1)
        ok &= (src[:, 3:] == 0).all(axis=1)
        if self.operation == "x/y":
            ok &= y != 0
        z = OPERATIONS[self.operation](np.where(ok, x, 0), np.where(ok, y, 1), self.p)
        return np.where(ok, z, NO_ANSWER)[:, None]

    def max_output_length(self, input_length: int) -> int:
        return 1

    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of every equation, in grok's order: by x, then y; for x/y by the quotient z,
        then the divisor y != 0 (grok lists z / y's dividend x = y · z)."""
        first, second = np.divmod(np.arange(self.p * self.p), self.p)
        if self.operation != "x/y":
            return first, second
        keep = second != 0
        return first[keep] * second[keep] % self.p, second[keep]

    def _train_size(self) -> int:
        return round(self.equations * self.train_fraction)


def _prime(p: int) -> bool:
    return p >= 2 and all(p % d for d in range(2, math.isqrt(p) + 1))
