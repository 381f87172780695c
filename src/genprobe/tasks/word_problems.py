"""Grade-school word problems from templates, after GSM-Symbolic (Mirzadeh et al. 2024,
"GSM-Symbolic: Understanding the Limitations of Mathematical Reasoning in Large Language
Models", arXiv 2410.05229), with our own templates and exact integer answers.

A template is a few sentences with slots: people (`{A}`, `{B}`, …, drawn from NAMES, distinct),
a kind of thing (`{O}`, from THINGS) and numbers (`{x}`, `{y}`, …). Its answer is a chain of
+, − and × over its numbers, left to right, and every intermediate value is ≥ 0. Each template
has one extension: a sentence with one more number and one more operation (the
`one_more_step` suite and family). A problem may also hold one NoOp sentence (GSM-NoOp): a
plausible clause with a number that does not change the answer (the `noop` suite and family).

Numbers are written as digit tokens (`2 4` for 24, no leading zeros): the vocabulary stays
finite and the same for any number range, every digit is seen in training, and a number larger
than any in training can still be written. The answer is its digits, most significant first.

An input is valid when it parses back against a template: its sentences, in order, are the
template's statements (and, if extended, its extension), at most one NoOp sentence after the
first statement, then the question; slots bound consistently (a person or thing the same
wherever it recurs, different people distinct, the NoOp's person one of the problem's and its
thing the problem's); numbers in their ranges; every intermediate value ≥ 0. That is exactly
what the generator writes (no template id in the input).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from genprobe.errors import ConfigError, check_choice
from genprobe.options import is_integer
from genprobe.tasks.chomsky.base import CHUNK
from genprobe.tasks.probing import padded
from genprobe.tasks.row_edits import gapped
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import NO_ANSWER, DeterministicTask, Examples, Split

DIGITS = tuple("0123456789")
NAMES = ("alice", "ben", "carla", "david", "emma", "farid", "grace", "hiro",
         "ines", "jamal", "kofi", "lena", "mateo", "nora", "omar", "priya")  # fmt: skip
THINGS = ("apples", "marbles", "stickers", "pencils", "cookies",
          "books", "coins", "shells", "cards", "balloons")  # fmt: skip
OPS: dict[str, Callable[[int, int], int]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
}
SLOT = re.compile(r"^\{([A-Za-z])\}$")  # {A}: a person, {O}: the thing, {x}: a number
THING = "O"
MAX_NUMBER = 10**6


@dataclass(frozen=True)
class Template:
    """Sentences with slots, and the answer as a left-to-right chain over the numbers."""

    name: str
    statements: tuple[str, ...]
    question: str
    start: str  # the number the chain starts from
    steps: tuple[tuple[str, str], ...]  # (operation, number) applied in order
    extension: str  # one more statement, before the question
    extension_step: tuple[str, str]
    factors: frozenset[str] = frozenset()  # numbers drawn from 2..max_factor (others: counts)

    def chain(self, extended: bool) -> tuple[tuple[str, str], ...]:
        return (*self.steps, self.extension_step) if extended else self.steps

    def sentences(self, extended: bool) -> tuple[str, ...]:
        """Its statements (with the extension if `extended`) and the question."""
        return (*self.statements, *((self.extension,) if extended else ()), self.question)


T = Template
TEMPLATES = (
    T("gift", ("{A} has {x} {O} .", "{B} gives {A} {y} more {O} ."),
      "how many {O} does {A} have now ?", "x", (("+", "y"),),
      "then {A} loses {z} {O} .", ("-", "z")),
    T("loss", ("{A} had {x} {O} .", "{A} lost {y} of them ."),
      "how many {O} does {A} have left ?", "x", (("-", "y"),),
      "then {B} gives {A} {z} {O} .", ("+", "z")),
    T("boxes", ("{A} has {x} boxes .", "each box holds {y} {O} ."),
      "how many {O} does {A} have ?", "x", (("*", "y"),),
      "{A} gives {z} {O} to {B} .", ("-", "z"), frozenset("x")),
    T("together", ("{A} has {x} {O} .", "{B} has {y} {O} .", "{C} has {z} {O} ."),
      "how many {O} do they have in all ?", "x", (("+", "y"), ("+", "z")),
      "then they give {w} {O} away .", ("-", "w")),
    T("bags", ("{A} buys {x} bags of {O} .", "each bag has {y} {O} .",
               "{A} gives {z} {O} to {B} ."),
      "how many {O} does {A} have left ?", "x", (("*", "y"), ("-", "z")),
      "then {A} finds {w} more {O} .", ("+", "w"), frozenset("x")),
    T("more_than", ("{A} has {x} {O} .", "{B} has {y} more {O} than {A} .",
                    "{C} has {z} fewer {O} than {B} ."),
      "how many {O} does {C} have ?", "x", (("+", "y"), ("-", "z")),
      "then {C} buys {w} more {O} .", ("+", "w")),
    T("rows", ("{A} puts {O} in {x} rows of {y} .", "{A} adds {z} more {O} ."),
      "how many {O} are there now ?", "x", (("*", "y"), ("+", "z")),
      "then {B} takes {w} {O} .", ("-", "w"), frozenset("xy")),
    T("market", ("{A} buys {x} packs of {O} .", "each pack has {y} {O} .",
                 "{A} gives {z} {O} to {B} .", "{A} loses {w} {O} ."),
      "how many {O} does {A} have left ?", "x", (("*", "y"), ("-", "z"), ("-", "w")),
      "then {C} gives {A} {v} more {O} .", ("+", "v"), frozenset("x")),
    T("shelves", ("{A} has {x} shelves with {y} {O} on each shelf .", "{A} sells {z} {O} .",
                  "{B} gives {A} {w} {O} ."),
      "how many {O} does {A} have now ?", "x", (("*", "y"), ("-", "z"), ("+", "w")),
      "then {A} gives {v} {O} to {C} .", ("-", "v"), frozenset("x")),
)  # fmt: skip
TEMPLATE_NAMES = tuple(t.name for t in TEMPLATES)
# The NoOp sentences: a number that no template's answer reads.
NOOPS = ("{n} of the {O} are small .", "{P} is {n} years old .",
         "the shop is {n} minutes from home .")  # fmt: skip


@dataclass(frozen=True)
class Noop:
    kind: int  # index into NOOPS
    position: int  # statements before it (>= 1)
    person: str | None  # one of the problem's people, for the sentence that names one
    number: int


@dataclass(frozen=True)
class Problem:
    """One word problem: a template, its slots filled, extended or not, with a NoOp or not."""

    template: Template
    people: Mapping[str, str]  # slot letter -> name, for the letters its sentences use
    thing: str
    numbers: Mapping[str, int]  # slot -> value, for the numbers its chain uses
    extended: bool = False
    noop: Noop | None = None

    @property
    def values(self) -> list[int]:
        """The chain's value after each step, the starting number first."""
        value = self.numbers[self.template.start]
        values = [value]
        for op, slot in self.template.chain(self.extended):
            value = OPS[op](value, self.numbers[slot])
            values.append(value)
        return values

    @property
    def answer(self) -> int:
        return self.values[-1]

    @property
    def steps(self) -> int:
        return len(self.template.chain(self.extended))

    def tokens(self) -> list[str]:
        """The problem as words, digit tokens and punctuation."""
        sentences = list(self.template.sentences(self.extended))
        if self.noop:
            sentences.insert(self.noop.position, NOOPS[self.noop.kind])
        noop = {"P": self.noop.person, "n": self.noop.number} if self.noop else {}
        filled = {**self.people, THING: self.thing, **self.numbers, **noop}
        out: list[str] = []
        for word in " ".join(sentences).split():
            slot = SLOT.match(word)
            value = filled[slot.group(1)] if slot else word
            out.extend(list(str(value)) if isinstance(value, int) else [value])
        return out


def letters(sentences: Sequence[str]) -> list[str]:
    """The people slots of `sentences`, in order of first use."""
    found = re.findall(r"\{([A-Z])\}", " ".join(sentences))
    return [letter for letter in dict.fromkeys(found) if letter != THING]


@dataclass(frozen=True)
class WordProblems(DeterministicTask):
    """Word problems of one to three steps (+, -, ×), the answer's digits as the output.

    `train`, `validation` and `test` hold the templates as they are; the suites `noop` and
    `one_more_step` add an irrelevant sentence with a number, or one more step, to each.

    Examples:
        alice has 1 2 marbles . ben gives alice 5 more marbles . how many marbles does alice have now ?  -> 1 7
        kofi buys 3 bags of coins . each bag has 1 4 coins . kofi gives 9 coins to lena . how many coins does kofi have left ?  -> 3 3
        hiro had 2 0 cards . hiro lost 2 0 of them . how many cards does hiro have left ?  -> 0
    """  # noqa: E501

    templates: str = "all"  # comma-separated template names, or all
    max_number: int = 50  # counts are 1..max_number
    max_factor: int = 9  # factors (boxes, bags, rows, ...) are 2..max_factor

    def __post_init__(self) -> None:
        for name in self.chosen_names:
            check_choice("templates", name, TEMPLATE_NAMES)
        if not is_integer(self.max_number) or not 1 <= self.max_number <= MAX_NUMBER:
            raise ConfigError("max_number", f"an integer in 1..{MAX_NUMBER}", self.max_number)
        if not is_integer(self.max_factor) or not 2 <= self.max_factor <= MAX_NUMBER:
            raise ConfigError("max_factor", f"an integer in 2..{MAX_NUMBER}", self.max_factor)

    @property
    def chosen_names(self) -> tuple[str, ...]:
        if self.templates == "all":
            return TEMPLATE_NAMES
        return tuple(dict.fromkeys(n.strip() for n in str(self.templates).split(",")))

    @cached_property
    def chosen(self) -> tuple[Template, ...]:
        return tuple(t for t in TEMPLATES if t.name in self.chosen_names)

    @cached_property
    def source_vocab(self) -> tuple[str, ...]:
        words = " ".join(s for t in self.chosen for s in t.sentences(True)) + " " + " ".join(NOOPS)
        fixed = [w for w in words.split() if not SLOT.match(w)]
        return tuple(dict.fromkeys((*DIGITS, ".", "?", *NAMES, *THINGS, *fixed)))

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return DIGITS

    def splits(self) -> Mapping[str, Split]:
        plain = self._lengths(extended=False, noop=False)
        drawn = f"templates {', '.join(self.chosen_names)}"
        return {
            "train": Split(f"training data: {drawn}", plain, 20_000),
            "validation": Split(f"like train; early stopping: {drawn}", plain, 2_000),
            "test": Split(f"in distribution: {drawn}", plain, 1_000),
            "noop": Split(
                "problems drawn as in test, each with one irrelevant sentence holding a number",
                self._lengths(extended=False, noop=True), 1_000, disjoint=True,
            ),
            "one_more_step": Split(
                "problems drawn as in test, each with its template's extension: one more step",
                self._lengths(extended=True, noop=False), 1_000, disjoint=True,
            ),
        }  # fmt: skip

    def suites(self) -> tuple[str, ...]:
        return ("test", "noop", "one_more_step")

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        problems = [
            problem
            for chunk in range(-(-n // CHUNK))
            for problem in self._chunk(split, split_stream(seed, split, chunk))
        ][:n]
        src = self.encode(problems)
        return Examples(src, self.solve(src))

    def solve(self, src: np.ndarray) -> np.ndarray:
        answers = [[int(d) for d in str(p.answer)] if p else [NO_ANSWER] for p in self.parse(src)]
        gold = np.full((len(answers), max(map(len, answers), default=0)), -1, dtype=np.int64)
        for row, digits in enumerate(answers):
            gold[row, : len(digits)] = digits
        return gold

    def max_output_length(self, input_length: int) -> int:
        """The digits of the largest answer any template (extended) can have."""
        largest = 0
        for template in self.chosen:
            value = self._largest(template.start, template)
            for op, slot in template.chain(extended=True):
                value = value if op == "-" else OPS[op](value, self._largest(slot, template))
            largest = max(largest, value)
        return len(str(largest))

    # Problems: drawn, written as ids, and read back.
    def draw(self, rng: np.random.Generator, template: Template | None = None) -> Problem:
        """A problem of `template` (drawn among the chosen ones if None), as written in
        training: not extended, no NoOp."""
        if template is None:
            template = self.chosen[int(rng.integers(len(self.chosen)))]
        return self.redrawn(Problem(template, {}, "", {}), rng)

    def redrawn(self, problem: Problem, rng: np.random.Generator, numbers: bool = True) -> Problem:
        """The same template, extension and NoOp (kind and place) with new people, thing and
        (if `numbers`) numbers."""
        template = problem.template
        who = letters(template.sentences(problem.extended))
        picked = rng.choice(len(NAMES), size=len(who), replace=False)
        people = {letter: NAMES[i] for letter, i in zip(who, picked, strict=True)}
        thing = THINGS[int(rng.integers(len(THINGS)))]
        values = self._numbers(template, problem.extended, rng) if numbers else problem.numbers
        noop = problem.noop and self._noop(people, rng, problem.noop.kind, problem.noop.position)
        return Problem(template, people, thing, values, problem.extended, noop)

    def with_noop(self, problem: Problem, rng: np.random.Generator) -> Problem | None:
        """`problem` with a NoOp sentence (kind and place drawn), None if it has one."""
        if problem.noop:
            return None
        statements = len(problem.template.sentences(problem.extended)) - 1
        kind, position = int(rng.integers(len(NOOPS))), int(rng.integers(1, statements + 1))
        return replace(problem, noop=self._noop(problem.people, rng, kind, position))

    def with_extension(self, problem: Problem, rng: np.random.Generator) -> Problem | None:
        """`problem` with its template's extension, its number drawn as the chain's (a new
        person drawn where the extension names one); None if already extended or if no number
        keeps the value >= 0."""
        if problem.extended:
            return None
        template = problem.template
        op, slot = template.extension_step
        number = self._number(template, slot, op, problem.answer, rng)
        if number is None:
            return None
        new = [x for x in letters(template.sentences(True)) if x not in problem.people]
        free = [name for name in NAMES if name not in problem.people.values()]
        picked = rng.choice(len(free), size=len(new), replace=False)
        people = {**problem.people, **{x: free[i] for x, i in zip(new, picked, strict=True)}}
        numbers = {**problem.numbers, slot: number}
        return replace(problem, people=people, numbers=numbers, extended=True)

    def encode(self, problems: Sequence[Problem]) -> np.ndarray:
        """(n, L) input ids of `problems`."""
        ids = {token: i for i, token in enumerate(self.source_vocab, start=1)}
        return padded([np.array([ids[t] for t in p.tokens()], np.int64) for p in problems])

    def parse(self, src: np.ndarray) -> list[Problem | None]:
        """The problem each input (ids) writes, None where it is not one of the task's."""
        src = np.asarray(src)
        names = ("", *self.source_vocab)
        broken = gapped(src) if src.shape[1] else np.zeros(len(src), bool)
        return [
            None if bad else self._parse(tuple(names[i] for i in row if i > 0))
            for row, bad in zip(src, broken, strict=True)
        ]

    def _parse(self, tokens: tuple[str, ...]) -> Problem | None:
        sentences, start = [], 0
        for end, token in enumerate(tokens):
            if token in (".", "?"):
                sentences.append(tokens[start : end + 1])
                start = end + 1
        if start != len(tokens) or len(sentences) < 2:
            return None
        for at in range(len(sentences) - 1):  # no NoOp (at 0), or the NoOp at `at`
            noop = None
            if at:
                matched = [(k, _match(NOOPS[k], sentences[at])) for k in range(len(NOOPS))]
                noop = next(((k, b) for k, b in matched if b is not None), None)
                if noop is None:
                    continue
            rest = sentences[:at] + sentences[at + 1 :] if at else sentences
            for template in self.chosen:
                if problem := self._read(template, rest, noop, at):
                    return problem
        return None

    def _read(
        self, template: Template, sentences: list, noop: tuple | None, at: int
    ) -> Problem | None:
        extended = len(sentences) == len(template.statements) + 2
        patterns = template.sentences(extended)
        if len(patterns) != len(sentences):
            return None
        bound: dict[str, str | int] | None = {}
        for pattern, sentence in zip(patterns, sentences, strict=True):
            bound = _match(pattern, sentence, bound)
            if bound is None:
                return None
        people = {k: v for k, v in bound.items() if k.isupper() and k != THING}
        numbers = {k: v for k, v in bound.items() if k.islower()}
        if len(set(people.values())) < len(people) or not set(people.values()) <= set(NAMES):
            return None
        problem = Problem(template, people, str(bound[THING]), numbers, extended)
        if noop:
            kind, slots = noop
            if slots.get(THING, problem.thing) != problem.thing:
                return None
            person = slots.get("P")
            if person not in (None, *people.values()) or not self._in_range(slots["n"], "count"):
                return None
            problem = replace(problem, noop=Noop(kind, at, person, slots["n"]))
        return problem if self._valid(problem) else None

    def _valid(self, problem: Problem) -> bool:
        factors = problem.template.factors
        ranged = all(
            self._in_range(value, "factor" if slot in factors else "count")
            for slot, value in problem.numbers.items()
        )
        return ranged and problem.thing in THINGS and min(problem.values) >= 0

    def _in_range(self, value: int, kind: str) -> bool:
        low, high = (2, self.max_factor) if kind == "factor" else (1, self.max_number)
        return low <= value <= high

    def _chunk(self, split: str, rng: np.random.Generator) -> list[Problem]:
        change = {"noop": self.with_noop, "one_more_step": self.with_extension}.get(split)
        problems = []
        while len(problems) < CHUNK:
            problem = self.draw(rng)
            problem = change(problem, rng) if change else problem
            if problem is not None:
                problems.append(problem)
        return problems

    def _numbers(
        self, template: Template, extended: bool, rng: np.random.Generator
    ) -> dict[str, int]:
        """The chain's numbers: each uniform in its range; a subtracted one uniform in 1..the
        value so far (capped by its range), the whole draw repeated if that value is 0."""
        while True:
            numbers = {template.start: self._uniform(template, template.start, rng)}
            value = numbers[template.start]
            for op, slot in template.chain(extended):
                number = self._number(template, slot, op, value, rng)
                if number is None:
                    break
                numbers[slot] = number
                value = OPS[op](value, number)
            else:
                return numbers

    def _number(
        self, template: Template, slot: str, op: str, value: int, rng: np.random.Generator
    ) -> int | None:
        if op != "-":
            return self._uniform(template, slot, rng)
        high = min(value, self.max_number)
        return int(rng.integers(1, high + 1)) if high >= 1 else None

    def _uniform(self, template: Template, slot: str, rng: np.random.Generator) -> int:
        high = self._largest(slot, template)
        low = 2 if slot in template.factors else 1
        return int(rng.integers(low, high + 1))

    def _largest(self, slot: str, template: Template | None = None) -> int:
        return self.max_factor if template and slot in template.factors else self.max_number

    def _noop(
        self, people: Mapping[str, str], rng: np.random.Generator, kind: int, position: int
    ) -> Noop:
        person = None
        if "{P}" in NOOPS[kind]:
            person = list(people.values())[int(rng.integers(len(people)))]
        return Noop(kind, position, person, int(rng.integers(1, self.max_number + 1)))

    def _lengths(self, extended: bool, noop: bool) -> tuple[int, int]:
        """The fewest and most tokens of a problem of the chosen templates."""
        digits = {"count": len(str(self.max_number)), "factor": len(str(self.max_factor))}
        low, high = [], []
        for template in self.chosen:
            words = " ".join(template.sentences(extended)).split()
            slots = [SLOT.match(w) for w in words]
            numbers = [m.group(1) for m in slots if m and m.group(1).islower()]
            most = sum(digits["factor" if s in template.factors else "count"] for s in numbers)
            low.append(len(words))
            high.append(len(words) - len(numbers) + most)
        if noop:
            sizes = [len(s.split()) for s in NOOPS]
            return min(low) + min(sizes), max(high) + max(sizes) - 1 + digits["count"]
        return min(low), max(high)


def _match(
    pattern: str, sentence: Sequence[str], bound: dict[str, str | int] | None = None
) -> dict[str, str | int] | None:
    """The slots of `pattern` bound to `sentence`'s tokens (consistent with `bound`), or None
    where it does not fit. A number slot takes a run of digit tokens without a leading zero."""
    bound = dict(bound or {})
    at = 0
    for word in pattern.split():
        if at >= len(sentence):
            return None
        slot = SLOT.match(word)
        if not slot:
            if sentence[at] != word:
                return None
            at += 1
            continue
        name = slot.group(1)
        if name.islower():
            end = at
            while end < len(sentence) and sentence[end] in DIGITS:
                end += 1
            run = "".join(sentence[at:end])
            if not run or (run[0] == "0" and len(run) > 1):
                return None
            value: str | int = int(run)
            at = end
        else:
            value = sentence[at]
            at += 1
            if value not in (THINGS if name == THING else NAMES):
                return None
        if bound.setdefault(name, value) != value:
            return None
    return bound if at == len(sentence) else None
