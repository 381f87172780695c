"""Checkpoints load strictly and weights-only: L&C's layout, `module.` prefixes, a pickled
argparse.Namespace as params, and clear errors naming the key that does not fit."""

import argparse
import pickle

import pytest
import torch

from genprobe.errors import CheckpointError
from genprobe.models.checkpoints import load_transformer, save_transformer
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig

CONFIG = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=2, n_heads=4, max_positions=32)


def model():
    torch.manual_seed(0)
    return Seq2SeqTransformer(CONFIG).eval()


def lc_style(network, params, prefix=""):
    return {
        "encoder": {prefix + k: v for k, v in network.encoder.state_dict().items()},
        "decoder": {prefix + k: v for k, v in network.decoder.state_dict().items()},
        "params": params,
        "epoch": 1,
    }


def same_outputs(a, b):
    src = torch.tensor([[0, 67, 79, 12, 0]])
    tgt = torch.tensor([[0, 54, 12, 12]])
    return torch.equal(a(src, tgt), b(src, tgt))


def test_state_dict_keys_are_lample_and_chartons():
    keys = set(model().state_dict())
    for key in (
        "encoder.position_embeddings.weight", "encoder.layer_norm_emb.bias",
        "encoder.attentions.0.q_lin.weight", "encoder.ffns.0.lin1.weight",
        "encoder.layer_norm1.0.weight", "encoder.layer_norm2.0.bias",
        "decoder.encoder_attn.1.out_lin.bias", "decoder.layer_norm15.1.weight",
        "decoder.proj.weight", "decoder.proj.bias",
    ):  # fmt: skip
        assert key in keys
    network = model()
    assert network.decoder.proj.weight is network.decoder.embeddings.weight
    assert network.encoder.ffns[0].lin1.weight.shape == (64, 16)


@pytest.mark.parametrize("prefix", ["", "module."])
def test_lc_checkpoint_with_a_namespace_loads_weights_only(tmp_path, prefix):
    network = model()
    params = argparse.Namespace(n_heads=4, emb_dim=16, tasks="prim_fwd", reload_model="")
    path = tmp_path / "lc.pth"
    torch.save(lc_style(network, params, prefix), path)
    with pytest.raises(pickle.UnpicklingError):  # plain weights-only refuses the Namespace
        torch.load(path, weights_only=True)
    loaded, read_params = load_transformer(path)
    assert read_params["tasks"] == "prim_fwd"
    assert loaded.config == CONFIG
    assert same_outputs(network, loaded)


def test_dimensions_are_read_from_the_tensors(tmp_path):
    network = model()
    path = tmp_path / "lc.pth"
    torch.save(lc_style(network, {"n_heads": 4}), path)
    loaded, _ = load_transformer(path)
    assert (loaded.config.dim, loaded.config.n_enc_layers, loaded.config.n_dec_layers) == (16, 1, 2)
    assert loaded.config.max_positions == 32


def test_our_checkpoint_round_trips(tmp_path):
    network = model()
    save_transformer(tmp_path / "model.pt", network, {"lr": 1e-4})
    loaded, params = load_transformer(tmp_path / "model.pt")
    assert params == {"lr": 1e-4}
    assert same_outputs(network, loaded)


def test_a_missing_key_is_named(tmp_path):
    data = lc_style(model(), {"n_heads": 4})
    del data["decoder"]["layer_norm15.1.bias"]
    torch.save(data, tmp_path / "bad.pth")
    with pytest.raises(CheckpointError, match=r"decoder is missing 'layer_norm15.1.bias'"):
        load_transformer(tmp_path / "bad.pth")


def test_a_wrong_shape_is_named(tmp_path):
    data = lc_style(model(), {"n_heads": 4})
    data["encoder"]["ffns.0.lin1.weight"] = torch.zeros(32, 16)
    torch.save(data, tmp_path / "bad.pth")
    with pytest.raises(CheckpointError, match=r"encoder.ffns.0.lin1.weight has shape \(32, 16\)"):
        load_transformer(tmp_path / "bad.pth")


def test_arbitrary_objects_are_refused_not_unpickled(tmp_path):
    data = lc_style(model(), {"n_heads": 4})
    data["params"] = {"hook": print}  # any callable: must not be allowed back in
    torch.save(data, tmp_path / "evil.pth")
    with pytest.raises(CheckpointError, match="not a checkpoint genprobe can load") as raised:
        load_transformer(tmp_path / "evil.pth")
    assert "weights_only=False" not in str(raised.value)  # torch's advice is not ours


def test_the_same_model_is_the_same_bytes_wherever_it_is_written(tmp_path):
    first, second = tmp_path / "one" / "model.pt", tmp_path / "two" / "model.pt"
    save_transformer(first, model(), {"n_heads": 4}, step=1)
    save_transformer(second, model(), {"n_heads": 4}, step=1)
    assert first.read_bytes() == second.read_bytes()
    assert same_outputs(load_transformer(second)[0], model())


@pytest.mark.parametrize(
    "content", [b"not a zip", b"x^2\tsin x\n", pickle.dumps({"encoder": {}, "decoder": {}})]
)
def test_not_a_checkpoint(tmp_path, content):
    (tmp_path / "x.pth").write_bytes(content)
    with pytest.raises(CheckpointError, match=r"x\.pth: not a checkpoint genprobe can load") as e:
        load_transformer(tmp_path / "x.pth")
    assert "weights_only" not in str(e.value)
    with pytest.raises(CheckpointError, match="no such"):
        load_transformer(tmp_path / "missing.pth")
