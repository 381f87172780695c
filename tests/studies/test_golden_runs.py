"""Runs that earlier code made (`tests/golden/runs.tar.gz`, by `tests/golden/pin.py`) hold
today's code to them:

- a finished run is replayed: the command exits 0, its config (and so its hash) is kept, and
  what it computed is unchanged;
- a run that earlier code was killed in (SIGKILL, mid-way) resumes and finishes with what the
  finished run computed;
- a fresh run computes the same (`test_every_study.py` compares each of its runs with these).

Trained numbers depend on the CPU's float rounding: where this machine is not the one that
pinned the runs (`machine.json`), the numbers of training are not compared, and those of
decoding a committed model are compared to a relative 1e-5."""

import shutil

import pytest
from study_runs import (
    INPUTS,
    RESULTS_ONLY,
    STUDIES,
    assert_same_numbers,
    canonical,
    out_of,
    unpack,
)

pytestmark = pytest.mark.slow

KINDS = [kind for kind in STUDIES if kind not in RESULTS_ONLY]


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    return unpack(tmp_path_factory.mktemp("golden"))


def _copy(golden, kind: str, tmp_path):
    """The committed runs of `kind`, in a directory of this test's own."""
    root = tmp_path / "golden"
    (root / "runs").mkdir(parents=True)
    for path in golden.glob(out_of(kind) + "*"):
        copy = shutil.copytree if path.is_dir() else shutil.copy2
        copy(path, root / path.relative_to(golden))
    return root


@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_run_made_before_is_replayed_with_its_config_and_numbers(
    kind, golden, cli, tmp_path
):
    study = STUDIES[kind]
    root = _copy(golden, kind, tmp_path)
    out = root / out_of(kind)
    config = study.run_of(out) / "config.json"
    stored = config.read_bytes()
    code, _, err = cli(*study.argv(INPUTS), "--out", str(out))
    assert code == 0, err
    assert config.read_bytes() == stored
    assert canonical(study.results(out)) == canonical(study.results(golden / out_of(kind)))


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_killed_under_earlier_code_resumes_to_the_numbers_of_the_finished_one(
    kind, golden, cli, tmp_path
):
    study = STUDIES[kind]
    root = _copy(golden, kind, tmp_path)
    killed = out_of(kind) + ".killed"
    code, _, err = cli(*study.argv(INPUTS), "--out", str(root / killed))
    assert code == 0, err
    finished = study.results(golden / out_of(kind))
    assert_same_numbers(kind, study.results(root / killed), finished, golden)
