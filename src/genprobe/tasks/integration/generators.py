"""Integration data as Lample & Charton make it: FWD, BWD and IBP pairs (integrand, primitive).

- FWD: draw f, integrate it with SymPy's Risch algorithm, keep elementary results.
- BWD: draw F, differentiate it (simplified half the time), keep (F', F).
- IBP: draw F and G; if a primitive of f·G (or F·g) is already known, integration by parts gives
  one of F·g (or f·G). Known primitives come from a cache that grows with every attempt.

One attempt is one call of `attempt(shared, (seed, index))` in a pool worker with a hard
deadline; its randomness comes only from (seed, index), so the data does not depend on the
number of workers or their scheduling (timeouts are budgets of CPU time, not of wall clock).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from genprobe.errors import ConfigError, GenprobeError, check_choice
from genprobe.tasks.integration import canonical, factoring, terms
from genprobe.tasks.integration.derivative import derivative
from genprobe.tasks.integration.expression import Expr, X, from_sympy, to_sympy
from genprobe.tasks.integration.prefix import PROBLEM_PREFIX, from_prefix, to_prefix
from genprobe.tasks.integration.random_trees import TreeSettings, random_expression
from genprobe.tasks.integration.vocab import OPERATOR_TOKENS

METHODS = ("fwd", "bwd", "ibp")
ENGINES = ("fast", "sympy")
# Lample & Charton's per-sample time limits, in seconds
DEFAULT_DEADLINES = {"fwd": 3.0, "bwd": 5.0, "ibp": 8.0}
# a FWD primitive containing any of these is not elementary in the vocabulary's sense
SPECIAL_FUNCTIONS = (
    sp.erf, sp.erfc, sp.erfi, sp.erfinv, sp.erfcinv, sp.expint, sp.Ei, sp.li, sp.Li,
    sp.Si, sp.Ci, sp.Shi, sp.Chi, sp.fresnelc, sp.fresnels,
)  # fmt: skip
_OPERATORS = frozenset(OPERATOR_TOKENS)


@dataclass(frozen=True)
class GeneratorConfig:
    method: str = "fwd"
    tree: TreeSettings = field(default_factory=TreeSettings)
    # operators per random expression: min_ops..max_ops; min_ops None is Lample & Charton's 3
    # (fwd) or 4 (bwd, ibp's F); min_ops = max_ops with small_probability 0: an exact count ...
    max_ops: int = 15
    min_ops: int | None = None
    # ... except with this probability, when it is 0..2 (fwd) or 0..3 (bwd)
    small_probability: float = 1 / 40
    # operators of IBP's second factor G: 1..max_ops_g
    max_ops_g: int = 15
    # longest accepted sequence, `sub Y' f` or F, in tokens (plus 2 for the EOS markers)
    max_len: int = 512
    # BWD: probability of simplifying F'
    simplify_probability: float = 0.5
    # FWD, IBP: probability of removing additive constants at the root of f (F, G)
    strip_constant_probability: float = 0.5
    # soft limit on one `simplify` call inside an attempt; None: no soft limit
    simplify_seconds: float | None = 1.0
    # BWD: "fast" builds F and F' on genprobe's own terms (SymPy's canonical form, the same
    # pairs) and simplifies with `factoring.simplify`; "sympy": SymPy throughout, `simplify`
    # included, as Lample & Charton (about 10x slower)
    engine: str = "fast"

    def validated(self) -> GeneratorConfig:
        check_choice("method", self.method, METHODS)
        check_choice("engine", self.engine, ENGINES)
        if self.max_ops < 1 or self.max_ops_g < 1:
            raise ConfigError("max_ops", "at least 1", min(self.max_ops, self.max_ops_g))
        if self.min_ops is not None and not 0 <= self.min_ops <= self.max_ops:
            raise ConfigError("min_ops", f"in 0..max_ops ({self.max_ops})", self.min_ops)
        if self.max_len < 4:
            raise ConfigError("max_len", "at least 4", self.max_len)
        self.tree.validated()
        return self


@dataclass(frozen=True)
class Attempt:
    """What one attempt produced: a pair, or the reason it was rejected."""

    status: str  # "ok" or a rejection reason
    input: str = ""  # `sub Y' f` prefix, space-separated
    output: str = ""  # F prefix
    # primitives learned on the way, for the IBP cache: (key of integrand, primitive prefix)
    learned: tuple[tuple[str, str], ...] = ()
    n_ops: int | None = None  # operators drawn for the random expression (f, or F)


class Rejected(Exception):
    def __init__(self, reason: str, learned: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.learned = learned


class _SoftTimeout(Exception):
    pass


@contextlib.contextmanager
def _soft_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt Python code after `seconds` of the process's user CPU time, which load does not
    change (ITIMER_VIRTUAL: the pool's own budget uses ITIMER_PROF)."""
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise _SoftTimeout

    previous = signal.signal(signal.SIGVTALRM, interrupt)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


def _simplify(expr: sp.Expr, seconds: float | None) -> sp.Expr:
    """`simplify`, or `expr` unchanged if it takes longer than `seconds` (as Lample & Charton)."""
    try:
        with _soft_limit(seconds):
            return sp.simplify(expr)
    except _SoftTimeout:
        return expr


def _n_ops(rng: np.random.Generator, config: GeneratorConfig, low: int) -> int:
    if rng.random() < config.small_probability:
        return int(rng.integers(0, low))
    return int(rng.integers(low if config.min_ops is None else config.min_ops, config.max_ops + 1))


def _random_sympy(rng: np.random.Generator, config: GeneratorConfig, n_ops: int) -> sp.Expr:
    return to_sympy(random_expression(rng, n_ops, config.tree))


def _strip_constant(expr: sp.Expr) -> sp.Expr:
    return expr.as_independent(X, as_Add=True)[1]


def _check_valid(expr: sp.Expr) -> None:
    if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I):
        raise Rejected("invalid_value")


def _prefix(expr: sp.Expr) -> list[str]:
    try:
        return to_prefix(from_sympy(expr))
    except GenprobeError:
        raise Rejected("unsupported") from None


def _count_ops(tokens: list[str]) -> int:
    return sum(token in _OPERATORS for token in tokens)


def _pair(
    f: sp.Expr, big_f: sp.Expr, config: GeneratorConfig, n_ops: int, count_on: str
) -> Attempt:
    _check_valid(f)
    _check_valid(big_f)
    return _token_pair(_prefix(f), _prefix(big_f), config, n_ops, count_on)


def _token_pair(
    f_tokens: list[str], big_f_tokens: list[str], config: GeneratorConfig, n_ops: int, count_on: str
) -> Attempt:
    if max(len(f_tokens) + 2, len(big_f_tokens)) + 2 > config.max_len:
        raise Rejected("too_long")
    if _count_ops(f_tokens if count_on == "f" else big_f_tokens) < n_ops / 2:
        raise Rejected("too_few_ops")
    return Attempt(
        "ok", " ".join([*PROBLEM_PREFIX, *f_tokens]), " ".join(big_f_tokens), n_ops=n_ops
    )


def _forward(rng: np.random.Generator, config: GeneratorConfig) -> Attempt:
    n_ops = _n_ops(rng, config, 3)
    f = _random_sympy(rng, config, n_ops)
    if not f.has(X):
        raise Rejected("no_x")
    if rng.random() < config.strip_constant_probability:
        f = _strip_constant(f)
    _check_valid(f)
    try:
        big_f = sp.integrate(f, X, risch=True)
    except NotImplementedError:
        raise Rejected("risch_not_implemented") from None
    if big_f.has(sp.integrals.risch.NonElementaryIntegral, sp.Integral):
        raise Rejected("non_elementary")
    if big_f.has(*SPECIAL_FUNCTIONS) or big_f.has(sp.Piecewise):
        raise Rejected("special_function")
    return _pair(f, big_f, config, n_ops, count_on="f")


def _backward(rng: np.random.Generator, config: GeneratorConfig) -> Attempt:
    n_ops = _n_ops(rng, config, 4)
    tree = random_expression(rng, n_ops, config.tree)
    simplify = rng.random() < config.simplify_probability
    if config.engine == "fast":
        try:
            return _backward_fast(tree, simplify, config, n_ops)
        except terms.Unsupported:  # outside the terms' language: SymPy decides
            pass
    big_f = _strip_constant(to_sympy(tree))
    if not big_f.has(X):
        raise Rejected("no_x")
    _check_valid(big_f)
    f = sp.diff(big_f, X)
    if simplify:
        f = _simplify(f, config.simplify_seconds)
    return _pair(f, big_f, config, n_ops, count_on="F")


def _backward_fast(tree: Expr, simplify: bool, config: GeneratorConfig, n_ops: int) -> Attempt:
    big_f = canonical.strip_constant(canonical.from_tree(tree))
    if not (isinstance(big_f, terms.Term) and big_f.has_x):
        raise Rejected("no_x")
    f = derivative(big_f)
    if simplify:
        f = factoring.simplify(f)
    f_tokens = to_prefix(terms.to_tree(f))
    return _token_pair(f_tokens, to_prefix(terms.to_tree(big_f)), config, n_ops, "F")


def cache_key(expr: sp.Expr) -> tuple[sp.Expr, str]:
    """(numeric coefficient, key of the rest): one cached primitive serves every multiple."""
    coefficient, rest = expr.as_coeff_Mul()
    return coefficient, " ".join(_prefix(rest))


def _cache_entry(integrand: sp.Expr, primitive: sp.Expr) -> tuple[str, str]:
    coefficient, key = cache_key(integrand)
    return key, " ".join(_prefix(primitive / coefficient if coefficient else primitive))


def _parts(rng: np.random.Generator, config: GeneratorConfig, cache: dict[str, str]) -> Attempt:
    seconds = config.simplify_seconds
    n_ops = _n_ops(rng, config, 4)
    big_f = _random_sympy(rng, config, n_ops)
    big_g = _random_sympy(rng, config, int(rng.integers(1, config.max_ops_g + 1)))
    if rng.random() < config.strip_constant_probability:
        big_f = _strip_constant(big_f)
    if rng.random() < config.strip_constant_probability:
        big_g = _strip_constant(big_g)
    if not (big_f.has(X) and big_g.has(X)):
        raise Rejected("no_x")
    _check_valid(big_f)
    _check_valid(big_g)
    f = _simplify(sp.diff(big_f, X), seconds)
    g = _simplify(sp.diff(big_g, X), seconds)
    g_coefficient, _ = g.as_coeff_Mul()
    if g_coefficient != 0:
        g, big_g = g / g_coefficient, big_g / g_coefficient
    learned = [_cache_entry(f, big_f), _cache_entry(g, big_g)]

    def known_primitive(product: sp.Expr) -> sp.Expr | None:
        coefficient, key = cache_key(_simplify(product, seconds))
        primitive = cache.get(key)
        return None if primitive is None else coefficient * to_sympy(from_prefix(primitive.split()))

    integral = known_primitive(f * big_g)
    if integral is not None:
        h, big_h = big_f * g, big_f * big_g - integral
    else:
        integral = known_primitive(big_f * g)
        if integral is None:
            raise Rejected("no_cached_primitive", tuple(learned))
        h, big_h = f * big_g, big_f * big_g - integral
    h, big_h = _simplify(h, seconds), _simplify(big_h, seconds)
    if not h.has(X):
        raise Rejected("no_x", tuple(learned))
    if rng.random() < 0.5:
        h_coefficient, _ = h.as_coeff_Mul()
        if h_coefficient != 0:
            h, big_h = h / h_coefficient, big_h / h_coefficient
    try:
        result = _pair(h, big_h, config, n_ops, count_on="F")
    except Rejected as rejected:
        raise Rejected(rejected.reason, tuple(learned)) from None
    learned.append(_cache_entry(h, big_h))
    return Attempt("ok", result.input, result.output, tuple(learned), result.n_ops)


def attempt(shared: tuple[GeneratorConfig, dict[str, str]], job: tuple[int, int]) -> Attempt:
    """One generation attempt, seeded by (seed, index); runs inside a pool worker."""
    config, cache = shared
    seed, index = job
    rng = np.random.default_rng([seed, index])
    try:
        if config.method == "fwd":
            return _forward(rng, config)
        if config.method == "bwd":
            return _backward(rng, config)
        return _parts(rng, config, cache)
    except Rejected as rejected:
        return Attempt(rejected.reason, learned=rejected.learned)
    except GenprobeError:  # e.g. a power too large to build
        return Attempt("unsupported")
    except (ValueError, TypeError, ZeroDivisionError, RecursionError, AttributeError) as error:
        return Attempt(f"sympy_error:{type(error).__name__}")
