"""Progress off a terminal (a log file, CI): plain lines rather than silence (pytest's captured
stderr is no terminal)."""

import math

import pytest

from genprobe.cli.console import progress_bar, status


def test_a_bar_prints_a_plain_line_per_update_at_most_every_interval(capsys):
    with progress_bar(every=0) as bar:
        task = bar.add_task("seeds 1-2", total=4)
        for step in range(1, 5):
            bar.update(task, completed=step)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        f"seeds 1-2: {i} of 4" for i in range(1, 5)
    ]
    assert all(line.startswith("[0:") for line in lines)

    with progress_bar(every=math.inf) as bar:
        first, second = bar.add_task("a", total=None), bar.add_task("b", total=None)
        for step in range(3):
            bar.update(first, completed=step)
            bar.update(second, completed=step)
    assert [line.split("] ", 1)[1] for line in capsys.readouterr().err.splitlines()] == [
        "a: 0",
        "b: 0",
    ]


def test_a_quiet_or_idle_bar_prints_nothing(capsys):
    with progress_bar(quiet=True) as bar:
        bar.update(bar.add_task("x", total=2), completed=1)
    with progress_bar() as bar:
        bar.add_task("never updated", total=2)
    assert capsys.readouterr().err == ""


def test_a_status_prints_each_message_as_a_line_once_a_second_comes(capsys):
    with status("starting") as log:
        log("generation 1: verifying 3 shards")
        assert capsys.readouterr().err == ""  # held: an early error stays the only line
        log("generation 1: 2 novel failures, archive 2")
    lines = capsys.readouterr().err.splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "generation 1: verifying 3 shards",
        "generation 1: 2 novel failures, archive 2",
    ]
    with status("starting") as log:
        log("the only step")
    assert capsys.readouterr().err.endswith("] the only step\n")


def test_a_status_ended_by_an_error_after_one_message_prints_nothing(capsys):
    with pytest.raises(ValueError), status("starting") as log:
        log("building in-distribution")
        raise ValueError("bad line")
    assert capsys.readouterr().err == ""
