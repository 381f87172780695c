"""F'(x) and f(x) evaluated with a bound on their rounding error, and what that bound resolves.

`compile_check(integrand, candidate)` turns the pair into one flat program over a small core of
operations (`cot u` becomes `cos u / sin u`, `acsc u` becomes `asin(1/u)`, ...) whose two
outputs are F' and f. F' is built by symbolic differentiation into the same instructions (no
SymPy); shared subexpressions are computed once and instructions the outputs do not need are
dropped. The program runs on two backends: NumPy complex128 arrays (all points at once) and
mpmath (one point, any precision).

Every intermediate carries a first-order bound on its absolute rounding error (running error
analysis: a sum adds its operands' bounds and one rounding, a product weighs each bound by the
other factor, a function multiplies its argument's bound by |f'|). From the bounds the
evaluation also measures how many decimal digits it lacks to *resolve* the expressions:

- at every sum or difference, both terms must stand out of the sum's rounding error by a
  factor `ABSORPTION`: exp(2190/x) + sin(x) at x = 1 is 10^951 + 0.8, and no test of F' = f at
  that point can see whether the sin(x) is right. A term that is itself lost in its own
  rounding (`NOISE`; an exact cancellation such as (1 + t^2)/(1 + t^2) - 1) counts only once
  its error bound is `NEGLIGIBLE_DIGITS` digits below its partner: then it is zero for any
  purpose of the check, whatever its true value;
- every integer must be exact in the working precision (10^20 + 1 is not a double);
- both outputs must be known to `RESOLVED_DIGITS` digits.

A point whose deficit is positive proves nothing either way about agreement; more digits (in
mpmath) or another point may resolve it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import mpmath
import numpy as np

from genprobe.tasks.integration.expression import Expr, fold

# a summand must exceed ABSORPTION times the rounding error of its sum ...
ABSORPTION = 1e4
# ... unless it is within NOISE times its own error bound of 0, and that bound is
# NEGLIGIBLE_DIGITS below the other summand
NOISE = 8.0
NEGLIGIBLE_DIGITS = 30
# both F' and f must carry at least this many correct digits
RESOLVED_DIGITS = 6
# digits of a double
DOUBLE_DIGITS = 53 * math.log10(2)

_CORE_UNARY = (
    "exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "abs", "sign",
)  # fmt: skip
# an operator that is a core function applied to 1/u, or a ratio of two core functions of u
_OF_RECIPROCAL = {"acot": "atan", "asec": "acos", "acsc": "asin", "acoth": "atanh",
                  "asech": "acosh", "acsch": "asinh"}  # fmt: skip
_RATIO = {"cot": ("cos", "sin"), "coth": ("cosh", "sinh"), "sec": (None, "cos"),
          "csc": (None, "sin"), "sech": (None, "cosh"), "csch": (None, "sinh")}  # fmt: skip
_POWERS = {"pow2": 2, "pow3": 3, "pow4": 4, "pow5": 5}


# d op(u) / du in terms of u (`a`) and op(u) (`v`), written once over an algebra `m` that is
# either the compiler (building instructions for F') or a numeric backend (weighing errors)
def _one_over(m: Any, denominator: Any) -> Any:
    return m.div(m.const(1), denominator)


_DERIVATIVES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "exp": lambda m, a, v: v,
    "log": lambda m, a, v: _one_over(m, a),
    "sqrt": lambda m, a, v: _one_over(m, m.mul(m.const(2), v)),
    "sin": lambda m, a, v: m.unary("cos", a),
    "cos": lambda m, a, v: m.neg(m.unary("sin", a)),
    "tan": lambda m, a, v: m.add(m.const(1), m.mul(v, v)),
    "asin": lambda m, a, v: _one_over(m, m.unary("sqrt", m.sub(m.const(1), m.mul(a, a)))),
    "acos": lambda m, a, v: m.neg(_one_over(m, m.unary("sqrt", m.sub(m.const(1), m.mul(a, a))))),
    "atan": lambda m, a, v: _one_over(m, m.add(m.const(1), m.mul(a, a))),
    "sinh": lambda m, a, v: m.unary("cosh", a),
    "cosh": lambda m, a, v: m.unary("sinh", a),
    "tanh": lambda m, a, v: m.sub(m.const(1), m.mul(v, v)),
    "asinh": lambda m, a, v: _one_over(m, m.unary("sqrt", m.add(m.mul(a, a), m.const(1)))),
    "acosh": lambda m, a, v: _one_over(
        m,
        m.mul(m.unary("sqrt", m.sub(a, m.const(1))), m.unary("sqrt", m.add(a, m.const(1)))),
    ),
    "atanh": lambda m, a, v: _one_over(m, m.sub(m.const(1), m.mul(a, a))),
    "abs": lambda m, a, v: m.unary("sign", a),
}


@dataclass(frozen=True)
class Instruction:
    op: str  # "x", "const", "add", "sub", "mul", "div", "pow", or a core unary function
    args: tuple[int, ...] = ()
    constant: Any = None  # an int, or "pi"/"E", for op == "const"


@dataclass(frozen=True)
class Program:
    instructions: tuple[Instruction, ...]
    outputs: tuple[int, int]  # (F', f)
    uses_abs: bool  # abs/sign are not analytic: evaluate on real points only


class _Compiler:
    """Emits instructions with common-subexpression reuse; also the algebra of the
    derivative rules (operands are instruction indices, `None` is a structural zero)."""

    def __init__(self) -> None:
        self.instructions: list[Instruction] = []
        self.seen: dict[tuple, int] = {}
        self.varies: list[bool] = []  # does instruction i depend on x?
        self.derivatives: dict[int, int | None] = {}

    def emit(self, op: str, *args: int, constant: Any = None) -> int:
        key = (op, args, constant)
        index = self.seen.get(key)
        if index is None:
            self.instructions.append(Instruction(op, args, constant))
            self.varies.append(op == "x" or any(self.varies[a] for a in args))
            index = self.seen[key] = len(self.instructions) - 1
        return index

    # -- the algebra used by _DERIVATIVES and the chain rule; None stands for 0
    def const(self, value: int) -> int:
        return self.emit("const", constant=value)

    def add(self, a: int | None, b: int | None) -> int | None:
        if a is None or b is None:
            return b if a is None else a
        return self.emit("add", a, b)

    def sub(self, a: int | None, b: int | None) -> int | None:
        if b is None:
            return a
        return self.neg(b) if a is None else self.emit("sub", a, b)

    def mul(self, a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else self.emit("mul", a, b)

    def div(self, a: int | None, b: int) -> int | None:
        return None if a is None else self.emit("div", a, b)

    def neg(self, a: int | None) -> int | None:
        return self.mul(self.const(-1), a)

    def unary(self, op: str, a: int) -> int:
        return self.emit(op, a)

    # -- trees to instructions
    def node(self, node: Expr, args: list[int]) -> int:
        op = node.op
        if op == "x":
            return self.emit("x")
        if op == "int":
            return self.const(node.value)
        if op in ("pi", "E"):
            return self.emit("const", constant=op)
        if op in ("add", "sub", "mul", "div", "pow"):
            return self.emit(op, *args)
        (u,) = args[:1]
        if op == "rac":
            return self.emit("pow", u, self.emit("div", self.const(1), args[1]))
        if op == "inv":
            return self.emit("div", self.const(1), u)
        if op in _POWERS:
            return self.emit("pow", u, self.const(_POWERS[op]))
        if op == "ln":
            return self.emit("log", u)
        if op in _OF_RECIPROCAL:
            return self.emit(_OF_RECIPROCAL[op], self.emit("div", self.const(1), u))
        if op in _RATIO:
            top, bottom = _RATIO[op]
            numerator = self.emit(top, u) if top else self.const(1)
            return self.emit("div", numerator, self.emit(bottom, u))
        return self.emit(op, u)

    def derivative(self, index: int) -> int | None:
        """The instruction computing d/dx of instruction `index` (None: identically 0)."""
        if index in self.derivatives:
            return self.derivatives[index]
        # children first, without recursion (trees nest thousands deep)
        stack = [index]
        while stack:
            top = stack[-1]
            pending = [
                a
                for a in self.instructions[top].args
                if self.varies[a] and a not in self.derivatives
            ]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if top not in self.derivatives:
                self.derivatives[top] = self._differentiate(top)
        return self.derivatives[index]

    def _differentiate(self, index: int) -> int | None:
        ins = self.instructions[index]
        if not self.varies[index]:
            return None
        if ins.op == "x":
            return self.const(1)
        d = [self.derivatives.get(a) for a in ins.args]
        if ins.op == "add":
            return self.add(d[0], d[1])
        if ins.op == "sub":
            return self.sub(d[0], d[1])
        a, *rest = ins.args
        if ins.op == "mul":
            return self.add(self.mul(d[0], rest[0]), self.mul(a, d[1]))
        if ins.op == "div":  # (a' - (a/b) b') / b
            return self.div(self.sub(d[0], self.mul(index, d[1])), rest[0])
        if ins.op == "pow":
            b = rest[0]
            if d[1] is None:  # b a^(b-1) a'
                power = self.emit("pow", a, self._minus_one(b))
                return self.mul(self.mul(b, power), d[0])
            # a^b (b' ln a + b a' / a)
            inner = self.add(self.mul(d[1], self.emit("log", a)), self.div(self.mul(b, d[0]), a))
            return self.mul(index, inner)
        if ins.op == "sign":
            return None
        return self.mul(_DERIVATIVES[ins.op](self, a, index), d[0])

    def _minus_one(self, exponent: int) -> int:
        ins = self.instructions[exponent]
        if ins.op == "const" and isinstance(ins.constant, int):
            return self.const(ins.constant - 1)
        return self.emit("sub", exponent, self.const(1))


def compile_check(integrand: Expr, candidate: Expr) -> Program:
    """The program computing (d/dx candidate, integrand) at a point."""
    compiler = _Compiler()
    big_f = fold(candidate, compiler.node)
    f = fold(integrand, compiler.node)
    derivative = compiler.derivative(big_f)
    if derivative is None:
        derivative = compiler.const(0)
    return _pruned(compiler, (derivative, f))


def _pruned(compiler: _Compiler, outputs: tuple[int, int]) -> Program:
    """Only the instructions the outputs need (F's own value is usually not), renumbered."""
    needed = set()
    stack = list(outputs)
    while stack:
        index = stack.pop()
        if index not in needed:
            needed.add(index)
            stack.extend(compiler.instructions[index].args)
    order = sorted(needed)
    new_index = {old: new for new, old in enumerate(order)}
    instructions = tuple(
        Instruction(ins.op, tuple(new_index[a] for a in ins.args), ins.constant)
        for ins in (compiler.instructions[i] for i in order)
    )
    uses_abs = any(ins.op in ("abs", "sign") for ins in instructions)
    return Program(instructions, (new_index[outputs[0]], new_index[outputs[1]]), uses_abs)


# --------------------------------------------------------------------------- backends


class _Numpy:
    """complex128 arrays, one entry per point; errors and deficits are float arrays."""

    digits = DOUBLE_DIGITS
    unit = 2.0**-53
    floor = 2.0**-1074  # absolute error of a result that under- or overflowed to 0
    pi, E = np.pi, np.e
    functions: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
        "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
        "acosh": np.arccosh, "atanh": np.arctanh,
        "abs": lambda u: np.abs(u).astype(complex),
        "sign": lambda u: np.sign(u.real).astype(complex),
    }  # fmt: skip
    magnitude = staticmethod(np.abs)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)

    @staticmethod
    def integer(value: int) -> tuple[complex, float]:
        """(value, its rounding error): integers beyond 2**53 are not exact doubles."""
        if abs(value) <= 2**53:
            return complex(value), 0.0
        size = float(abs(value)) if value.bit_length() < 1024 else math.inf
        return complex(math.copysign(size, value)), size * 2.0**-53

    @staticmethod
    def log10(x: Any) -> Any:
        with np.errstate(all="ignore"):
            return np.log10(x)

    @staticmethod
    def log_bound(a: Any) -> Any:
        """An upper bound on |log a| (principal branch)."""
        with np.errstate(all="ignore"):
            return np.abs(np.log(np.abs(a))) + np.pi

    @staticmethod
    def finite(x: Any) -> Any:
        return np.isfinite(x)

    @staticmethod
    def where(condition: Any, a: Any, b: Any) -> Any:
        return np.where(condition, a, b)


class _Mpmath:
    """One point at `digits` significant digits."""

    floor = 0  # no underflow

    def __init__(self, digits: int) -> None:
        self.digits = digits
        self.unit = mpmath.mpf(2) ** -mpmath.mp.prec
        self.pi, self.E = +mpmath.pi, +mpmath.e
        self.functions = {
            "exp": _guarded(mpmath.exp), "log": mpmath.log, "sqrt": mpmath.sqrt,
            "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "asin": mpmath.asin,
            "acos": mpmath.acos, "atan": mpmath.atan, "sinh": _guarded(mpmath.sinh),
            "cosh": _guarded(mpmath.cosh), "tanh": mpmath.tanh, "asinh": mpmath.asinh,
            "acosh": mpmath.acosh, "atanh": mpmath.atanh,
            "abs": lambda u: mpmath.mpf(abs(u)),
            "sign": lambda u: mpmath.mpf(mpmath.sign(mpmath.re(u))),
        }  # fmt: skip

    def integer(self, value: int) -> tuple[Any, Any]:
        exact = value.bit_length() <= mpmath.mp.prec
        result = mpmath.mpf(value)
        return result, 0 if exact else abs(result) * self.unit

    magnitude = staticmethod(abs)
    maximum = staticmethod(max)
    minimum = staticmethod(min)

    @staticmethod
    def log10(x: Any) -> float:
        if x == 0:
            return -math.inf
        return float(mpmath.log10(x)) if mpmath.isfinite(x) else math.inf

    @staticmethod
    def finite(x: Any) -> bool:
        return bool(mpmath.isfinite(x))

    @staticmethod
    def log_bound(a: Any) -> float:
        """An upper bound on |log a| from a's binary exponent alone (no mpmath log)."""
        return (abs(mpmath.mag(a)) + 1) * math.log(2) + math.pi

    @staticmethod
    def where(condition: Any, a: Any, b: Any) -> Any:
        return a if condition else b


class MagnitudeError(ArithmeticError):
    """An mpmath intermediate grew beyond what is worth computing (exp of 1e9, ...)."""


# arguments of exp beyond 2**14 (values beyond 10**7000) are refused: no precision the check
# climbs to could resolve them, and mpmath's work grows with the exponent's size
_MAX_EXP_MAGNITUDE = 14


def _guarded(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def guarded(u: Any) -> Any:
        if u and mpmath.mag(u) > _MAX_EXP_MAGNITUDE:
            raise MagnitudeError("argument of an exponential is too large")
        return function(u)

    return guarded


def _guard_power(base: Any, exponent: Any) -> None:
    # |exponent * log(base)| <= 2**mag(exponent) * (|mag(base)| + 1), without computing a log
    if mpmath.mag(exponent) + (abs(mpmath.mag(base)) + 1).bit_length() > _MAX_EXP_MAGNITUDE:
        raise MagnitudeError("power is too large")


class _ErrorWeights:
    """The derivative rules' algebra over values, to weigh an argument's error by |f'(u)|."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def const(self, value: int) -> Any:
        return self.backend.integer(value)[0]

    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def sub(self, a: Any, b: Any) -> Any:
        return a - b

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def div(self, a: Any, b: Any) -> Any:
        return a / b

    def neg(self, a: Any) -> Any:
        return -a

    def unary(self, op: str, a: Any) -> Any:
        return self.backend.functions[op](a)


def _unresolved(m: Any, term: Any, error: Any, partner: Any, sum_error: Any) -> Any:
    """How far `term` is from being resolved in its sum: (what is needed) / (what there is),
    at most 1 when it is resolved."""
    size, partner_size = m.magnitude(term), m.magnitude(partner)
    noise = size <= NOISE * error  # an exact 0 with no error included
    # a term indistinguishable from 0 must be negligible next to its partner
    negligible = m.where(
        partner_size > 0,
        error * 10**NEGLIGIBLE_DIGITS / m.where(partner_size > 0, partner_size, 1),
        m.where(error > 0, math.inf, 0),
    )
    # a real term must stand out of the sum's rounding error
    absorbed = ABSORPTION * sum_error / m.where(size > 0, size, 1)
    return m.where(noise, negligible, absorbed)


@dataclass(frozen=True)
class Evaluation:
    derivative: Any  # F'(x)
    integrand: Any  # f(x)
    error: Any  # bound on the rounding error of F'(x) - f(x)
    deficit: Any  # decimal digits missing to resolve every term; <= 0: resolved


def evaluate(program: Program, point: Any, backend: Any) -> Evaluation:
    """Run `program` at `point` (an array of points with `_Numpy`, one with `_Mpmath`)."""
    m = backend
    weights = _ErrorWeights(m)
    values: list[Any] = []
    errors: list[Any] = []
    # the largest ratio of what resolving a term needs to what the evaluation has
    shortfall: Any = 0 * m.magnitude(point)
    for ins in program.instructions:
        op = ins.op
        if op == "x":
            value, error = point, 0 * m.magnitude(point)
        elif op == "const":
            if isinstance(ins.constant, str):
                value = getattr(m, ins.constant)
                error = m.unit * m.magnitude(value)
            else:
                value, error = m.integer(ins.constant)
                if error:
                    shortfall = m.maximum(shortfall, error / m.unit * 10 ** (1 - m.digits))
        elif len(ins.args) == 2:
            a, b = (values[i] for i in ins.args)
            ea, eb = (errors[i] for i in ins.args)
            if op in ("add", "sub"):
                value = a + b if op == "add" else a - b
                error = ea + eb + m.unit * m.magnitude(value) + m.floor
                shortfall = m.maximum(
                    shortfall,
                    m.maximum(_unresolved(m, a, ea, b, error), _unresolved(m, b, eb, a, error)),
                )
            elif op == "mul":
                value = a * b
                error = (
                    m.magnitude(a) * eb + m.magnitude(b) * ea + ea * eb
                    + m.unit * m.magnitude(value) + m.floor
                )  # fmt: skip
            elif op == "div":
                value = a / b
                room = m.magnitude(b) - eb
                error = (
                    m.where(
                        room > 0,
                        (ea + m.magnitude(value) * eb) / m.where(room > 0, room, 1),
                        math.inf,
                    )
                    + m.unit * m.magnitude(value)
                    + m.floor
                )
            else:
                if backend is not NUMPY and a and b:
                    _guard_power(a, b)
                value = a**b
                size = m.magnitude(value)
                error = size * (
                    m.magnitude(b / a) * ea + m.log_bound(a) * eb
                    + m.unit * (1 + m.magnitude(b) * m.log_bound(a))
                ) + m.floor  # fmt: skip
        else:
            a, ea = values[ins.args[0]], errors[ins.args[0]]
            value = m.functions[op](a)
            if op == "sign":
                # a sign whose argument could be on either side of 0 is unknown
                error = m.where(m.magnitude(a.real) > ea, 0 * ea, math.inf)
            else:
                slope = m.magnitude(_DERIVATIVES[op](weights, a, value))
                error = slope * ea + 2 * m.unit * m.magnitude(value) + m.floor
        values.append(value)
        errors.append(error)
    derivative, integrand = (values[i] for i in program.outputs)
    error = errors[program.outputs[0]] + errors[program.outputs[1]]
    scale = m.maximum(m.magnitude(derivative), m.magnitude(integrand))
    # both sides to RESOLVED_DIGITS digits; two exact zeros need nothing, two uncertain ones
    # (underflow) cannot tell how many digits they lack
    relative = m.where(
        scale > 0, error / m.where(scale > 0, scale, 1), m.where(error > 0, math.inf, 0)
    )
    shortfall = m.maximum(shortfall, relative * 10**RESOLVED_DIGITS)
    return Evaluation(derivative, integrand, error, m.log10(shortfall))


NUMPY = _Numpy()


def evaluate_doubles(program: Program, points: np.ndarray) -> Evaluation:
    """All points at once in complex128; non-finite entries mark over- or underflow."""
    with np.errstate(all="ignore"):
        result = evaluate(program, points, NUMPY)
    shape = points.shape
    deficit = np.where(np.isfinite(result.error), result.deficit, np.inf)
    return Evaluation(
        np.broadcast_to(result.derivative, shape),
        np.broadcast_to(result.integrand, shape),
        np.broadcast_to(result.error, shape),
        np.broadcast_to(deficit, shape),
    )


def evaluate_precise(program: Program, point: complex, digits: int) -> Evaluation:
    """One point with `digits` significant digits.

    Raises:
        ZeroDivisionError, ValueError, MagnitudeError: the point is a singularity, or too large.
    """
    with mpmath.workdps(digits):
        z = mpmath.mpc(point) if complex(point).imag else mpmath.mpf(complex(point).real)
        return evaluate(program, z, _Mpmath(digits))
