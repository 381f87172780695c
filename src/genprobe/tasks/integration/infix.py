"""A safe parser for infix math as models and people write it: `x**2`, `x^2`, `2x`, `sin(x)`,
`ln|x|`, `e^x`, `sqrt(x)`, `pi`, unicode minus, simple LaTeX, and a trailing `+ C`.

It never evaluates text: a hand-written tokenizer and recursive-descent parser build an `Expr`.

Prose rule (`extract_math`), applied in this order:
  1. If the text holds math delimiters (`$$…$$`, `$…$`, `\\[…\\]`, `\\(…\\)`) or backticks, keep
     the content of the last such segment.
  2. If it holds `=`, keep what follows the last `=` (answers like `∫ f dx = F + C`).
  3. Drop leading words (letter runs that are not math names, e.g. "The answer is"), cut at the
     first later word ("where C is …"), and strip trailing `.,;:!?`. If nothing is left, the
     text is parsed whole (and its first unknown word reported).

Grammar notes:
  - `^` and `**` are powers (right-associative, `-x^2` is `-(x^2)`); `2x`, `x sin(x)` and
    `(x+1)(x-1)` are implicit products, with the same precedence as `*` and `/`.
  - A function name applies to a parenthesized argument, or else to the implicit product of the
    atoms that follow it up to the next function or operator: `sin 2x` is `sin(2x)`,
    `sin x cos x` is `sin(x)*cos(x)`.
  - `sin^2(x)` is `sin(x)^2`; `sin^-1(x)` is `asin(x)` (likewise for the other trig and hyperbolic
    functions). `log` is the natural logarithm; `log(x, b)` is `ln(x)/ln(b)`.
  - `e` and `E` are Euler's number, `pi` and `π` are pi; decimals are exact (`0.5` is 1/2).
  - `C` or `c` is the constant of integration: it may only appear as a top-level term, and is
    dropped.

Examples:
    parse_infix("The antiderivative is x^3/3 + C.")  ->  x**3/3
    parse_infix("2x e^{x^2}")                        ->  2*x*exp(x**2)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from genprobe.errors import NestingTooDeepError, ParseError, UnsupportedExpressionError
from genprobe.tasks.integration.expression import Expr, depth
from genprobe.tasks.integration.limits import DEFAULT_LIMITS, ParseLimits

_FUNCTIONS = {
    "sin": "sin", "cos": "cos", "tan": "tan", "cot": "cot", "sec": "sec", "csc": "csc",
    "cosec": "csc", "tg": "tan", "ctg": "cot",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "coth": "coth", "sech": "sech", "csch": "csch",
    "exp": "exp", "log": "ln", "ln": "ln", "sqrt": "sqrt", "abs": "abs", "Abs": "abs",
    "sign": "sign",
    "sgn": "sign",
}  # fmt: skip
for _name in ("sin", "cos", "tan", "cot", "sec", "csc"):
    _FUNCTIONS["a" + _name] = _FUNCTIONS["arc" + _name] = "a" + _name
for _name in ("sinh", "cosh", "tanh", "coth", "sech", "csch"):
    _FUNCTIONS["a" + _name] = _FUNCTIONS["arc" + _name] = _FUNCTIONS["ar" + _name] = "a" + _name
_INVERSE = {op: "a" + op for op in set(_FUNCTIONS.values()) if "a" + op in _FUNCTIONS}

_CONSTANTS = {"pi": Expr("pi"), "e": Expr("E"), "E": Expr("E")}
_INTEGRATION_CONSTANTS = {"C", "c"}
# readable, but outside the task: the vocabulary has no token for them
_UNSUPPORTED_FUNCTIONS = {
    "erf", "erfc", "erfi", "Ei", "Si", "Ci", "li", "Li", "gamma", "Gamma",
    "floor", "ceil", "max", "min", "Shi", "Chi", "arg", "Re", "Im",
}  # fmt: skip
_NAMES = sorted(
    [*_FUNCTIONS, *_CONSTANTS, *_INTEGRATION_CONSTANTS, "x", "frac"], key=len, reverse=True
)

_UNICODE = {
    "−": "-", "–": "-", "—": "-", "·": "*", "×": "*", "⋅": "*", "∗": "*", "÷": "/",
    "π": " pi ", "√": " sqrt ", "²": "^2", "³": "^3", "\u00a0": " ",
}  # fmt: skip
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|[,;:! ])")
_LATEX_OPS = {r"\cdot": "*", r"\times": "*", r"\div": "/"}
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|\\?([A-Za-z]+)|(\*\*|[-+*/^()|,{}\[\]]))")
_MATH_SEGMENT = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|`+([^`]+)`+", re.S)
_WORD = re.compile(r"[A-Za-z]+[.,;:!?]*")


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    position: int


def _split_name(word: str) -> list[str] | None:
    """Split a letter run into known names, longest first (`sinx` -> sin, x); None if impossible."""
    parts: list[str] = []
    rest = word
    while rest:
        for name in _NAMES:
            if rest.startswith(name):
                parts.append(name)
                rest = rest[len(name) :]
                break
        else:
            return None
    return parts


def _is_prose(chunk: str) -> bool:
    if not _WORD.fullmatch(chunk):
        return False
    return _split_name(chunk.rstrip(".,;:!?")) is None


def extract_math(text: str) -> str:
    """The math part of an answer, by the three-step rule in the module docstring."""
    segments = [next(g for g in m.groups() if g is not None) for m in _MATH_SEGMENT.finditer(text)]
    if segments:
        text = segments[-1]
    if "=" in text:
        text = text.rsplit("=", 1)[1]
    chunks = text.split()
    while chunks and _is_prose(chunks[0]):
        chunks.pop(0)
    for index, chunk in enumerate(chunks):
        if _is_prose(chunk):
            chunks = chunks[:index]
            break
    math = " ".join(chunks).rstrip(".,;:!? ")
    # all prose: hand the text on whole, so that the tokenizer names the unknown word
    return math or text.strip()


def _tokenize(text: str, limits: ParseLimits) -> list[_Token]:
    for source, target in _UNICODE.items():
        text = text.replace(source, target)
    text = _LATEX_DROP.sub(" ", text)
    for source, target in _LATEX_OPS.items():
        text = text.replace(source, target)
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        if text[position:].isspace():
            break
        match = _TOKEN.match(text, position)
        if match is None:
            where = len(text) - len(text[position:].lstrip())
            raise ParseError(f"unexpected character {text[where]!r} at position {where}")
        number, word, op = match.groups()
        start = match.start(match.lastindex or 0)
        if number is not None:
            limits.check_digits(len(number.replace(".", "")))
            tokens.append(_Token("num", number, start))
        elif word is not None:
            parts = _split_name(word)
            if parts is None:
                _raise_unknown(word, start)
            tokens.extend(_Token("name", part, start) for part in parts)
        else:
            tokens.append(_Token("op", "^" if op == "**" else op, start))
        position = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


def _raise_unknown(word: str, position: int) -> None:
    if len(word) == 1 or word == "i":
        raise UnsupportedExpressionError(
            f"{word!r} at position {position}: the only variable is x (no constants but pi, e)"
        )
    if word in _UNSUPPORTED_FUNCTIONS:
        raise UnsupportedExpressionError(f"function {word!r} at position {position} has no token")
    raise ParseError(f"unknown name {word!r} at position {position}")


_OPENING = {"(": ")", "{": "}", "[": "]"}
_MINUS_ONE = Expr.integer(-1)


class _Parser:
    def __init__(self, tokens: list[_Token], limits: ParseLimits) -> None:
        self.tokens = tokens
        self.index = 0
        self.limits = limits
        self.nesting = 0

    # ------------------------------------------------------------ helpers
    @property
    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def expect(self, text: str) -> None:
        token = self.take()
        if token.text != text or token.kind not in ("op", "name"):
            found = "end of input" if token.kind == "end" else repr(token.text)
            raise ParseError(f"expected {text!r} at position {token.position}, found {found}")

    def is_op(self, *texts: str) -> bool:
        return self.peek.kind == "op" and self.peek.text in texts

    def starts_atom(self, functions: bool = True) -> bool:
        token = self.peek
        if token.kind == "num" or (token.kind == "op" and token.text in _OPENING):
            return True
        if token.kind != "name" or token.text in _INTEGRATION_CONSTANTS:
            return False
        return functions or token.text not in _FUNCTIONS

    def nested(self) -> None:
        self.nesting += 1
        self.limits.check_depth(self.nesting)

    # ------------------------------------------------------------ grammar
    def parse(self) -> Expr:
        result = self.sum(top_level=True)
        if result is None:
            raise ParseError("no expression found (only a constant of integration?)")
        if self.peek.kind != "end":
            token = self.peek
            raise ParseError(f"unexpected {token.text!r} at position {token.position}")
        return result

    def sum(self, top_level: bool = False) -> Expr | None:
        result: Expr | None = None
        while True:
            sign = self.take().text if self.is_op("+", "-") else "+"
            if top_level and self._at_integration_constant():
                self.take()
            else:
                term = self.product()
                if result is None:
                    result = term if sign == "+" else _negate(term)
                else:
                    result = Expr("add" if sign == "+" else "sub", (result, term))
            if not self.is_op("+", "-"):
                return result

    def _at_integration_constant(self) -> bool:
        token = self.peek
        if token.kind != "name" or token.text not in _INTEGRATION_CONSTANTS:
            return False
        following = self.tokens[self.index + 1]
        return following.kind == "end" or (following.kind == "op" and following.text in "+-")

    def product(self) -> Expr:
        result = self.signed()
        while True:
            if self.is_op("*", "/"):
                op = "mul" if self.take().text == "*" else "div"
                result = Expr(op, (result, self.signed()))
            elif self.starts_atom():
                result = Expr("mul", (result, self.power()))
            else:
                return result

    def signed(self) -> Expr:
        if self.is_op("-", "+"):
            sign = self.take().text
            self.nested()
            operand = self.signed()
            self.nesting -= 1
            return operand if sign == "+" else _negate(operand)
        return self.power()

    def power(self) -> Expr:
        base = self.atom()
        if not self.is_op("^"):
            return base
        self.take()
        self.nested()
        exponent = self.signed()
        self.nesting -= 1
        if base.op == "E":
            return Expr("exp", (exponent,))
        return Expr("pow", (base, exponent))

    def atom(self) -> Expr:
        token = self.take()
        if token.kind == "num":
            return _number(token.text)
        if token.kind == "op" and token.text in _OPENING:
            self.nested()
            inner = self.sum()
            self.nesting -= 1
            if inner is None:
                raise ParseError(f"empty or constant-only group at position {token.position}")
            self.expect(_OPENING[token.text])
            return inner
        if token.kind == "op" and token.text == "|":
            self.nested()
            inner = self.sum()
            self.nesting -= 1
            self.expect("|")
            return Expr("abs", (inner,))  # type: ignore[arg-type]
        if token.kind == "name":
            if token.text == "x":
                return Expr.var()
            if token.text in _CONSTANTS:
                return _CONSTANTS[token.text]
            if token.text == "frac":
                numerator = self.atom()
                return Expr("div", (numerator, self.atom()))
            if token.text in _FUNCTIONS:
                return self.function(_FUNCTIONS[token.text], token)
            raise ParseError(
                f"the constant of integration {token.text!r} at position {token.position} "
                "may only appear as a separate term"
            )
        found = "end of input" if token.kind == "end" else repr(token.text)
        raise ParseError(f"expected an operand at position {token.position}, found {found}")

    def function(self, op: str, token: _Token) -> Expr:
        exponent = None
        if self.is_op("^"):
            self.take()
            exponent = self.signed() if not self.is_op("{", "(") else self.atom()
            if exponent == _MINUS_ONE and op in _INVERSE:
                op, exponent = _INVERSE[op], None
        self.nested()
        if self.is_op("(", "{", "["):
            opening = self.take().text
            argument = self.sum()
            if argument is None:
                raise ParseError(f"{token.text} at position {token.position} has no argument")
            if op == "ln" and self.is_op(","):
                self.take()
                base = self.sum()
                self.expect(_OPENING[opening])
                result = Expr("div", (Expr("ln", (argument,)), Expr("ln", (base,))))  # type: ignore[arg-type]
                self.nesting -= 1
                return result if exponent is None else Expr("pow", (result, exponent))
            self.expect(_OPENING[opening])
        else:
            if not self.starts_atom(functions=False) and not self.is_op("|"):
                raise ParseError(f"{token.text} at position {token.position} has no argument")
            argument = self.power()
            while self.starts_atom(functions=False):
                argument = Expr("mul", (argument, self.power()))
        self.nesting -= 1
        result = Expr(op, (argument,))
        return result if exponent is None else Expr("pow", (result, exponent))


def _negate(expr: Expr) -> Expr:
    if expr.op == "int":
        return Expr.integer(-expr.value)
    return Expr("mul", (_MINUS_ONE, expr))


def _number(text: str) -> Expr:
    if "." not in text:
        return Expr.integer(int(text))
    whole, fraction = text.split(".")
    if not fraction.rstrip("0"):
        return Expr.integer(int(whole or "0"))
    fraction = fraction.rstrip("0")
    numerator = Expr.integer(int((whole or "0") + fraction))
    return Expr("div", (numerator, Expr.integer(10 ** len(fraction))))


def parse_infix(text: str, limits: ParseLimits = DEFAULT_LIMITS, *, prose: bool = True) -> Expr:
    """Parse infix text into a tree; with `prose` (answers of models and people), the prose
    around it is stripped first (`extract_math`), without it (cells of a data file) the whole
    text must be the expression.

    Raises:
        ParseError: text that is not an expression, with the position of the problem; its
            subclasses when the length, nesting or integer-size limits are exceeded.
        UnsupportedExpressionError: another variable (`y`), or a function without a token (`erf`).
    """
    limits.check_length(len(text), "characters")
    math = extract_math(text) if prose else text.strip()
    if not math:
        raise ParseError("no expression found in the text")
    tokens = _tokenize(math, limits)
    try:
        expr = _Parser(tokens, limits).parse()
    except RecursionError:
        raise NestingTooDeepError(f"expression nests deeper than {limits.max_depth}") from None
    limits.check_depth(depth(expr))
    return expr
