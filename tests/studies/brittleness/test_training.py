"""What a brittleness run reads of the model's training: the data a `ckpt:` run directory
names, the generator's max_ops in the meta.json beside it, the options over both."""

import json

import pytest

from genprobe.errors import DataFormatError
from genprobe.studies.brittleness.training import trained_on
from genprobe.under_test.registry import ModelSpec


def _model(tmp_path, data):
    """A `ckpt:` run directory whose config.json names `data` (model.pt is never read here)."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.pt").write_bytes(b"")
    recorded = {"kind": "integration-train", "config": {"data": str(data)}}
    (model / "config.json").write_text(json.dumps(recorded))
    return model


def _data(tmp_path, name, meta_name, max_ops=8):
    data = tmp_path / name
    data.write_text("1|sub Y' cos x\tsin x\n")
    (tmp_path / meta_name).write_text(json.dumps({"config": {"max_ops": max_ops}}))
    return data


@pytest.mark.parametrize(
    ("name", "meta_name"),
    [("bwd.txt.train", "bwd.txt.meta.json"), ("pairs.jsonl", "pairs.jsonl.meta.json")],
)
def test_max_ops_from_the_generator_metadata_of_the_models_training_data(tmp_path, name, meta_name):
    data = _data(tmp_path, name, meta_name)
    model = _model(tmp_path, data)
    for spec in (f"ckpt:{model}", f"ckpt:{model / 'model.pt'}"):
        training = trained_on(ModelSpec.read(spec))
        assert (training.max_ops, training.data) == (8, str(data))
        assert training.sources == {
            "data": f"read from {model / 'config.json'}",
            "max_ops": f"read from {tmp_path / meta_name}",
        }


def test_the_options_override_what_the_model_records(tmp_path):
    model = _model(tmp_path, _data(tmp_path, "bwd.txt.train", "bwd.txt.meta.json"))
    other = _data(tmp_path, "other.jsonl", "other.jsonl.meta.json", max_ops=12)
    assert trained_on(ModelSpec.read(f"ckpt:{model}"), max_ops=5).max_ops == 5
    training = trained_on(ModelSpec.read(f"ckpt:{model}"), data=str(other))
    assert (training.max_ops, training.data) == (12, str(other))
    assert training.sources["data"] == "given by --train-data"
    assert (
        trained_on(ModelSpec.read("sympy"), max_ops=5).sources["max_ops"]
        == "given by --train-max-ops"
    )


def test_what_is_not_known_says_why(tmp_path):
    assert trained_on(ModelSpec.read("lc:fwd_bwd_ibp.pth")).sources["max_ops"] == (
        "lc:fwd_bwd_ibp.pth records no training data"
    )
    model = _model(tmp_path, tmp_path / "gone.train")
    training = trained_on(ModelSpec.read(f"ckpt:{model}"))
    assert training.max_ops is None and "gone.train, which is not there" in training.sources["data"]
    data = tmp_path / "bare.train"
    data.write_text("")
    recorded = {"kind": "integration-train", "config": {"data": str(data)}}
    (model / "config.json").write_text(json.dumps(recorded))
    training = trained_on(ModelSpec.read(f"ckpt:{model}"))
    assert training.data == str(data) and training.max_ops is None
    assert training.sources["max_ops"].startswith("no generator metadata")
    (model / "config.json").write_text(json.dumps({"kind": "sweep", "config": {"data": 3}}))
    assert (
        "is not the record of an `integration train` run"
        in trained_on(ModelSpec.read(f"ckpt:{model}")).sources["data"]
    )


@pytest.mark.parametrize(
    ("config", "meta", "field"),
    [
        ({"kind": "integration-train", "config": {"data": 3}}, None, "config.data"),
        ({"kind": "integration-train", "config": []}, None, "config.data"),
        ("{not json", None, "not readable as JSON"),
        (None, {"config": {"max_ops": "8"}}, "config.max_ops"),
        (None, {"config": {"max_ops": 0}}, "config.max_ops"),
        (None, {"max_ops": 8}, "config.max_ops"),
    ],
)
def test_a_malformed_record_names_its_file_and_field(tmp_path, config, meta, field):
    data = _data(tmp_path, "bwd.txt.train", "bwd.txt.meta.json")
    model = _model(tmp_path, data)
    if config is not None:
        text = config if isinstance(config, str) else json.dumps(config)
        (model / "config.json").write_text(text)
    if meta is not None:
        (tmp_path / "bwd.txt.meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataFormatError, match=field):
        trained_on(ModelSpec.read(f"ckpt:{model}"))
