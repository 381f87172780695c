"""The same small seed sweep with the local backend and with Ray on this machine.

Both sides run `run_sweep` on one config: 4 seeds in 2 stacked models (`seeds_per_shard` 2),
so 2 training shards and 5 suite shards, on 2 workers of one thread each (local: 2 spawned
processes; Ray: 2 actors on a Ray instance started here). Each repeat writes a fresh run
directory. Measured in the same run, medians over repeats: the local time, the Ray time with
its actors started (Ray itself already running, as on a cluster), and the one-off `ray.init`.
Checks that both backends wrote the same metrics.json. Last line: `ray_over_local = X.XX`
(Ray's time / local time; above 1 is Ray's overhead).

    python benchmarks/backend_scaling.py [--repeats 3] [--train-size 4000] [--epochs 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from genprobe.runs.executor import Executor, LocalExecutor
from genprobe.runs.ray_executor import RayExecutor, import_ray
from genprobe.studies.seed_sensitivity import SweepConfig, run_sweep
from genprobe.training.trainer import TrainConfig


def timed(config: SweepConfig, executor: Executor, out: Path) -> float:
    start = time.perf_counter()
    run_sweep(config, out, executor=executor)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train-size", type=int, default=4000)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    config = SweepConfig(
        seeds=(1, 2, 3, 4),
        seeds_per_shard=2,
        train_size=args.train_size,
        validation_size=200,
        suite_size=200,
        train=TrainConfig(max_epochs=args.epochs, patience=args.epochs),
    )
    ray = import_ray()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray_init = time.perf_counter() - start
    local, on_ray = [], []
    with tempfile.TemporaryDirectory() as root:
        for repeat in range(args.repeats):
            local.append(timed(config, LocalExecutor(2), Path(root, f"local{repeat}")))
            with RayExecutor(workers=2) as executor:
                on_ray.append(timed(config, executor, Path(root, f"ray{repeat}")))
            same = (
                Path(root, f"local{repeat}", "metrics.json").read_bytes()
                == Path(root, f"ray{repeat}", "metrics.json").read_bytes()
            )
            print(f"repeat {repeat + 1}: local {local[-1]:.1f} s, ray {on_ray[-1]:.1f} s, "
                  f"same metrics: {same}")  # fmt: skip
            if not same:
                raise SystemExit("the backends disagree")
    ray.shutdown()
    print(
        f"sweep: 4 seeds x {args.train_size} examples x {args.epochs} epochs, 2 workers x 1 thread"
    )
    print(f"ray.init (once per driver): {ray_init:.1f} s")
    print(f"local median: {statistics.median(local):.1f} s")
    print(f"ray median: {statistics.median(on_ray):.1f} s")
    print(f"ray_over_local = {statistics.median(on_ray) / statistics.median(local):.2f}")


if __name__ == "__main__":
    main()
