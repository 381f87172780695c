"""The suite cache of `genprobe integration brittleness`: a later run with the same suite
settings takes the suites that need no model from it, byte for byte; another seed, N or
validation file builds them again; a corrupt entry is rebuilt; `--no-suite-cache` turns it off."""

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from genprobe.runs.cache import cache_key
from genprobe.studies.brittleness import run as brittleness_run
from genprobe.studies.brittleness.suite_cache import suite_key
from genprobe.tasks.integration.suites import SuiteRequest
from genprobe.tasks.integration.suites.operators import operator_extrapolation

pytestmark = pytest.mark.slow


def wrong(problem: str, k: int):
    """py: model: wrong on every problem (answers at once)."""
    del problem, k
    return ["x"]


@pytest.fixture
def builds(monkeypatch):
    """The suites built from here on, counted by name."""
    counted = Counter()

    def counting(name, request):
        counted[name] += 1
        return build_suite(name, request)

    build_suite = brittleness_run.build_suite
    monkeypatch.setattr(brittleness_run, "build_suite", counting)
    return counted


@pytest.fixture
def brittleness(cli, validation, tmp_path, monkeypatch):
    """Run the study into `tmp_path/<out>`, the cache in `tmp_path/cache` unless an option says
    otherwise: returns stderr."""
    monkeypatch.setenv("GENPROBE_CACHE", str(tmp_path / "cache"))

    def run(out, *options, suites=("in-distribution",), data=validation):
        code, _, err = cli(
            "integration", "brittleness", "--model", "py:test_suite_cache:wrong",
            "--out", str(tmp_path / out), "--validation", str(data), "--suites", *suites,
            "--n", "1", "--k", "1", "--workers", "1", *options,
        )  # fmt: skip
        assert code == 0, err
        return err

    return run


def _manifest(run: Path, suite: str) -> dict:
    return json.loads((run / "shards" / "suite" / f"{suite}.json").read_text())


def test_a_second_run_takes_the_suites_from_the_cache_byte_for_byte(brittleness, builds, tmp_path):
    suites = ("in-distribution", "operator-extrapolation")
    # a generated suite at the smallest training max_ops: its sets of up to 21 operators are
    # made faster than the paper's of up to 35
    brittleness("first", "--train-max-ops", "1", suites=suites)
    assert builds == dict.fromkeys(suites, 1)
    err = brittleness("second", "--train-max-ops", "1", suites=suites)
    assert builds == dict.fromkeys(suites, 1)  # not built again
    first, second = tmp_path / "first", tmp_path / "second"
    for suite in suites:
        name = f"{suite}.parquet"
        assert (second / "suites" / name).read_bytes() == (first / "suites" / name).read_bytes()
        key = _manifest(second, suite)["cache_key"]
        assert f"{suite}: from the cache (key {key[:16]})" in err
        assert _manifest(second, suite)["source"] == "cache"
        assert _manifest(first, suite)["source"] == "built"
    assert len(list((tmp_path / "cache" / "suites").glob("*.sha256"))) == len(suites)
    fail = json.loads((second / "summary.json").read_text())["fail"]
    assert fail == json.loads((first / "summary.json").read_text())["fail"]


def test_another_seed_n_or_validation_file_builds_the_suite_again(
    brittleness, builds, validation, tmp_path
):
    brittleness("first")
    brittleness("seed", "--seed", "7")
    brittleness("n", "--n", "2")
    other = tmp_path / validation.name  # the same name, other bytes
    other.write_text(validation.read_text().splitlines()[-1] + "\n")
    brittleness("data", data=other)
    assert builds["in-distribution"] == 4
    brittleness("again")
    assert builds["in-distribution"] == 4


def test_the_key_holds_what_each_table_is_made_from(validation, tmp_path):
    request = SuiteRequest(n=3, seed=43, validation=validation, method="bwd", workers=1)

    def key(name, **changes):
        return cache_key(suite_key(name, replace(request, **changes)))

    renamed = tmp_path / "renamed.valid"  # in-distribution names its set after the file
    renamed.write_bytes(validation.read_bytes())
    for name, changes in [
        ("in-distribution", {"seed": 7}),
        ("in-distribution", {"n": 4}),
        ("in-distribution", {"validation": renamed}),
        ("in-distribution", {"split": "valid"}),
        ("operator-extrapolation", {"method": "ibp"}),
        ("operator-extrapolation", {"workers": 2}),  # rounds of 4 attempts, not 3
        ("operator-extrapolation", {"train_max_ops": 8}),
    ]:
        assert key(name, **changes) != key(name), (name, changes)
    # at the paper's 15 the key is what it was before the setting existed
    assert "train_max_ops" not in suite_key("operator-extrapolation", request)
    assert key("robustness-simple", validation=renamed, method="ibp") == key("robustness-simple")
    # from N = 64 up (the paper's 500) every worker count makes rounds of 64
    assert key("operator-extrapolation", n=500, workers=2) == key("operator-extrapolation", n=500)
    with pytest.raises(ValueError, match="need no model"):
        suite_key("compositionality", request)


def test_the_generated_table_does_not_depend_on_the_worker_count():
    """So the key leaves workers out (it holds the round size, which IBP's cache depends on)."""
    one = operator_extrapolation(n=2, workers=1, offsets=())
    two = operator_extrapolation(n=2, workers=2, offsets=())  # rounds of 4 attempts, not 2
    assert len(one) == 2 and one.equals(two)


def test_a_corrupt_entry_is_rebuilt_and_replaced(brittleness, builds, tmp_path):
    mine = ("--suite-cache", str(tmp_path / "mine"))
    brittleness("first", *mine)
    [entry] = [p for p in (tmp_path / "mine").iterdir() if p.suffix != ".sha256"]
    entry.write_bytes(entry.read_bytes()[:-10])  # truncated
    err = brittleness("second", *mine)
    assert "fails its sha256" in err and builds["in-distribution"] == 2
    assert _manifest(tmp_path / "second", "in-distribution")["source"] == "built"
    err = brittleness("third", *mine)
    assert "from the cache" in err and builds["in-distribution"] == 2
    assert not (tmp_path / "cache").exists()


def test_no_suite_cache_builds_every_suite_and_writes_no_cache(brittleness, builds, tmp_path):
    brittleness("first", "--no-suite-cache")
    brittleness("second", "--no-suite-cache")
    assert builds["in-distribution"] == 2
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--suite-cache", "DIR", "--no-suite-cache"], "must be left out with --no-suite-cache"),
        (["--suite-cache", "FILE"], "'--suite-cache': FILE is a file, not a folder"),
    ],
)
def test_bad_suite_cache_options_are_one_line_and_exit_2(cli, tmp_path, options, message):
    (tmp_path / "FILE").write_text("")
    code, _, err = cli(
        "integration", "brittleness", "--model", "sympy", "--out", str(tmp_path / "r"),
        "--n", "1", "--suites", "robustness-simple",
        *[str(tmp_path / o) if o in ("DIR", "FILE") else o for o in options],
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1, err
    assert message.replace("FILE", str(tmp_path / "FILE")) in err
    assert not (tmp_path / "r").exists()
