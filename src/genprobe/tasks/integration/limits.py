"""Size limits every parser enforces before building anything, so hostile input stays cheap."""

from __future__ import annotations

from dataclasses import dataclass

from genprobe.errors import InputTooLongError, IntegerTooLargeError, NestingTooDeepError


@dataclass(frozen=True)
class ParseLimits:
    # characters of infix text, after prose is stripped
    max_chars: int = 4000
    # prefix tokens; Lample & Charton cap sequences at 512, positions at 4096
    max_tokens: int = 4096
    # nesting depth of the tree (a right-nested sum of n terms is n deep)
    max_depth: int = 300
    # decimal digits of one integer literal
    max_int_digits: int = 100

    def check_length(self, n: int, unit: str) -> None:
        limit = self.max_chars if unit == "characters" else self.max_tokens
        if n > limit:
            raise InputTooLongError(f"input has {n} {unit}; the limit is {limit}")

    def check_depth(self, depth: int) -> None:
        if depth > self.max_depth:
            raise NestingTooDeepError(f"expression nests deeper than {self.max_depth}")

    def check_digits(self, digits: int) -> None:
        if digits > self.max_int_digits:
            raise IntegerTooLargeError(
                f"integer with {digits} digits; the limit is {self.max_int_digits}"
            )


DEFAULT_LIMITS = ParseLimits()
# for re-reading prefix we wrote ourselves: the input limits applied when it was first read
TRUSTED_LIMITS = ParseLimits(max_tokens=10**7, max_depth=10**7, max_int_digits=10**7)
