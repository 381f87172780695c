"""Numeric evaluation of a tree and of its x-derivative (forward-mode differentiation).

A tree is compiled once into a flat program over a small core of operations (`cot u` becomes
`cos u / sin u`, `acsc u` becomes `asin(1/u)`, ...). The same program runs on two backends:
NumPy complex128 arrays (all points at once, microseconds) and mpmath (one point, arbitrary
precision, for what doubles cannot decide). No SymPy is involved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from genprobe.tasks.integration.expression import Expr, fold

# core operations; every tree operator is rewritten into these
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


@dataclass(frozen=True)
class Instruction:
    op: str  # "x", "const", "add", "sub", "mul", "div", "pow", or a core unary function
    args: tuple[int, ...] = ()
    constant: Any = None  # an int, or "pi"/"E", for op == "const"
    depends_on_x: bool = True


@dataclass(frozen=True)
class Program:
    instructions: tuple[Instruction, ...]
    uses_abs: bool  # abs/sign are not analytic: evaluate on real points only


class _Compiler:
    def __init__(self) -> None:
        self.instructions: list[Instruction] = []
        self.seen: dict[tuple, int] = {}
        self.uses_abs = False

    def emit(self, op: str, *args: int, constant: Any = None) -> int:
        # a repeated subexpression (sin(x) in a 40-term polynomial of sin(x)) is computed once
        key = (op, args, constant)
        index = self.seen.get(key)
        if index is None:
            depends = op == "x" or any(self.instructions[a].depends_on_x for a in args)
            self.instructions.append(Instruction(op, args, constant, depends))
            index = self.seen[key] = len(self.instructions) - 1
        return index

    def node(self, node: Expr, args: list[int]) -> int:
        op = node.op
        if op == "x":
            return self.emit("x")
        if op == "int":
            return self.emit("const", constant=node.value)
        if op in ("pi", "E"):
            return self.emit("const", constant=op)
        if op in ("add", "sub", "mul", "div", "pow"):
            return self.emit(op, *args)
        (u,) = args[:1]
        if op == "rac":
            one = self.emit("const", constant=1)
            return self.emit("pow", u, self.emit("div", one, args[1]))
        if op == "inv":
            return self.emit("div", self.emit("const", constant=1), u)
        if op in _POWERS:
            return self.emit("pow", u, self.emit("const", constant=_POWERS[op]))
        if op == "ln":
            return self.emit("log", u)
        if op in _OF_RECIPROCAL:
            reciprocal = self.emit("div", self.emit("const", constant=1), u)
            return self.emit(_OF_RECIPROCAL[op], reciprocal)
        if op in _RATIO:
            top, bottom = _RATIO[op]
            numerator = self.emit(top, u) if top else self.emit("const", constant=1)
            return self.emit("div", numerator, self.emit(bottom, u))
        if op in ("abs", "sign"):
            self.uses_abs = True
        return self.emit(op, u)


def compile_expr(expr: Expr) -> Program:
    compiler = _Compiler()
    fold(expr, compiler.node)
    return Program(tuple(compiler.instructions), compiler.uses_abs)


# --------------------------------------------------------------------------- backends


class _NumpyBackend:
    """complex128 arrays, one entry per point."""

    pi = np.pi
    E = np.e
    exp, log, sqrt = np.exp, np.log, np.sqrt
    sin, cos, tan = np.sin, np.cos, np.tan
    asin, acos, atan = np.arcsin, np.arccos, np.arctan
    sinh, cosh, tanh = np.sinh, np.cosh, np.tanh
    asinh, acosh, atanh = np.arcsinh, np.arccosh, np.arctanh

    @staticmethod
    def abs(u: Any) -> Any:
        return np.abs(u).astype(complex)

    @staticmethod
    def sign(u: Any) -> Any:
        return np.sign(u.real).astype(complex)

    @staticmethod
    def const(value: int) -> Any:
        return complex(value)


class _MpmathBackend:
    """One point at the precision of the enclosing `mpmath.workdps`."""

    exp, log, sqrt = staticmethod(mpmath.exp), staticmethod(mpmath.log), staticmethod(mpmath.sqrt)
    sin, cos, tan = staticmethod(mpmath.sin), staticmethod(mpmath.cos), staticmethod(mpmath.tan)
    asin, acos = staticmethod(mpmath.asin), staticmethod(mpmath.acos)
    atan = staticmethod(mpmath.atan)
    sinh, cosh = staticmethod(mpmath.sinh), staticmethod(mpmath.cosh)
    tanh = staticmethod(mpmath.tanh)
    asinh, acosh = staticmethod(mpmath.asinh), staticmethod(mpmath.acosh)
    atanh = staticmethod(mpmath.atanh)

    @property
    def pi(self) -> Any:
        return +mpmath.pi

    @property
    def E(self) -> Any:
        return +mpmath.e

    @staticmethod
    def abs(u: Any) -> Any:
        return mpmath.mpf(abs(u))

    @staticmethod
    def sign(u: Any) -> Any:
        return mpmath.mpf(mpmath.sign(mpmath.re(u)))

    @staticmethod
    def const(value: int) -> Any:
        return mpmath.mpf(value)


class MagnitudeError(ArithmeticError):
    """An mpmath intermediate grew beyond what is worth computing (exp of 1e9, ...)."""


# exponents beyond this (|argument of exp| > 2**30) would make mpmath work for minutes
_MAX_EXP_MAGNITUDE = 30


def _guard(value: Any) -> None:
    if value and mpmath.mag(value) > _MAX_EXP_MAGNITUDE:
        raise MagnitudeError("argument of an exponential is too large")


def _guard_power(base: Any, exponent: Any) -> None:
    # |exponent * log(base)| <= 2**mag(exponent) * (|mag(base)| + 1), without computing a log
    if mpmath.mag(exponent) + (abs(mpmath.mag(base)) + 1).bit_length() > _MAX_EXP_MAGNITUDE:
        raise MagnitudeError("power is too large")


def _derivative_factor(op: str, u: Any, value: Any, m: Any) -> Any:
    """d op(u) / du, given u and value = op(u)."""
    if op == "exp":
        return value
    if op == "log":
        return 1 / u
    if op == "sqrt":
        return 1 / (2 * value)
    if op == "sin":
        return m.cos(u)
    if op == "cos":
        return -m.sin(u)
    if op == "tan":
        return 1 + value * value
    if op == "asin":
        return 1 / m.sqrt(1 - u * u)
    if op == "acos":
        return -1 / m.sqrt(1 - u * u)
    if op == "atan":
        return 1 / (1 + u * u)
    if op == "sinh":
        return m.cosh(u)
    if op == "cosh":
        return m.sinh(u)
    if op == "tanh":
        return 1 - value * value
    if op == "asinh":
        return 1 / m.sqrt(u * u + 1)
    if op == "acosh":
        return 1 / (m.sqrt(u - 1) * m.sqrt(u + 1))
    if op == "atanh":
        return 1 / (1 - u * u)
    if op == "abs":
        return m.sign(u)
    if op == "sign":
        return 0 * u
    raise AssertionError(op)


def evaluate(
    program: Program, point: Any, backend: Any, differentiate: bool = True
) -> tuple[Any, Any, Any]:
    """(value, derivative, suspect) of the program at `point` (array or scalar); the
    derivative is 0 unless `differentiate`.

    `suspect` is True (or a boolean array) where an intermediate over- or underflowed, so the
    double-precision result cannot be trusted there. With mpmath it is always False; growth
    beyond any sane size raises `MagnitudeError` instead.
    """
    exact = backend is _MPMATH
    values: list[Any] = []
    derivatives: list[Any] = []
    suspect: Any = False
    zero = 0 * point
    instructions = program.instructions
    for ins in instructions:
        op = ins.op
        args = ins.args
        if op == "x":
            value = point
        elif op == "const":
            c = ins.constant
            value = getattr(backend, c) if isinstance(c, str) else backend.const(c)
        elif len(args) == 2:
            a, b = values[args[0]], values[args[1]]
            if op == "add":
                value = a + b
            elif op == "sub":
                value = a - b
            elif op == "mul":
                value = a * b
            elif op == "div":
                value = a / b
            else:
                if exact and a and b:
                    _guard_power(a, b)
                value = a**b
        else:
            a = values[args[0]]
            if exact and op in ("exp", "sinh", "cosh"):
                _guard(a)
            value = getattr(backend, op)(a)
        values.append(value)
        if not exact and ins.depends_on_x:
            magnitude = np.abs(value)
            suspect = suspect | (magnitude > 1e250) | ((magnitude < 1e-250) & (magnitude > 0))
            if op in ("exp", "pow"):
                suspect = suspect | (magnitude == 0)
        if not (differentiate and ins.depends_on_x):
            derivatives.append(zero)
            continue
        if op == "x":
            derivative = zero + 1
        elif len(args) == 1:
            derivative = _derivative_factor(op, a, value, backend) * derivatives[args[0]]
        else:
            da, db = derivatives[args[0]], derivatives[args[1]]
            a_varies, b_varies = (instructions[i].depends_on_x for i in args)
            if op == "add":
                derivative = da + db
            elif op == "sub":
                derivative = da - db
            elif op == "mul":
                derivative = (da * b if a_varies else 0) + (a * db if b_varies else 0)
            elif op == "div":
                derivative = (da - value * db) / b
            elif b_varies:
                derivative = value * (db * backend.log(a) + b * da / a)
            else:
                derivative = b * a ** (b - 1) * da
        derivatives.append(derivative)
    return values[-1], derivatives[-1], suspect


_NUMPY = _NumpyBackend()
_MPMATH = _MpmathBackend()


def evaluate_doubles(
    program: Program, points: np.ndarray, differentiate: bool = True
) -> tuple[np.ndarray, ...]:
    with np.errstate(all="ignore"):
        value, derivative, suspect = evaluate(program, points, _NUMPY, differentiate)
    shape = points.shape
    return (
        np.broadcast_to(value, shape),
        np.broadcast_to(derivative, shape),
        np.broadcast_to(suspect, shape),
    )


def evaluate_precise(
    program: Program, point: complex, digits: int, differentiate: bool = True
) -> tuple[Any, Any]:
    """(value, derivative) at one point with `digits` significant digits.

    Raises:
        ZeroDivisionError, ValueError, MagnitudeError: the point is a singularity, or too large.
    """
    with mpmath.workdps(digits):
        z = mpmath.mpc(point) if complex(point).imag else mpmath.mpf(complex(point).real)
        value, derivative, _ = evaluate(program, z, _MPMATH, differentiate)
        return value, derivative
