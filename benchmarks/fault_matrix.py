"""How a run directory survives damage (issue 67): builds a tiny real run of each study (a seed
sweep, one over time, a probe, a search, brittleness, SAGGA, integration training), then, on a
fresh copy of the run for every case, damages one file (one byte flipped in the middle, cut to
half, deleted, or for JSON / JSON lines one digit changed so that it still parses) and runs one
command that reads the run (report, export, evaluate, sagga-report, the same command again).
Also: kill -9 mid-run then the rerun, two writers on one --out, hostile inputs (a 100 MB line,
JSON nested 10^5 deep, bytes not UTF-8) with the peak RSS of the command, and a full disk where
a tmpfs can be mounted. Each case's outcome:

- clean: exit 2 and one `genprobe: error:` line naming the damaged file (or the manifest or
  plan that records it); or exit 0, the output equal to the undamaged run's, the file rebuilt
  (or read and the damage named on stderr);
- silent: exit 0 and the output differs from the undamaged run's, or the damaged file was read
  (its access time moved) and nothing said so;
- traceback: a Python traceback, or an exit code other than 0 and 2; timeout: past the limit;
- wrong name: exit 2 and one line, but naming neither the damaged file nor its recorder;
- messy: exit 2 but not one `genprobe: error:` line;
- inconclusive: two writers, the first ended before the second started;
- harmless: exit 0, the output equal to the undamaged run's, the damaged file left unread.

    python benchmarks/fault_matrix.py [--quick] [--out DIR] [--json FILE] [--seed N]

--quick: one file of every kind (per study), every damage, the commands in turn (every command
of every study at least once); otherwise every file x every damage x every command. The command
line runs as `python -m genprobe` with this checkout's `src` first on the path, one thread each.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
DAMAGES = ("flip", "truncate", "delete", "edit")
TIMEOUT = 300.0
TIME = "/usr/bin/time"
ERROR = "genprobe: error:"
PROGRESS = re.compile(r"\[[\d:]+\] |\s")  # progress lines on stderr, and their continuations


@dataclass(frozen=True)
class Study:
    build: list[str]  # the command that makes the run (after `genprobe`, before `--out run`)
    readers: dict[str, list[str]]  # command name: argv that reads `run` (cwd: the case folder)
    results: tuple[str, ...]  # globs (under the case folder) of what the run computed


@dataclass
class Case:
    study: str
    file: str  # the damaged file (relative to the run), or what the case is (kill, hostile...)
    kind: str
    damage: str
    command: str
    argv: list[str]
    rc: int = -1
    outcome: str = ""
    detail: str = ""
    stderr: str = ""  # its first line
    seconds: float = 0.0
    rss_kib: int = 0


@dataclass(frozen=True)
class Ran:
    rc: int
    out: str
    err: str
    seconds: float
    rss_kib: int


def studies(inputs: Path) -> dict[str, Study]:
    """Each study's tiny run, with the argv shapes of tests/study_runs.py."""
    sweep, model = f"run:{inputs / 'build/sweep/run'}", f"ckpt:{inputs / 'model.pt'}"
    valid = str(inputs / "tiny.valid")
    report, export = ["report", "run"], ["export", "run", "--out", "tables"]
    evaluate = ["evaluate", "run", "--input", "", "--name", "extra", "--json", "--no-report"]
    made = ("run/report.md",)
    return {
        "sweep": Study(
            ["sweep", "--task", "addition", "--task-option", "format=reversed", "--task-option",
             "train_digits=2", "--seeds", "2", "--train-size", "200", "--validation-size", "20",
             "--suite-size", "12", "--max-epochs", "1", "--workers", "1"],
            {"report": report, "export": export,
             "evaluate": _set(evaluate, 3, str(inputs / "sweep.extra.jsonl"))},
            ("run/predictions/*.parquet", *made),
        ),
        "over time": Study(
            ["sweep", "--task", "binary_operation", "--task-option", "p=23", "--arch", "mlp",
             "--model-option", "hidden=32", "--steps", "600", "--full-batch", "--optimizer",
             "adamw", "--lr", "0.01", "--weight-decay", "1", "--seeds", "2",
             "--seeds-per-shard", "1", "--workers", "1", "--no-report"],
            {"report": report, "export": export,
             "evaluate": _set(evaluate, 3, str(inputs / "over time.extra.jsonl"))},
            ("run/curves/*.parquet", "run/predictions/*.parquet"),
        ),
        "probe": Study(
            ["probe", "--model", sweep, "--size", "40", "--k", "2", "--search-budget", "4"],
            {"report": report, "export": export}, ("run/results/*.parquet", *made),
        ),
        "search": Study(
            ["search", "--model", sweep, "--generations", "6", "--population", "8",
             "--base-size", "30"],
            {"report": report, "export": export}, ("run/archive.parquet", *made),
        ),
        "brittleness": Study(
            ["integration", "brittleness", "--model", model, "--validation",
             valid, "--preset", "quick", "--n", "1", "--suites",
             "in-distribution", "robustness-simple", "--beam", "4", "--k", "1", "4",
             "--max-len", "24", "--search-budget", "6", "--workers", "1"],
            {"report": report, "export": export}, ("run/examples.parquet", *made),
        ),
        "sagga": Study(
            ["integration", "sagga", "--model", model, "--basis", "polynomial_robustness",
             "--preset", "robustness", "--generations", "3", "--beam", "2", "--max-len", "24",
             "--generation-size", "24", "--seed-size", "6", "--workers", "2"],
            {"report": report, "export": export,
             "sagga-report": ["integration", "sagga-report", "run"]},
            ("run/archive.parquet", *made),
        ),
        "train": Study(
            ["integration", "train", "--data", valid, "--epochs", "3",
             "--epoch-size", "16", "--batch-size", "4", "--valid-size", "2", "--warmup", "2",
             "--max-len", "40", "--device", "cpu"],
            {"report": report, "export": export,
             "evaluate": ["integration", "evaluate", "--model", "ckpt:run/model.pt", "--data",
                          valid, "--n", "2", "--k", "1", "--beam", "1",
                          "--max-len", "24", "--out", "eval"]},
            ("run/model.pt", "run/metrics.jsonl", *made, "eval/examples.parquet"),
        ),
    }  # fmt: skip


def _set(argv: list[str], at: int, value: str) -> list[str]:
    return [*argv[:at], value, *argv[at + 1 :]]


def genprobe(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "genprobe", *argv]


def run(argv: list[str], cwd: Path, timeout: float = TIMEOUT) -> Ran:
    """Run `argv` in `cwd` (its own process group, killed at `timeout`): exit code (124 on
    timeout), stdout, stderr, seconds and peak RSS, as GNU time measures it (a child's own
    rusage would count the RSS of this process, forked, before the exec)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with tempfile.NamedTemporaryFile() as rss:
            timed = [TIME, "-f", "%M", "-o", rss.name] if Path(TIME).exists() else []
            process = subprocess.Popen([*timed, *argv], cwd=cwd, env=ENV, stdout=out,
                                       stderr=err, stdin=subprocess.DEVNULL,
                                       start_new_session=True)  # fmt: skip
            try:
                rc = process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                rc = 124
            peak = Path(rss.name).read_text().split()
        out.seek(0), err.seek(0)
        text = [f.read().decode(errors="replace") for f in (out, err)]
    kib = int(peak[-1]) if peak and peak[-1].isdigit() else 0
    return Ran(rc, text[0], text[1], time.monotonic() - start, kib)


TIMINGS = ("train_seconds", "elapsed")  # measured in a metrics.jsonl row, not computed


def digest(path: Path) -> str:
    """A file's contents: a Parquet table's rows (not its bytes' metadata), a JSON Lines
    file's rows without what they time, a report without its lines of seconds (what the
    work cost, which a resumed run spends again), else its bytes."""
    if path.suffix == ".md":
        kept = [line for line in path.read_bytes().splitlines() if b"seconds" not in line]
        return hashlib.sha256(b"\n".join(kept)).hexdigest()
    if path.suffix == ".jsonl":
        try:
            rows = [json.loads(line) for line in path.read_text().splitlines() if line]
            rows = [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]
            return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
        except (ValueError, AttributeError, UnicodeDecodeError) as unreadable:
            return f"unreadable: {type(unreadable).__name__}"
    if path.suffix == ".parquet":
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
            return hashlib.sha256(frame.to_json(orient="split").encode()).hexdigest()
        except Exception as unreadable:  # a damaged table: an observation
            return f"unreadable: {type(unreadable).__name__}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def observe(folder: Path, globs: tuple[str, ...], ran: Ran | None) -> dict[str, str]:
    """What a command showed: its stdout and the digest of each file of `globs`."""
    seen = {p.relative_to(folder).as_posix(): digest(p) for g in globs for p in folder.glob(g)}
    return seen if ran is None else {**seen, "stdout": hashlib.sha256(ran.out.encode()).hexdigest()}


def stable(first: dict[str, str], second: dict[str, str]) -> dict[str, str]:
    """What two undamaged runs of a command both showed the same."""
    return {k: v for k, v in first.items() if second.get(k) == v}


def damage(path: Path, how: str, rng: random.Random) -> bool:
    """Damage `path` as `how` says; False where that damage does not apply to it."""
    data = path.read_bytes()
    if how == "delete":
        path.unlink()
        return True
    if how == "edit":
        edited = _edit(data, path.suffix, rng)
        if edited is None:
            return False
        data = edited
    elif not data:
        return False
    elif how == "truncate":
        data = data[: len(data) // 2]
    else:
        data = (
            data[: len(data) // 2]
            + bytes([data[len(data) // 2] ^ 0xFF])
            + data[len(data) // 2 + 1 :]
        )
    path.write_bytes(data)
    stat = path.stat()  # an access time before the change: a read moves it (relatime)
    os.utime(path, ns=(stat.st_mtime_ns - 10**9, stat.st_mtime_ns))
    return True


def _edit(data: bytes, suffix: str, rng: random.Random) -> bytes | None:
    """`data` with one digit changed so that it still parses as JSON (each line of JSON lines)."""
    if suffix not in (".json", ".jsonl"):
        return None
    text = data.decode()
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    rng.shuffle(digits)
    for i in digits:
        edited = text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1 :]
        try:
            for line in edited.splitlines() if suffix == ".jsonl" else [edited]:
                line.strip() and json.loads(line)
        except json.JSONDecodeError:
            continue
        return edited.encode()
    return None


def recorders(run_dir: Path, name: str) -> list[str]:
    """The manifests (and their shard names) and stage plans that record the file `name`."""
    found = []
    for manifest in sorted((run_dir / "shards").glob("*/*.json")):
        recorded = _json(manifest)
        if name in recorded.get("files", {}) or manifest.relative_to(run_dir).as_posix() == name:
            shard = manifest.relative_to(run_dir / "shards").with_suffix("").as_posix()
            found += [manifest.relative_to(run_dir).as_posix(), shard]
            found.append(f"shards/{manifest.parent.name}.json")
    return found


def _json(path: Path) -> dict:
    try:
        loaded = json.loads(path.read_text())
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def classify(ran: Ran, names: list[str], original: Path | None = None) -> tuple[str, str]:
    """The outcome of an exit 2 or a crash (None for an exit 0: compared by the caller)."""
    lines = [line for line in ran.err.splitlines() if not PROGRESS.match(line)]
    if "Traceback" in ran.err or ran.rc not in (0, 2):
        return ("timeout" if ran.rc == 124 else "traceback"), f"exit {ran.rc}"
    if ran.rc == 0:
        return "", ""
    if len(lines) != 1 or not lines[0].startswith(ERROR):
        return "messy", f"{len(lines)} lines on stderr"
    if not names or any(name in lines[0] for name in names):
        return "clean", ""
    named = re.findall(r"[\w./=-]+\.(?:json|jsonl|parquet|pt|npz|md|html|png|lock)\b", lines[0])
    exists = [n for n in named if original and (original / n.split("run/")[-1]).exists()]
    return "wrong name", (f"names {exists[0]} (exists)" if exists else f"names {named or '?'}")


def damage_case(case: Case, work: Path, study: Study, baseline: dict, seed: int) -> Case:
    """Damage `case.file` in a fresh copy of the run, run `case.command`, classify."""
    folder = Path(tempfile.mkdtemp(dir=work / "cases"))
    built = work / "build" / case.study / "run"
    shutil.copytree(built, folder / "run", symlinks=True)
    target = folder / "run" / case.file
    damage(target, case.damage, random.Random(f"{seed}:{case.study}:{case.file}"))
    after = target.stat() if target.exists() else None
    ran = run(case.argv, folder)
    outcome, detail = classify(ran, [case.file, *recorders(built, case.file)], built)
    if not outcome:
        shown = observe(folder, study.results if case.command == "rerun" else _shows(case), ran)
        outcome, detail = _compared(
            target, after, shown, baseline[case.command], ran.err, case.file
        )
    shutil.rmtree(folder)
    return _done(case, ran, outcome, detail)


def _shows(case: Case) -> tuple[str, ...]:
    """Beyond stdout, what a reader writes: the report, the tables, the evaluated suite."""
    shows = {"report": ("run/report.md",), "sagga-report": ("run/report.md",),
             "export": ("tables/*",),
             "evaluate": ("run/predictions/extra.parquet", "eval/examples.parquet")}  # fmt: skip
    return shows[case.command]


def _compared(target: Path, after: os.stat_result | None, shown: dict, baseline: dict,
              err: str, name: str) -> tuple[str, str]:  # fmt: skip
    """Exit 0: what the output and the damaged file say (a file left as damaged is no output)."""
    now = target.stat() if target.exists() else None
    rebuilt = (now is None) != (after is None) or (now and after and now.st_ino != after.st_ino)
    left = "" if rebuilt else f"run/{name}"
    moved = sorted(k for k, v in baseline.items() if shown.get(k) != v and k != left)
    if moved:
        return "silent", f"output differs: {', '.join(moved[:4])}"
    if rebuilt:
        return "clean", "rebuilt"
    if now and after and now.st_atime_ns > after.st_atime_ns:
        return ("clean", "read, named on stderr") if name in err else ("silent", "read, unnamed")
    return "harmless", "left damaged" if left in baseline else ""


def _done(case: Case, ran: Ran, outcome: str, detail: str) -> Case:
    case.rc, case.outcome, case.detail = ran.rc, outcome, detail
    lines = [line for line in ran.err.splitlines() if line.strip()]
    case.stderr = next(
        (line for line in lines if line.startswith(ERROR)), lines[0] if lines else ""
    )[:300]
    case.seconds, case.rss_kib = round(ran.seconds, 2), ran.rss_kib
    return case


def kind_of(name: str) -> str:
    """A file's kind: its top folder (a stage's, under shards/) and suffix."""
    parts = name.split("/")
    if len(parts) == 1:
        return name
    keep = 2 if parts[0] == "shards" and len(parts) > 2 else 1
    return "/".join([*parts[:keep], *["*"] * (len(parts) - keep - 1), "*" + Path(name).suffix])


def damage_cases(name: str, study: Study, run_dir: Path, quick: bool, seed: int) -> list[Case]:
    files = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())
    kinds: dict[str, list[str]] = {}
    for file in files:
        kinds.setdefault(kind_of(file), []).append(file)
    commands = [*study.readers, "rerun"]
    cases = []
    for i, (kind, members) in enumerate(kinds.items()):
        chosen = [random.Random(f"{seed}:{name}:{kind}").choice(members)] if quick else members
        for file in chosen:
            suffix = Path(file).suffix
            hows = [d for d in DAMAGES if d != "edit" or suffix in (".json", ".jsonl")]
            for j, how in enumerate(hows):
                for command in [commands[(i + j) % len(commands)]] if quick else commands:
                    argv = study.readers.get(command, [*study.build, "--out", "run"])
                    cases.append(Case(name, file, kind, how, command, genprobe(argv)))
    return cases


def baselines(work: Path, name: str, study: Study) -> dict[str, dict[str, str]]:
    """Each command's output on two undamaged copies, the part both show the same."""
    seen = {}
    for command in [*study.readers, "rerun"]:
        argv = genprobe(study.readers.get(command, [*study.build, "--out", "run"]))
        case = Case(name, "", "", "", command, argv)
        shown = []
        for _ in range(2):
            folder = Path(tempfile.mkdtemp(dir=work / "cases"))
            shutil.copytree(work / "build" / name / "run", folder / "run", symlinks=True)
            ran = run(argv, folder)
            if ran.rc != 0:
                raise SystemExit(f"{name} {command}: exit {ran.rc} undamaged: {ran.err[-500:]}")
            globs = study.results if command == "rerun" else _shows(case)
            shown.append(observe(folder, globs, ran))
            shutil.rmtree(folder)
        seen[command] = stable(*shown)
    return seen


def kill_case(work: Path, name: str, study: Study, build_seconds: float, index: int, seed: int):
    """kill -9 at a seeded moment of the build, then the rerun: its results are the whole run's."""
    folder = Path(tempfile.mkdtemp(dir=work / "cases"))
    argv = genprobe([*study.build, "--out", "run"])
    at = random.Random(f"{seed}:kill:{name}:{index}").uniform(0.2, 0.9) * build_seconds
    process = subprocess.Popen(argv, cwd=folder, env=ENV, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(at)
    ended = process.poll() is not None
    process.kill()
    process.wait()
    ran = run(argv, folder)
    case = Case(name, f"killed at {at:.1f}s", "kill -9", "kill", "rerun", argv)
    outcome, detail = classify(ran, [])
    if not outcome:
        whole = observe(work / "build" / name, study.results, None)
        moved = sorted(
            k for k, v in whole.items() if observe(folder, study.results, None).get(k) != v
        )
        outcome, detail = ("silent", f"differs: {', '.join(moved[:4])}") if moved else ("clean", "")
    shutil.rmtree(folder)
    return _done(case, ran, outcome, detail + (" (ended before the kill)" if ended else ""))


def two_writers(work: Path, name: str, study: Study) -> Case:
    """A second writer on an --out that one is writing: refused in one line."""
    folder = Path(tempfile.mkdtemp(dir=work / "cases"))
    argv = genprobe([*study.build, "--out", "run"])
    first = subprocess.Popen(argv, cwd=folder, env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    lock = folder / "run" / "run.lock"
    while first.poll() is None and not _text(lock):
        time.sleep(0.02)
    released = threading.Event()  # the first emptied its lock: its command had ended

    def watch() -> None:
        while not released.is_set() and not stop.is_set():
            if not _text(lock):
                released.set()
            time.sleep(0.01)

    stop = threading.Event()
    watcher = threading.Thread(target=watch)
    watcher.start()
    ran = run(argv, folder)
    stop.set()
    watcher.join()
    ended = first.poll() is not None or released.is_set()
    first.wait()
    outcome, detail = classify(ran, ["is in use"])
    if ran.rc == 0:
        outcome, detail = (
            ("inconclusive", "the first had ended") if ended else ("silent", "not refused")
        )
    shutil.rmtree(folder)
    return _done(Case(name, "run.lock", "two writers", "writer", "same command", argv), ran,
                 outcome, detail)  # fmt: skip


def _text(path: Path) -> str:
    """A file's text, empty where it is missing."""
    try:
        return path.read_text()
    except OSError:
        return ""


def hostile_cases(work: Path) -> list[Case]:
    """Hostile input files to each command that reads one, with the peak RSS of each."""
    folder = work / "hostile"
    folder.mkdir(exist_ok=True)
    big = 100 * 2**20
    sums = '{"input": "' + "1 " * (big // 2) + '+ 1", "output": "2"}\n'
    integrals = '{"problem": "' + "add x " * (big // 6) + 'x", "candidate": "x"}\n'
    deep = '{"input": ' + "[" * 10**5 + "]" * 10**5 + ', "problem": "x", "candidate": "x"}\n'
    bad = b'{"input": "1 + \xff\xfe", "problem": "\xff", "candidate": "x"}\n'
    files = {"100 MB line": {"sums": sums, "integrals": integrals}, "nested 1e5": deep,
             "not UTF-8": bad}  # fmt: skip
    sweep = work / "build" / "sweep" / "run"
    commands = {
        "task check": ["task", "check", "addition", "--input"],
        "probe --input": ["probe", "--model", f"run:{sweep}", "--size", "4", "--out", "probe",
                          "--input"],
        "evaluate --input": ["evaluate", "run", "--no-report", "--input"],
        "integration verify": ["integration", "verify", "--workers", "1", "--input"],
    }  # fmt: skip
    cases = []
    for what, content in files.items():
        for command, argv in commands.items():
            data = content if not isinstance(content, dict) else content[
                "integrals" if command == "integration verify" else "sums"]  # fmt: skip
            path = folder / f"{what.replace(' ', '_')}.{command.split()[0]}.jsonl"
            path.write_bytes(data if isinstance(data, bytes) else data.encode())
            cases.append(
                Case("hostile", path.name, what, what, command, genprobe([*argv, str(path)]))
            )
    return cases


def hostile_case(case: Case, work: Path) -> Case:
    folder = Path(tempfile.mkdtemp(dir=work / "cases"))
    shutil.copytree(work / "build" / "sweep" / "run", folder / "run", symlinks=True)
    ran = run(case.argv, folder)
    outcome, detail = classify(ran, [case.file])
    if ran.rc == 0:
        outcome, detail = "silent", "accepted"
    shutil.rmtree(folder)
    return _done(case, ran, outcome, detail)


def full_disk_cases(work: Path, all_studies: dict[str, Study]) -> list[Case]:
    """Each build on a 128 KiB tmpfs, where one can be mounted: one line naming no space."""
    disk = work / "disk"
    disk.mkdir(exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(disk)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        print("full disk: skipped (mounting a tmpfs needs a superuser)")
        return []
    cases = []
    try:
        for name, study in all_studies.items():
            argv = genprobe([*study.build, "--out", "run"])
            ran = run(argv, disk)
            outcome, detail = classify(ran, ["no space left"])
            if ran.rc == 0:
                outcome, detail = "harmless", "fitted in 128 KiB"
            cases.append(_done(Case(name, "(any)", "full disk", "full disk", "build", argv), ran,
                               outcome, detail))  # fmt: skip
            shutil.rmtree(disk / "run", ignore_errors=True)
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    return cases


def make_inputs(work: Path, all_studies: dict[str, Study]) -> dict[str, float]:
    """A random checkpoint, a validation file, each study's run (the sweep first: the probe
    and the search read it). The seconds each build took."""
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers import save_random_transformer, write_validation

    save_random_transformer(work / "model.pt")
    write_validation(work / "tiny.valid")
    seconds = {}
    for name, study in all_studies.items():
        folder = work / "build" / name
        folder.mkdir(parents=True)
        ran = run(genprobe([*study.build, "--out", "run"]), folder)
        if ran.rc != 0:
            raise SystemExit(f"{name}: the build failed: {ran.err[-2000:]}")
        seconds[name] = ran.seconds
        data = sorted((folder / "run" / "data").glob("*.jsonl"))
        if data:  # a few of its own test inputs, for `evaluate --input`
            lines = data[0].read_text().splitlines()[:3]
            (work / f"{name}.extra.jsonl").write_text("\n".join(lines) + "\n")
    return seconds


def summary(cases: list[Case]) -> str:
    outcomes = sorted({c.outcome for c in cases})
    rows = Counter((c.study, c.damage, c.command, c.outcome) for c in cases)
    keys = sorted({k[:3] for k in rows})
    out = io.StringIO()
    out.write(
        f"{'study':12} {'damage':12} {'command':18} " + " ".join(f"{o:>10}" for o in outcomes)
    )
    for key in keys:
        counts = " ".join(f"{rows.get((*key, o), 0):>10}" for o in outcomes)
        out.write(f"\n{key[0]:12} {key[1]:12} {key[2]:18} {counts}")
    totals = Counter(c.outcome for c in cases)
    out.write(
        "\ntotal: " + ", ".join(f"{o} {totals[o]}" for o in outcomes) + f" ({len(cases)} cases)"
    )
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one file of each kind")
    parser.add_argument("--out", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="write every case here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    work = (args.out or Path(tempfile.mkdtemp(prefix="fault-matrix-"))).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "cases").mkdir(parents=True)
    start = time.monotonic()
    all_studies = studies(work)
    build_seconds = make_inputs(work, all_studies)
    with ThreadPoolExecutor(args.jobs) as pool:
        seen = dict(zip(all_studies, pool.map(lambda n: baselines(work, n, all_studies[n]),
                                               all_studies), strict=True))  # fmt: skip
        jobs = [pool.submit(damage_case, case, work, all_studies[n], seen[n], args.seed)
                for n, study in all_studies.items()
                for case in damage_cases(n, study, work / "build" / n / "run", args.quick,
                                         args.seed)]  # fmt: skip
        kills = 1 if args.quick else 3
        jobs += [pool.submit(kill_case, work, n, s, build_seconds[n], i, args.seed)
                 for n, s in all_studies.items() for i in range(kills)]  # fmt: skip
        jobs += [pool.submit(two_writers, work, n, s) for n, s in all_studies.items()]
        cases = [job.result() for job in jobs]
    cases += [hostile_case(case, work) for case in hostile_cases(work)]  # one at a time: RSS
    cases += full_disk_cases(work, all_studies)
    print(summary(cases))
    print(f"{len(cases)} cases in {time.monotonic() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps([asdict(c) for c in cases], indent=1) + "\n")


if __name__ == "__main__":
    main()
