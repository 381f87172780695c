"""When a solve shard verifies a batch: after the model has decoded it (in turn), or while the
model decodes the next one (overlapped), whichever is faster on this machine.

`solve` works in steps: step i decodes batch i and verifies the candidates of batch i - 1, one
after the other (in turn) or at once (overlapped: the verifier pool checks batch i - 1, driven
from a background thread, while the model decodes batch i). Overlap pays where the cores can
feed both; on 2 cores the model's torch threads and the verifier's processes contend and in
turn is faster (docs/brittleness.md). The mode changes only when a step's work is done, never
what is computed: verdicts and ranks are the same whichever mode each step ran in.

`overlap="on"` and `"off"` fix the mode. `"auto"` (the default) measures, by this rule:
- a step is timed when it both decodes and verifies (the first step of a shard only decodes,
  its last only verifies), as wall-clock seconds per problem, a problem counting half when
  decoded and half when verified, so that a shard's shorter last batch compares with the rest;
- the worker's first timed step runs in turn and its time is dropped: it starts the pool;
- then the modes alternate, overlapped first, until each has `PROBES` times, and the mode with
  the lower median of its latest `PROBES` times is chosen (in turn on a tie): medians, because
  batches differ (one whose candidates run into verifier deadlines can take four times as long
  as its neighbours);
- every `REPROBE_EVERY`th step runs the other mode and the choice is made again from the
  latest times, so that a change in the machine's load can turn it; it changes at no other step.
The schedule lives in the worker's context (`SolveStage.setup`): its times carry over from shard
to shard, so only a worker's first steps probe. It notes its choice, and any later change, as a
line such as "decode/verify: in turn (overlapped 19.1 ms vs in turn 16.0 ms per problem)".

Example:
    schedule = Schedule("auto", note=print)
    with schedule.step(decoded=64, verified=64) as mode:
        ...  # decode and verify, in `mode`
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum

from genprobe.errors import check_choice

OVERLAP_SETTINGS = ("auto", "on", "off")
PROBES = 3  # times per mode that the choice is made from
REPROBE_EVERY = 32  # timed steps; at 64 problems a batch, one step in about 2,000 problems


class Mode(Enum):
    IN_TURN = "in turn"
    OVERLAPPED = "overlapped"


class Schedule:
    """Chooses the mode of each step (see module docs); `clock` gives seconds, `note` receives
    the choice as a line of text."""

    def __init__(
        self,
        overlap: str = "auto",
        clock: Callable[[], float] = time.perf_counter,
        note: Callable[[str], None] = lambda line: None,
    ) -> None:
        check_choice("overlap", overlap, OVERLAP_SETTINGS)
        self.overlap = overlap
        self.clock = clock
        self.note = note
        # seconds per problem of the timed steps in each mode, oldest first
        self.times: dict[Mode, list[float]] = {Mode.IN_TURN: [], Mode.OVERLAPPED: []}
        self.timed_steps = 0
        self.choice: Mode | None = None  # the mode steps run in, once chosen

    @contextmanager
    def step(self, decoded: int, verified: int) -> Iterator[Mode]:
        """Times one step, which decodes `decoded` problems and verifies the candidates of
        `verified`; yields the mode to run it in."""
        if not (decoded and verified):  # nothing to overlap
            yield Mode.IN_TURN
            return
        mode = self._next_mode()
        start = self.clock()
        yield mode
        seconds = self.clock() - start
        if self.timed_steps > 0:
            self.times[mode].append(seconds / ((decoded + verified) / 2))
        self.timed_steps += 1
        chosen = self._choose(after=mode)
        if chosen is not None and chosen is not self.choice:
            self.choice = chosen
            self.note(f"decode/verify: {self._describe()}")

    def _describe(self) -> str:
        """The choice and the latest times: 'overlapped (as set)' or 'in turn (overlapped
        19.1 ms vs in turn 16.0 ms per problem)'."""
        assert self.choice is not None, "described before a choice"
        if self.overlap != "auto":
            return f"{self.choice.value} (as set)"
        measured = " vs ".join(
            f"{mode.value} {1000 * self._estimate(mode):.1f} ms"
            for mode in (Mode.OVERLAPPED, Mode.IN_TURN)
        )
        return f"{self.choice.value} ({measured} per problem)"

    def _next_mode(self) -> Mode:
        if self.overlap == "on":
            return Mode.OVERLAPPED
        if self.overlap == "off" or self.timed_steps == 0:
            return Mode.IN_TURN
        if self.choice is None:  # probing: the mode with fewer times, overlapped first
            return min((Mode.OVERLAPPED, Mode.IN_TURN), key=lambda mode: len(self.times[mode]))
        if self.timed_steps % REPROBE_EVERY == 0:
            return Mode.OVERLAPPED if self.choice is Mode.IN_TURN else Mode.IN_TURN
        return self.choice

    def _choose(self, after: Mode) -> Mode | None:
        """The mode to run in from now on, after a step in `after`; None while `auto` probes or
        keeps its choice until the next re-probe."""
        if self.overlap != "auto":
            return Mode.OVERLAPPED if self.overlap == "on" else Mode.IN_TURN
        if after is self.choice or any(len(times) < PROBES for times in self.times.values()):
            return None
        return min((Mode.IN_TURN, Mode.OVERLAPPED), key=self._estimate)

    def _estimate(self, mode: Mode) -> float:
        return statistics.median(self.times[mode][-PROBES:])
