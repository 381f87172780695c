"""Where a function's CPU time goes, by kind of op: shared by the benchmarks' `--profile`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch


def op_seconds(function: Callable[[], object], kinds: Mapping[str, str]) -> dict[str, float]:
    """Self CPU seconds of `function`'s ops under torch's profiler, summed by kind (`kinds`:
    aten op name -> kind; any other op is "other"), largest first. The profiler's own cost
    falls mostly on "other": the many small ops."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        function()
    totals: dict[str, float] = {}
    for event in prof.key_averages():
        kind = kinds.get(event.key, "other")
        totals[kind] = totals.get(kind, 0.0) + event.self_cpu_time_total / 1e6
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def op_shares(function: Callable[[], object], kinds: Mapping[str, str]) -> dict[str, float]:
    """`op_seconds` as shares of the profiled total."""
    seconds = op_seconds(function, kinds)
    whole = sum(seconds.values())
    return {kind: time / whole for kind, time in seconds.items()}
