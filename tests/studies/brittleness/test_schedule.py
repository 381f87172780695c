"""The decode/verify schedule of solve shards: `auto` keeps the faster mode by the rule of
`studies.brittleness.schedule` (timed on an injected clock, never the real one), and the
results of `solve` are the same in turn, overlapped, or mixed."""

import pytest
import sympy as sp

from genprobe.errors import ConfigError
from genprobe.studies.brittleness.schedule import PROBES, REPROBE_EVERY, Mode, Schedule
from genprobe.studies.brittleness.solve import SuiteRow, solve
from genprobe.tasks.integration import Verifier, VerifierConfig, X, from_sympy
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.under_test.adapters.callable import CallableModel
from genprobe.under_test.adapters.integration_tokens import IntegrationSequenceModel

IN_TURN, OVERLAPPED = Mode.IN_TURN, Mode.OVERLAPPED
PROBING = [IN_TURN] + [OVERLAPPED, IN_TURN] * PROBES  # warm-up, then taking turns


class Clock:
    """Seconds that pass only when a test says so."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def run_steps(schedule, clock, seconds, n, decoded=64, verified=64):
    """Modes of `n` steps, each taking `seconds[mode]` on `clock`."""
    modes = []
    for _ in range(n):
        with schedule.step(decoded, verified) as mode:
            clock.now += seconds[mode]
        modes.append(mode)
    return modes


@pytest.mark.parametrize(
    ("overlapped", "faster", "note"),
    [
        # 2 cores: torch threads and verifier processes contend
        (1.25, IN_TURN, "in turn (overlapped 19.5 ms vs in turn 15.6 ms per problem)"),
        (0.5, OVERLAPPED, "overlapped (overlapped 7.8 ms vs in turn 15.6 ms per problem)"),
    ],
)
def test_auto_probes_both_modes_then_keeps_the_faster(overlapped, faster, note):
    clock, notes = Clock(), []
    schedule = Schedule("auto", clock, notes.append)
    modes = run_steps(schedule, clock, {IN_TURN: 1.0, OVERLAPPED: overlapped}, 20)
    assert modes == PROBING + [faster] * (20 - len(PROBING))
    assert notes == [f"decode/verify: {note}"]


def test_the_first_timed_step_starts_the_pool_and_does_not_count():
    clock = Clock()
    schedule = Schedule("auto", clock)
    seconds = {IN_TURN: 1.0, OVERLAPPED: 1.2}
    run_steps(schedule, clock, {IN_TURN: 30.0}, 1)  # in turn, and it starts the pool
    modes = run_steps(schedule, clock, seconds, 10)
    assert modes[2 * PROBES :] == [IN_TURN] * (10 - 2 * PROBES)
    assert len(schedule.times[IN_TURN]) == modes.count(IN_TURN)


def test_steps_that_only_decode_or_only_verify_are_in_turn_and_not_timed():
    clock = Clock()
    schedule = Schedule("auto", clock)
    assert run_steps(schedule, clock, {IN_TURN: 5.0}, 2, decoded=64, verified=0) == [IN_TURN] * 2
    assert run_steps(schedule, clock, {IN_TURN: 5.0}, 1, decoded=0, verified=64) == [IN_TURN]
    assert schedule.timed_steps == 0 and schedule.choice is None


def test_steps_compare_per_problem_and_the_choice_carries_over_shards():
    """Shards of 3 batches, the last one of 16 problems: the step that verifies 64 and decodes
    16 takes less time, the same time per problem."""
    clock = Clock()
    schedule = Schedule("auto", clock)
    full, short = {IN_TURN: 1.0, OVERLAPPED: 1.25}, {IN_TURN: 0.625, OVERLAPPED: 0.78125}
    modes = []
    for _ in range(5):  # shards, one schedule (the worker's)
        modes += run_steps(schedule, clock, full, 1, verified=0)
        modes += run_steps(schedule, clock, full, 1)
        modes += run_steps(schedule, clock, short, 1, decoded=16)
        modes += run_steps(schedule, clock, short, 1, decoded=0, verified=16)
    timed = [mode for i, mode in enumerate(modes) if i % 4 in (1, 2)]
    assert timed == PROBING + [IN_TURN] * (10 - len(PROBING))
    assert schedule.times[IN_TURN] == [1 / 64] * timed[1:].count(IN_TURN)


def test_the_choice_holds_between_reprobes_and_turns_when_the_load_changes():
    clock, notes = Clock(), []
    schedule = Schedule("auto", clock, notes.append)
    run_steps(schedule, clock, {IN_TURN: 1.0, OVERLAPPED: 1.25}, 20)
    # a burst of slow batches does not turn the choice: only a step of the other mode can
    assert run_steps(schedule, clock, {IN_TURN: 5.0}, 5) == [IN_TURN] * 5
    # the cores free up: overlap wins, and the re-probes find it once it has the latest median
    modes = run_steps(schedule, clock, {IN_TURN: 1.0, OVERLAPPED: 0.5}, 2 * REPROBE_EVERY - 25 + 2)
    overlapped = [step for step, mode in enumerate(modes, start=25) if mode is OVERLAPPED]
    assert overlapped == [REPROBE_EVERY, 2 * REPROBE_EVERY, 2 * REPROBE_EVERY + 1]
    assert [note.split(" (")[0] for note in notes] == [
        "decode/verify: in turn",
        "decode/verify: overlapped",
    ]


@pytest.mark.parametrize(("overlap", "mode"), [("on", OVERLAPPED), ("off", IN_TURN)])
def test_on_and_off_fix_the_mode_and_say_so_once(overlap, mode):
    clock, notes = Clock(), []
    schedule = Schedule(overlap, clock, notes.append)
    faster = {mode: 2.0, OVERLAPPED if mode is IN_TURN else IN_TURN: 1.0}
    assert run_steps(schedule, clock, faster, 12) == [mode] * 12
    assert notes == [f"decode/verify: {mode.value} (as set)"]


def test_an_unknown_setting_is_refused():
    with pytest.raises(ConfigError, match="overlap must be one of auto, on, off"):
        Schedule("sometimes")


def answers(problem, k):
    """py: model: the antiderivative of c*x at rank 2, of sin(c*x) never."""
    del k
    if "sin" in problem:
        return ["cos(x)", "x", "sin(x)", "1"]
    c = sp.sympify(problem).coeff(sp.Symbol("x"))
    return ["x", f"{c}*x^2/2", "x^3", "x^4"]


def test_solve_gives_the_same_results_in_turn_overlapped_and_mixed():
    problems = [
        SuiteRow(row, from_sympy(c * X if row % 3 else sp.sin(c * X)), None)
        for row, c in enumerate(range(2, 19))
    ]  # 17 problems: batches of 2 make 9 steps that decode and verify
    model = IntegrationSequenceModel(
        CallableModel(answers, "answers"), IntegrationTask(), "answers"
    )
    tables, schedules = {}, {}
    with Verifier(VerifierConfig(workers=1)) as verifier:
        for overlap in ("off", "on", "auto"):
            schedules[overlap] = Schedule(overlap)
            table = solve(model, verifier, "s", problems, 4, 2, False, schedules[overlap])
            tables[overlap] = [
                {**row, "candidates": [{**c, "seconds": None} for c in row["candidates"]]}
                for row in table.to_pylist()
            ]
    assert tables["on"] == tables["off"] == tables["auto"]
    assert [row["first_correct_rank"] for row in tables["auto"][:3]] == [None, 2, 2]
    outcomes = {c["outcome"] for row in tables["auto"] for c in row["candidates"]}
    assert outcomes == {"correct", "incorrect", None}  # None: rank 4, after rank 2's window
    # auto ran both modes: every probe, then its choice
    assert all(len(times) >= PROBES for times in schedules["auto"].times.values())
    assert schedules["on"].times[IN_TURN] == schedules["off"].times[OVERLAPPED] == []
