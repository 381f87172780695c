"""Every run config follows one protocol: identity without the runtime fields, rebuilt from
the stored identity, and the hashes of runs made before the protocol kept."""

import json
import subprocess
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

import pytest
from helpers import model_settings

from genprobe.decoding.config import DecodingConfig
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.runs.config import FileRef, Options, Recorded
from genprobe.runs.provenance import config_hash, file_digest, git_state, provenance
from genprobe.runs.rundir import open_run, read_config
from genprobe.studies.brittleness.config import BrittlenessConfig
from genprobe.studies.integration_train.config import IntegrationTrainConfig
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.tasks.integration.generation_config import (
    GenerationConfig,
    GeneratorConfig,
    TreeSettings,
)
from genprobe.tasks.registry import load_task
from genprobe.training.trainer import TrainConfig
from genprobe.under_test.settings import ModelSettings, sent_to_workers

MODEL = model_settings(
    "sympy", decoding=DecodingConfig(beam_size=4), deadline=3.0, device="cuda", concurrency=2
)
BRITTLENESS = BrittlenessConfig(
    model=MODEL,
    suites=("robustness-simple", "compositionality"),
    ks=(1, 5),
    workers=3,
)
SAGGA = SaggaConfig(
    model=MODEL, generations=7, minutes=2.0, workers=2, verify_chunk=50, tag_limit=9
)
INTEGRATION = IntegrationTrainConfig(data="pairs.train", epochs=3, device="cpu")
ASKED = model_settings("openai:tiny@http://127.0.0.1:8000/v1", formats=2, shots=1, retries=3)
CONFIGS = [
    SweepConfig(
        seeds=(3, 4), train=TrainConfig(optimizer="adam", lr=0.001), model=RecurrentConfig(layers=2)
    ),
    TrainConfig(batch_size=8, warmup=3),
    BRITTLENESS,
    SAGGA,
    MODEL,
    DecodingConfig(method="sample", samples=5),
    INTEGRATION,
    LanguageModelConfig(ASKED, load_task("addition"), data_seed=2, suite_size=50),
    ProbeConfig(ASKED, task="addition", task_options=(("format", "plain"),), k=2, workers=3),
    # as its identity records it (`absolute`: --tau and the task's options resolved)
    SearchConfig(ASKED, task="addition", generations=3, workers=2, minutes=1.0).absolute(),
    GenerationConfig(GeneratorConfig(method="bwd", tree=TreeSettings(max_int=3)), 5, 0, 2.0, 8, 99),
]


def at_runtime_defaults(config):
    """The config with its runtime fields, and those of the configs inside it, at defaults."""
    changes = {}
    for f in fields(config):
        value = getattr(config, f.name)
        if f.name in config.RUNTIME:
            changes[f.name] = f.default
        elif hasattr(value, "RUNTIME"):
            changes[f.name] = at_runtime_defaults(value)
    return replace(config, **changes)


def stored(config):
    """The identity as config.json holds it (tuples become lists)."""
    return json.loads(json.dumps(config.identity()))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: type(c).__name__)
def test_a_config_is_rebuilt_from_its_stored_identity(config):
    rebuilt = type(config).from_identity(stored(config))
    assert rebuilt.identity() == config.identity()
    assert rebuilt == at_runtime_defaults(config)
    assert rebuilt.validated() is rebuilt


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: type(c).__name__)
def test_runtime_fields_are_fields_and_stay_out_of_the_identity(config):
    names = {f.name for f in fields(config)}
    assert set(config.RUNTIME) <= names
    assert not set(config.RUNTIME) & set(config.identity())


def test_runs_made_before_the_protocol_keep_their_hash():
    """Hashes of these configs' identities as computed before the protocol existed."""
    assert config_hash(BRITTLENESS.identity()) == "fa6efecc721c6e11"
    assert config_hash(SAGGA.identity()) == "737392a1df408d79"
    assert config_hash(INTEGRATION.identity()) == "4226825f17b5ac8a"


def test_changing_only_runtime_fields_reopens_the_same_run(tmp_path):
    run = open_run(tmp_path / "run", "sagga", SAGGA)
    elsewhere = replace(SAGGA, minutes=None, workers=8, model=replace(MODEL, device="cpu"))
    assert open_run(tmp_path / "run", "sagga", elsewhere) == run
    assert read_config(run)["config"] == stored(SAGGA)


def test_files_enter_the_identity_by_digest_and_come_back_as_paths(tmp_path):
    validation = tmp_path / "valid.txt"
    validation.write_text("1|sub Y' x x\tmul INT+ 2 pow x INT+ 2\n")
    config = replace(BRITTLENESS, validation=str(validation))
    assert config.identity()["validation"]["path"] == str(validation)
    assert BrittlenessConfig.from_identity(stored(config)).validation == str(validation)
    before = config_hash(config.identity())
    validation.write_text("1|sub Y' x x\tmul INT+ 3 pow x INT+ 2\n")
    assert config_hash(config.identity()) != before


def test_a_run_grows_only_through_the_config_rebuilt_from_its_identity(tmp_path):
    small = SweepConfig(seeds=(0, 1), seeds_per_shard=2)
    run = open_run(tmp_path / "run", "seed-sweep", small)
    seen = []

    def extends(earlier):
        seen.append(earlier)
        return True

    grown = replace(small, seeds=(0, 1, 2))
    assert open_run(run, "seed-sweep", grown, extends) == run
    assert seen == [small]
    assert read_config(run)["extended_from"] == [config_hash(small.identity())]


def test_provenance_says_whether_the_code_differs_from_its_commit(tmp_path):
    assert git_state(tmp_path) == {"git_commit": None}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "code.py").write_text("a = 1\n")
    subprocess.run([*git, "add", "code.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert git_state(tmp_path) == {"git_commit": head.strip(), "git_dirty": False}
    (tmp_path / "notes.txt").write_text("untracked files are not the code\n")
    assert git_state(tmp_path)["git_dirty"] is False
    (tmp_path / "code.py").write_text("a = 2\n")
    assert git_state(tmp_path)["git_dirty"] is True


def test_provenance_names_the_cpu_kernels_and_settings_that_round_the_floats(monkeypatch):
    import torch

    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    monkeypatch.delenv("MKL_CBWR", raising=False)
    facts = provenance()["machine"]
    assert facts["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert (
        facts["settings"]["ATEN_CPU_CAPABILITY"] == "avx2" and "MKL_CBWR" not in facts["settings"]
    )
    assert facts["cpu"] and facts["cores"] >= 1
    assert (facts["mkl"] is None) == (not torch.backends.mkl.is_available())


def test_workers_elsewhere_get_the_checkpoint_by_its_absolute_path(tmp_path, monkeypatch):
    """A brittleness or SAGGA run sends its model's settings to workers with the checkpoint's
    path absolute; its identity keeps the spec as given."""
    monkeypatch.chdir(tmp_path)
    given = SaggaConfig(model_settings("ckpt:runs/bwd/model.pt", cache_dir="cache"))
    sent = sent_to_workers(given)
    assert str(sent.model.spec) == f"ckpt:{tmp_path}/runs/bwd/model.pt"
    assert sent.model.cache_dir == f"{tmp_path}/cache"
    assert replace(sent, model=given.model) == given
    assert sent_to_workers(SaggaConfig(model_settings("sympy"))).model == model_settings("sympy")


@dataclass(frozen=True)
class _Inner(Recorded):
    RUNTIME: ClassVar[tuple[str, ...]] = ("workers",)
    rate: float = 0.5
    workers: int = 1


@dataclass(frozen=True)
class _Outer(Recorded):
    ADDED_DEFAULTS: ClassVar[dict] = {"late": 0}
    data: FileRef
    inner: _Inner = _Inner()
    extra: FileRef | None = None
    sizes: tuple[int, ...] = (1, 2)
    late: int = 0


def test_an_identity_written_by_field_types_records_files_nested_configs_and_reads_back(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("rows\n")
    config = _Outer(str(data), _Inner(rate=0.25, workers=4), sizes=(3,))
    identity = config.identity()
    assert identity == {
        "data": {"path": str(data), "sha256": file_digest(data)},
        "inner": {"rate": 0.25},  # its runtime field left out
        "extra": None,
        "sizes": [3],
    }  # `late`, added after runs existed, left out at its default
    assert _Outer.from_identity(json.loads(json.dumps(identity))) == replace(
        config, inner=_Inner(rate=0.25)
    )
    assert _Outer(str(data), late=2).identity()["late"] == 2
    data.write_text("other rows\n")  # another file's bytes: another identity
    assert config.identity()["data"]["sha256"] != identity["data"]["sha256"]


@dataclass(frozen=True)
class _Listed(Recorded):
    FLAT: ClassVar[tuple[str, ...]] = ("model",)
    model: ModelSettings
    options: Options = ()
    tree: TreeSettings = field(default_factory=TreeSettings)


def test_flat_settings_options_and_dataclasses_inside_are_recorded_and_read_back():
    config = _Listed(ASKED, options=(("b", 2), ("a", "x")), tree=TreeSettings(max_int=2))
    identity = config.identity()
    assert identity["model"] == str(ASKED.spec) and identity["formats"] == 2  # at the top
    assert identity["options"] == {"a": "x", "b": 2}
    rebuilt = _Listed.from_identity(json.loads(json.dumps(identity)))
    assert rebuilt.options == (("a", "x"), ("b", 2)) and rebuilt.tree == config.tree
    assert rebuilt.model == replace(ASKED, retries=None)  # its runtime settings at defaults
