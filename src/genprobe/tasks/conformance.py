"""Checks that a task keeps the contract of `genprobe.tasks.Task` (scikit-learn's
`check_estimator`, for tasks).

`check_contract` is cheap and structural; it runs whenever a `py:` task is loaded, so a broken
task fails in one line before a run directory is made. `check_task` adds what a study relies
on; the test suite runs it over every registered task, and a user can run it on their own:

    from genprobe.tasks.conformance import check_task
    check_task(MyTask(), "py:my_task:MyTask")
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from genprobe.errors import GenprobeError, TaskContractError
from genprobe.tasks.task import Examples, Split, Task

SPLIT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ROLES = ("train", "validation")  # a study's own names for its training and early-stopping data
SAMPLE = 16


def check_contract(task: Task, name: str) -> None:
    """Vocabularies, splits, a few generated examples, their verification and lengths.

    Raises:
        TaskContractError: the first thing that breaks the contract, naming the method and
            what it returned.
    """
    for attribute in ("source_vocab", "target_vocab"):
        _check_vocab(name, attribute, _call(name, attribute, lambda a=attribute: getattr(task, a)))
    splits = _call(name, "splits()", task.splits)
    if not isinstance(splits, Mapping) or not splits:
        _broken(name, "splits()", splits, "a non-empty mapping of name to Split")
    for split_name, split in splits.items():
        if not (isinstance(split_name, str) and SPLIT_NAME.match(split_name)):
            _broken(name, "splits()", split_name, "names of letters, digits, '_', '-', '.'")
        if not isinstance(split, Split):
            _broken(name, f"splits()[{split_name!r}]", split, "a genprobe.tasks.Split")
    suites = _call(name, "suites()", task.suites)
    if not isinstance(suites, tuple) or not suites or set(suites) & set(ROLES):
        _broken(name, "suites()", suites, f"a non-empty tuple of split names other than {ROLES}")
    for split in (task.train_split, task.validation_split, *suites):
        _call(name, f"split_spec({split!r})", lambda s=split: task.split_spec(s))
    examples = _generated(task, name, task.train_split, SAMPLE)
    out_len = _output_lengths(examples)
    verdicts = _call(name, "verify(…)", lambda: task.verify(examples.src, examples.tgt, out_len))
    if not (isinstance(verdicts, np.ndarray) and verdicts.shape == (len(examples),)):
        _broken(name, "verify(gold)", verdicts, f"a bool array of shape ({len(examples)},)")
    if verdicts.dtype != bool or not verdicts.all():
        _broken(name, "verify(gold)", verdicts, "True for every generated example")
    lengths = _call(name, "length(src)", lambda: task.length(examples.src))
    if not (isinstance(lengths, np.ndarray) and lengths.shape == (len(examples),)):
        _broken(name, "length(src)", lengths, f"an int array of shape ({len(examples)},)")
    longest = _call(name, "max_output_length(…)", lambda: task.max_output_length(_width(examples)))
    if not isinstance(longest, int) or longest < _output_lengths(examples).max(initial=0):
        _broken(name, "max_output_length(L)", longest, "an int >= every right output's length")


def check_task(task: Task, name: str, size: int = 200) -> None:
    """`check_contract`, then what a study relies on, for the training split and every suite:
    the same examples for the same seed, the first n independent of n, gold outputs verify
    and damaged ones do not, file round trip, every token of both vocabularies used (in the
    training split or the suites), and no input of a disjoint suite among the training inputs.

    Raises:
        TaskContractError: the first property that does not hold.
    """
    from genprobe.tasks.files import read_examples, write_examples

    check_contract(task, name)
    training = _generated(task, name, task.train_split, task.split_spec(task.train_split).size)
    train_keys = _keys(training)
    # Tokens count as used anywhere in the whole training split, not only in the first `size`
    # examples: a table of 97 answers need not show every one among its first 200.
    used_src = set(np.unique(training.src[training.src > 0]).tolist())
    used_tgt = set(np.unique(training.tgt[training.tgt >= 0]).tolist())
    for split in (task.train_split, *task.suites()):
        n = min(size, task.split_spec(split).size)
        examples = _generated(task, name, split, n)
        again, fewer = (_generated(task, name, split, m) for m in (n, max(1, n // 3)))
        if not _same(examples, again):
            _broken(name, f"generate({split!r}, {n}, 0)", "other examples", "the same each time")
        if not _same(_head(examples, len(fewer)), fewer):
            _broken(name, f"generate({split!r}, n, 0)", "other first examples", "a prefix of n+")
        held = _input_lengths(examples)
        low, high = task.split_spec(split).lengths
        if held.min() < low or held.max() > high:
            got = f"inputs of {held.min()}-{held.max()} tokens"
            _broken(name, f"generate({split!r}, {n}, 0)", got, f"the split's lengths {low}-{high}")
        if not task.verify(examples.src, examples.tgt, _output_lengths(examples)).all():
            _broken(name, f"verify(gold of {split!r})", "False", "True for gold outputs")
        for damage, (src, out, length) in _damaged(examples).items():
            if task.verify(src, out, length).any():
                _broken(name, f"verify({damage} outputs of {split!r})", "True", "False")
        with tempfile.TemporaryDirectory() as tmp:
            path = write_examples(Path(tmp) / "x.jsonl", task, examples)
            read = read_examples(path, task)
        if not _same(examples, Examples(read.src, read.out)):
            _broken(name, "write_examples/read_examples", "other examples", "a round trip")
        if task.split_spec(split).disjoint and _keys(examples) & train_keys:
            _broken(name, f"generate({split!r})", "training inputs", "inputs not in training")
        used_src.update(np.unique(examples.src[examples.src > 0]).tolist())
        used_tgt.update(np.unique(examples.tgt[examples.tgt >= 0]).tolist())
    for vocab, used, offset in ((task.source_vocab, used_src, 1), (task.target_vocab, used_tgt, 0)):
        unused = [token for i, token in enumerate(vocab, start=offset) if i not in used]
        if unused:
            _broken(name, "generate(…)", f"no {unused[:3]}", "every vocabulary token used")


def _call(name: str, method: str, function: Any) -> Any:
    try:
        return function()
    except TaskContractError:
        raise
    except GenprobeError as error:
        raise TaskContractError(f"task {name}: {method} raised: {error}") from None
    except Exception as error:
        raise TaskContractError(f"task {name}: {method} raised {error!r}") from None


def _broken(name: str, method: str, got: Any, expected: str) -> None:
    text = repr(got)
    text = text if len(text) <= 80 else f"{text[:77]}..."
    raise TaskContractError(f"task {name}: {method} returned {text}; expected {expected}")


def _check_vocab(name: str, attribute: str, vocab: Any) -> None:
    ok = isinstance(vocab, tuple) and vocab and len(set(vocab)) == len(vocab)
    if not ok or not all(isinstance(t, str) and t and not t.split()[1:] for t in vocab):
        _broken(name, attribute, vocab, "a tuple of distinct tokens without spaces")


def _generated(task: Task, name: str, split: str, n: int) -> Examples:
    call = f"generate({split!r}, {n}, 0)"
    examples = _call(name, call, lambda: task.generate(split, n, 0))
    if not isinstance(examples, Examples) or len(examples) != n:
        _broken(name, call, examples, f"Examples of {n} rows")
    for field, low, high, pad in (
        ("src", 0, len(task.source_vocab), 0),
        ("tgt", -1, len(task.target_vocab) - 1, -1),
    ):
        ids = getattr(examples, field)
        if not (isinstance(ids, np.ndarray) and ids.ndim == 2 and ids.dtype.kind == "i"):
            _broken(name, f"{call}.{field}", ids, "a 2-d integer array")
        if ids.size and (ids.min() < low or ids.max() > high):
            _broken(name, f"{call}.{field}", ids, f"ids in [{low}, {high}]")
        real = ids != pad
        if (real[:, 1:] & ~real[:, :-1]).any():
            _broken(name, f"{call}.{field}", ids, f"{pad} only after the end of a sequence")
    if (_input_lengths(examples) == 0).any():
        _broken(name, f"{call}.src", examples.src, "no empty input")
    return examples


def _input_lengths(examples: Examples) -> np.ndarray:
    return (examples.src > 0).sum(axis=1)


def _output_lengths(examples: Examples) -> np.ndarray:
    return (examples.tgt >= 0).sum(axis=1)


def _width(examples: Examples) -> int:
    return int(_input_lengths(examples).max())


def _keys(examples: Examples) -> set[bytes]:
    return {row[row > 0].tobytes() for row in examples.src}


def _head(examples: Examples, n: int) -> Examples:
    return Examples(examples.src[:n], examples.tgt[:n])


def _same(a: Examples, b: Examples) -> bool:
    """Equal as sequences, whatever the padding width."""
    return all(
        len(x) == len(y)
        and all(np.array_equal(p[p != pad], q[q != pad]) for p, q in zip(x, y, strict=True))
        for x, y, pad in ((a.src, b.src, 0), (a.tgt, b.tgt, -1))
    )


def _damaged(examples: Examples) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(inputs, outputs, lengths) that no exact rule accepts: one token added, an unknown
    token, one token cut (where there is one)."""
    src, length = examples.src, _output_lengths(examples)
    grown = np.pad(examples.tgt, ((0, 0), (0, 1)), constant_values=-1)
    grown[np.arange(len(length)), length] = 0
    damaged = {"lengthened": (src, grown, length + 1)}
    some = length > 0
    if some.any():
        unknown = examples.tgt[some].copy()
        unknown[:, 0] = -1
        damaged["unknown-token"] = (src[some], unknown, length[some])
        cut = examples.tgt[some].copy()
        cut[np.arange(some.sum()), length[some] - 1] = -1
        damaged["shortened"] = (src[some], cut, length[some] - 1)
    return damaged
