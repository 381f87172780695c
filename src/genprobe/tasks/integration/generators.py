"""Integration data as Lample & Charton make it: FWD, BWD and IBP pairs (integrand, primitive).

- FWD: draw f, integrate it with SymPy's Risch algorithm (and `doit` where Risch leaves an
  integral unevaluated), keep elementary results.
- BWD: draw F, differentiate it (simplified half the time by SymPy's `simplify`), keep (F', F).
- IBP: draw F and G; if a primitive of f·G (or F·g) is already known, integration by parts gives
  one of F·g (or f·G). Known primitives come from a cache that grows with every attempt.

One attempt is one call of `attempt(shared, (seed, index))` in a pool worker with a hard
deadline; its randomness comes only from (seed, index), so the data does not depend on the
number of workers or their scheduling (timeouts are budgets of CPU time, not of wall clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import sympy as sp
from sympy.integrals.risch import NonElementaryIntegral

from genprobe.errors import GenprobeError
from genprobe.runs.cpu_limit import cpu_limit
from genprobe.tasks.integration import canonical, factoring, terms
from genprobe.tasks.integration.derivative import derivative
from genprobe.tasks.integration.expression import Expr, X, from_sympy, to_sympy
from genprobe.tasks.integration.generation_config import GeneratorConfig
from genprobe.tasks.integration.prefix import PROBLEM_PREFIX, from_prefix, to_prefix
from genprobe.tasks.integration.random_trees import random_expression
from genprobe.tasks.integration.vocab import OPERATOR_TOKENS

# their time limit on BWD's `simplify(F')`
BWD_SIMPLIFY_SECONDS = 2.0
# a FWD primitive containing any of these is not elementary in the vocabulary's sense
SPECIAL_FUNCTIONS = (
    sp.erf, sp.erfc, sp.erfi, sp.erfinv, sp.erfcinv, sp.expint, sp.Ei, sp.li, sp.Li,
    sp.Si, sp.Ci, sp.Shi, sp.Chi, sp.fresnelc, sp.fresnels,
)  # fmt: skip
_OPERATORS = frozenset(OPERATOR_TOKENS)


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


def _simplify(expr: sp.Expr, seconds: float | None) -> sp.Expr:
    """`simplify`, or `expr` unchanged if it takes longer than `seconds` (as Lample & Charton)."""
    try:
        with cpu_limit(seconds, _SoftTimeout):
            return sp.simplify(expr)
    except _SoftTimeout:
        return expr


def _n_ops(rng: np.random.Generator, config: GeneratorConfig, low: int) -> int:
    """The operators of one random expression: 0..low-1 for a small one, else from the
    fewest (`min_ops`; by default `low`, at most `max_ops`) to `max_ops`."""
    if rng.random() < config.small_probability:
        return int(rng.integers(0, low))
    fewest = min(low, config.max_ops) if config.min_ops is None else config.min_ops
    return int(rng.integers(fewest, config.max_ops + 1))


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
    strip = rng.random() < config.strip_constant_probability
    return forward_pair(f, n_ops, strip, config)


def forward_pair(f: sp.Expr, n_ops: int, strip: bool, config: GeneratorConfig) -> Attempt:
    """FWD's pair for the random integrand `f` drawn with `n_ops` operators, its additive
    constant removed if `strip`.

    Raises:
        Rejected: f or its primitive is not kept, and why.
    """
    if strip:
        f = _strip_constant(f)
    _check_valid(f)
    try:
        big_f = sp.integrate(f, X, risch=True)
    except NotImplementedError:
        raise Rejected("risch_not_implemented") from None
    if isinstance(big_f, NonElementaryIntegral):
        raise Rejected("non_elementary")
    if config.engine == "lc":  # the others: genprobe's FWD before it, for runs made then
        # Lample & Charton's `gen_prim_fwd`: what Risch left unevaluated (in part), `doit`
        # integrates by SymPy's other methods (heuristics, Meijer G), within the attempt's time
        big_f = big_f.doit()
    if big_f.has(sp.Integral):  # a NonElementaryIntegral inside, or one doit could not do
        raise Rejected("non_elementary")
    if big_f.has(*SPECIAL_FUNCTIONS) or big_f.has(sp.Piecewise):
        raise Rejected("special_function")
    return _pair(f, big_f, config, n_ops, count_on="f")


def _backward(rng: np.random.Generator, config: GeneratorConfig) -> Attempt:
    n_ops = _n_ops(rng, config, 4)
    tree = random_expression(rng, n_ops, config.tree)
    simplify = rng.random() < config.simplify_probability
    return backward_pair(tree, n_ops, simplify, config)


def backward_pair(tree: Expr, n_ops: int, simplify: bool, config: GeneratorConfig) -> Attempt:
    """BWD's pair for the random expression `tree` drawn with `n_ops` operators, F' simplified
    if `simplify`.

    Raises:
        Rejected: the pair is not kept, and why.
    """
    if config.engine != "sympy":
        try:
            return _backward_terms(tree, simplify, config, n_ops)
        except terms.Unsupported:  # outside the terms' language: SymPy decides
            pass
    big_f = _strip_constant(to_sympy(tree))
    if not big_f.has(X):
        raise Rejected("no_x")
    _check_valid(big_f)
    f = sp.diff(big_f, X)
    if simplify:
        f = _simplify_lc(f).expr if config.engine == "lc" else _simplify(f, config.simplify_seconds)
    return _pair(f, big_f, config, n_ops, count_on="F")


def _backward_terms(tree: Expr, simplify: bool, config: GeneratorConfig, n_ops: int) -> Attempt:
    big_f = canonical.strip_constant(canonical.from_tree(tree))
    if not (isinstance(big_f, terms.Term) and big_f.has_x):
        raise Rejected("no_x")
    f = derivative(big_f)
    big_f_tokens = to_prefix(terms.to_tree(big_f))
    if simplify and config.engine == "lc":
        f_tokens = _simplified_tokens(to_prefix(terms.to_tree(f)))
    else:
        f_tokens = to_prefix(terms.to_tree(factoring.simplify(f) if simplify else f))
    return _token_pair(f_tokens, big_f_tokens, config, n_ops, "F")


class _Simplified(NamedTuple):
    expr: sp.Expr
    finished: bool  # False: the time limit cut SymPy short, `expr` is the derivative as it was


def _simplify_lc(f: sp.Expr) -> _Simplified:
    """Lample & Charton's `simplify(f, seconds=2)`: SymPy's `simplify`, or `f` itself when it
    runs out of time, raises, or brings in a Dummy symbol (their 2 s are wall-clock time, ours
    CPU time, which machine load does not change)."""
    try:
        with cpu_limit(BWD_SIMPLIFY_SECONDS, _SoftTimeout):
            simple = sp.simplify(f)
    except _SoftTimeout:
        return _Simplified(f, finished=False)
    except Exception:  # their simplify keeps f on any error
        return _Simplified(f, finished=True)
    dummy = any(s.is_Dummy for s in simple.free_symbols)
    return _Simplified(f if dummy else simple, finished=True)


# what `_simplified_tokens` gave each derivative it finished in this process: a random F
# repeats (a quarter of BWD attempts are duplicates), and SymPy's simplify is the costly step
_SIMPLIFIED: dict[str, list[str] | str] = {}
_SIMPLIFIED_MAX = 200_000


def _simplified_tokens(f_tokens: list[str]) -> list[str]:
    """The prefix of `_simplify_lc` of the derivative `f_tokens`, remembered per process (a
    result cut short by the time limit is not).

    Raises:
        Rejected: the simplified derivative holds an infinity, or is outside the vocabulary.
    """
    key = " ".join(f_tokens)
    known = _SIMPLIFIED.get(key)
    if known is None:
        simple = _simplify_lc(to_sympy(from_prefix(f_tokens)))
        if not simple.finished:
            return f_tokens
        try:
            _check_valid(simple.expr)
            known = _prefix(simple.expr)
        except Rejected as rejected:
            known = rejected.reason
        if len(_SIMPLIFIED) < _SIMPLIFIED_MAX:
            _SIMPLIFIED[key] = known
    if isinstance(known, str):
        raise Rejected(known)
    return known


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
