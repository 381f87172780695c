"""Every registered task keeps the contract, every docstring example is right, and the checks
catch a task that breaks it."""

import re
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from genprobe.errors import TaskContractError
from genprobe.tasks import DeterministicTask, Examples, Split, load_task
from genprobe.tasks.conformance import check_contract, check_task
from genprobe.tasks.registry import TASKS, task_probes
from genprobe.tasks.scan import FAMILIES
from genprobe.tasks.tokens import encode_inputs, encode_outputs

EXAMPLES = Path(__file__).parents[2] / "examples"
EXAMPLE_LINE = re.compile(r"^\s+(\S.*?)\s+->\s+(.*?)(\s{2,}\(.*\))?$")


# examples per split checked, where the default 200 take most of a minute: integration's
# generator makes a few hundred pairs a second, and its held-out splits keep one pair in ten
# (the whole training split is still made, for its vocabulary)
CHECKED = {"integration": 50}


@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_keeps_the_contract(name):
    check_task(load_task(name), name, CHECKED.get(name, 200))


@pytest.mark.parametrize("split", [f for f in FAMILIES if f != "simple"])
def test_every_scan_split_keeps_the_contract(split):
    check_task(load_task("scan", {"split": split}), "scan")


def test_the_example_task_file_keeps_the_contract(monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    task = load_task("py:copy_task:Copy", {"letters": "7"})
    check_task(task, "py:copy_task:Copy")
    assert task.options() == {"letters": 7} and task.suites() == ("longer",)


@pytest.mark.parametrize("name", list(TASKS))
def test_the_examples_in_each_docstring_are_right(name):
    task = load_task(name)
    pairs = []
    for line in type(task).__doc__.split("Examples:")[1].splitlines():
        if match := EXAMPLE_LINE.match(line):
            output = "" if match.group(2).strip() == "(empty)" else match.group(2)
            pairs.append((match.group(1).split(), output.split()))
    assert len(pairs) >= 2, "each task shows at least two examples"
    src = encode_inputs(task.source_vocab, [(None, i) for i, _ in pairs], "docstring")
    out, length = encode_outputs(task.target_vocab, [o for _, o in pairs])
    assert task.verify(src, out, length).all()


@dataclass(frozen=True)
class Echo(DeterministicTask):
    """A task that keeps the contract, to break one method at a time below."""

    width: int = 3

    @property
    def source_vocab(self):
        return ("a", "b")

    @property
    def target_vocab(self):
        return ("a", "b")

    def splits(self):
        return {
            "train": Split("train", (1, 3), 50),
            "validation": Split("validation", (1, 3), 10),
            "test": Split("test", (1, 3), 10),
        }

    def suites(self):
        return ("test",)

    def generate(self, split, n, seed):
        rng = np.random.default_rng([seed, len(split)])
        rows = rng.integers(1, 3, size=(max(n, 64), self.width))[:n]
        return Examples(rows, self.solve(rows))

    def solve(self, src):
        return np.where(src > 0, src - 1, -1)

    def max_output_length(self, input_length):
        return input_length


class LiesAboutItsRule(Echo):
    def verify(self, src, out, out_len):
        return np.ones(len(src), dtype=bool)


class ForgetsItsFirstExamples(Echo):
    def generate(self, split, n, seed):
        rows = np.random.default_rng([seed, n]).integers(1, 3, size=(n, self.width))
        return Examples(rows, self.solve(rows))


class SpacesInTokens(Echo):
    @property
    def source_vocab(self):
        return ("a b", "c")


class VerifiesAList(Echo):
    def verify(self, src, out, out_len):
        return [True] * len(src)


class MisstatesItsLengths(Echo):
    def splits(self):
        return {name: replace(s, lengths=(1, 2)) for name, s in super().splits().items()}


class TooShortOutputs(Echo):
    def max_output_length(self, input_length):
        return 1


def test_a_task_that_keeps_the_contract_passes():
    check_task(Echo(), "echo")


@pytest.mark.parametrize(
    "task, message",
    [
        (LiesAboutItsRule(), r"verify\(lengthened outputs of 'train'\) returned 'True'"),
        (ForgetsItsFirstExamples(), r"generate\('train', n, 0\) returned 'other first examples'"),
        (SpacesInTokens(), r"source_vocab returned \('a b', 'c'\); expected a tuple of distinct"),
        (VerifiesAList(), r"verify\(gold\) returned \[True, "),
        (TooShortOutputs(), r"max_output_length\(L\) returned 1"),
        (MisstatesItsLengths(), r"'inputs of 3-3 tokens'; expected the split's lengths 1-2"),
        (replace(Echo(), width=0), r"no empty input"),
    ],
)
def test_the_checks_catch_a_task_that_breaks_the_contract(task, message):
    with pytest.raises(TaskContractError, match=message):
        check_task(task, "broken")


def test_the_structural_check_alone_finds_what_a_py_task_breaks_at_load():
    with pytest.raises(TaskContractError, match="verify"):
        check_contract(VerifiesAList(), "py:m:VerifiesAList")


def declared_moves(probes):
    """Every family, relation partner, composition (row i joined with the rows after it) and
    mutation a task's probes declare, by a readable name."""
    moves = {f"family {n}": f.perturb for n, f in probes.families().items()}
    moves |= {f"relation {n}": r.partner for n, r in probes.relations().items()}
    moves |= {f"composition {n}": partial(joined, c) for n, c in probes.compositions().items()}
    return moves | {f"mutation {n}": m.perturb for n, m in probes.mutations().items()}


def joined(composition, src, rng):
    taken = composition.takes(src)
    assert taken.dtype == bool and taken.shape == (len(src),)
    return composition.join([np.roll(src, -i, axis=0) for i in range(composition.arity)])


@pytest.mark.parametrize(
    "name, options",
    [*((name, {}) for name in TASKS), ("addition", {"format": "plain"}),
     ("addition", {"format": "reversed"}), ("binary_operation", {"operation": "x-y"})],
)  # fmt: skip
def test_every_tasks_probe_declarations_keep_the_contract(name, options):
    task = load_task(name, options)
    probes = task_probes(task)
    src = task.generate(task.train_split, 64, 0).src
    valid = probes.valid_inputs(src)
    assert valid.dtype == bool and valid.shape == (64,) and valid.all()
    assert set(probes.mutations()) >= {"substitute", "insert", "delete", "swap"}
    for label, move in declared_moves(probes).items():
        first = move(src, np.random.default_rng(7))
        again = move(src, np.random.default_rng(7))
        assert first.src.dtype == src.dtype and first.origin.dtype.kind == "i", label
        assert np.array_equal(first.src, again.src), f"{label}: not the same for one seed"
        assert np.array_equal(first.origin, again.origin), label
        assert len(first.origin) == len(first.src), label
        assert ((first.origin >= 0) & (first.origin < len(src))).all(), label
        checked = probes.valid_inputs(first.src)  # a token edit may break an input, never crash
        assert checked.dtype == bool and checked.shape == (len(first.src),), label
        if not label.startswith("mutation") or label[9:] in probes.families():
            assert checked.all(), f"{label}: an output that is not one of the task's inputs"
    texts = probes.input_text(src)
    assert len(texts) == 64 and all(isinstance(s, str) and s for s in texts)
    assert len(set(texts)) == len({tuple(row) for row in src.tolist()})  # one text per input
    tgt = task.generate(task.train_split, 64, 0).tgt
    answers = probes.output_text(tgt)
    assert len(answers) == 64 and all(isinstance(s, str) for s in answers)
    assert len(set(answers)) == len({tuple(row[row >= 0]) for row in tgt})  # one per output
    features = probes.features(src)
    assert features and all(isinstance(k, str) for k in features)
    for key, values in features.items():
        assert isinstance(values, np.ndarray) and values.shape == (64,), key
        assert np.issubdtype(values.dtype, np.number) or values.dtype == bool, key
    for name, derived in probes.derived().items():  # of 8 inputs, as if solved
        right = None if task.solve(src[:1]) is not None else tgt[:8]
        sets = np.full(8, "")  # base inputs
        made, again = (derived.build(src[:8], right, sets, 4, 0) for _ in range(2))
        assert np.array_equal(made.src, again.src), f"derived {name}: not the same for one seed"
        assert len(made.sources) == len(made.sets) == len(made), name
        assert ((made.sources >= -1) & (made.sources < 8)).all(), name
        assert (made.sources[:, :1] >= 0).all(), f"derived {name}: an input made of none"
        assert probes.valid_inputs(made.src).all(), f"derived {name}: not the task's inputs"
        if made.tgt is not None:  # every known right output is right
            known = (made.tgt >= 0).any(axis=1)
            length = (made.tgt[known] >= 0).sum(axis=1)
            assert task.verify(made.src[known], made.tgt[known], length).all(), name
