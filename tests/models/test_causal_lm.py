"""The Hugging Face causal language model on a tiny GPT-2 the test builds and saves (random
weights, a byte-level BPE tokenizer trained on addition problems): batched decoding against one
prompt at a time, seeded sampling, beams, stop strings, answer log-probabilities against the
model's own logits, and the errors for directories that hold no causal model."""

import functools
import re
import shutil
import sys

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from helpers import offline_hub_cache, save_in_hub_cache, save_tiny_gpt2

from genprobe.errors import CheckpointError, ConfigError, GenprobeError
from genprobe.under_test.adapters.causal_lm import CausalLM, hub_name, load_causal_lm

PROMPTS = ["12+34=", "7+5=", "99+1=", "3+40=", "58+27=", "1+1=", "60+9=", "4+"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="module")
def lm(saved):
    return load_causal_lm(saved)


def hand_logprob(lm, prompt_ids: list[int], answer_ids: list[int]) -> float:
    """The sum of log p(answer token | everything before it), from one unbatched forward."""
    ids = torch.tensor([prompt_ids + answer_ids])
    with torch.no_grad():
        logprobs = torch.log_softmax(lm.model(input_ids=ids).logits[0].double(), dim=-1)
    return sum(float(logprobs[len(prompt_ids) + j - 1, t]) for j, t in enumerate(answer_ids))


def test_batched_greedy_equals_one_prompt_at_a_time(lm):
    batched = lm.complete(PROMPTS, 10, batch_size=len(PROMPTS))
    alone = [lm.complete([prompt], 10)[0] for prompt in PROMPTS]
    assert batched == alone
    assert len({len(lm.tokenizer(p).input_ids) for p in PROMPTS}) > 1  # padding was needed
    assert all(len(texts) == 1 and texts[0] for texts in batched)


def test_sampling_is_reproducible_for_a_seed_and_independent_of_the_batch(lm):
    first = lm.complete(PROMPTS, 10, method="sample", seed=3, batch_size=8)
    assert lm.complete(PROMPTS, 10, method="sample", seed=3, batch_size=3) == first
    assert lm.complete(PROMPTS, 10, method="sample", seed=4, batch_size=8) != first
    assert first != lm.complete(PROMPTS, 10)  # it sampled, not decoded greedily


def test_a_low_temperature_samples_the_greedy_completion(lm):
    cold = lm.complete(PROMPTS, 6, method="sample", seed=0, temperature=1e-4)
    assert cold == lm.complete(PROMPTS, 6)


def generates_own_beams(lm, row: list[int], max_new_tokens: int):
    """transformers' own beam search (4 beams) of one prompt's tokens, with the scores."""
    ids = torch.tensor([row])
    return lm.model.generate(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=max_new_tokens,
        num_beams=4,
        num_return_sequences=4,
        do_sample=False,
        pad_token_id=lm.pad_id,
        output_scores=True,
        return_dict_in_generate=True,
    )


def test_beam_gives_ranked_distinct_completions(lm):
    found = lm.complete(PROMPTS, 4, method="beam", beams=4, batch_size=3)
    assert [len(texts) for texts in found] == [4] * len(PROMPTS)
    assert all(len(set(texts)) == 4 for texts in found)
    assert found == [lm.complete([prompt], 4, method="beam", beams=4)[0] for prompt in PROMPTS]
    # best first, as transformers ranks the beams of one prompt by their scores
    row = lm.tokenizer(PROMPTS[0]).input_ids
    reference = generates_own_beams(lm, row, 4)
    assert (reference.sequences_scores.diff() <= 0).all()
    assert found[0] == lm.tokenizer.batch_decode(reference.sequences[:, len(row) :])
    assert lm.complete(PROMPTS, 6, method="beam", beams=1) == lm.complete(PROMPTS, 6)


def test_batched_beams_on_the_prompts_cache_are_generates_own_search_of_each_prompt(lm):
    rows = [lm.tokenizer(p).input_ids for p in [*PROMPTS, "1"]]
    assert len(rows[-1]) == 1  # no cache to compute for it alone
    settings = {"output_scores": True, "return_dict_in_generate": True}
    together = lm._generate_beams(rows, 5, 4, [], **settings)
    width = max(map(len, rows))
    for r, row in enumerate(rows):
        reference = generates_own_beams(lm, row, 5)
        expected = reference.sequences[:, len(row) :]
        alone = lm._generate_beams([row], 5, 4, [], **settings)
        for found, first, start in ((together, 4 * r, width), (alone, 0, len(row))):
            new = found.sequences[first : first + 4, start:]
            assert torch.equal(new[:, : expected.shape[1]], expected)
            assert (new[:, expected.shape[1] :] == lm.pad_id).all()
            scores = found.sequences_scores[first : first + 4]
            torch.testing.assert_close(scores, reference.sequences_scores, atol=1e-5, rtol=0)


def test_beam_search_runs_each_prompt_through_the_model_once(lm, monkeypatch):
    shapes = []
    forward = lm.model.forward

    @functools.wraps(forward)  # its signature: the cache's argument is named as the model's
    def counted(*args, **kwargs):
        shapes.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", counted)
    lm.complete(PROMPTS, 4, method="beam", beams=4, batch_size=len(PROMPTS))
    width = max(len(lm.tokenizer(p).input_ids) for p in PROMPTS)
    assert (len(PROMPTS), width - 1) in shapes  # the prompts but their last tokens, once
    assert all(rows == len(PROMPTS) or length == 1 for rows, length in shapes)


def test_a_hybrid_models_recurrent_state_is_left_to_generates_beam_search(lm):
    """Qwen3-Next's linear-attention layers keep a state that repeating the cache's batch for
    the beams would not repeat: its beams run on `generate` alone, and still batch."""
    import transformers

    if not hasattr(transformers, "Qwen3NextConfig"):
        pytest.skip("transformers without Qwen3-Next")
    width = {"hidden_size": 16, "intermediate_size": 16, "head_dim": 8}
    linear = {"linear_num_value_heads": 2, "linear_num_key_heads": 1}
    linear |= {"linear_key_head_dim": 8, "linear_value_head_dim": 8}
    experts = {"num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 16}
    config = transformers.Qwen3NextConfig(
        vocab_size=len(lm.tokenizer),
        num_hidden_layers=2,
        layer_types=["linear_attention", "full_attention"],
        num_attention_heads=2,
        num_key_value_heads=1,
        shared_expert_intermediate_size=16,
        max_position_embeddings=64,
        **width,
        **linear,
        **experts,
    )
    torch.manual_seed(0)
    hybrid = CausalLM(transformers.Qwen3NextForCausalLM(config).eval(), lm.tokenizer, "hybrid")
    prompts = PROMPTS[:2]
    found = hybrid.complete(prompts, 3, method="beam", beams=2)
    assert found == [hybrid.complete([prompt], 3, method="beam", beams=2)[0] for prompt in prompts]


def test_stop_strings_cut_the_completion(lm):
    full = lm.complete(PROMPTS, 12)
    prompt, text = next((p, t[0]) for p, t in zip(PROMPTS, full, strict=True) if len(t[0]) > 3)
    stop = text[2:4]
    assert lm.complete([prompt], 12, stop=[stop, "never-there"]) == [[text[: text.find(stop)]]]
    beamed = lm.complete([prompt], 12, method="beam", beams=3, stop=[stop])
    assert all(stop not in beam for beam in beamed[0])


def test_logprob_is_the_sum_of_the_answer_tokens_log_probabilities(lm):
    tokenize = lm.tokenizer
    prompt, answer = "12+34=", "46\n"
    prompt_ids = tokenize(prompt).input_ids
    joint = tokenize(prompt + answer).input_ids
    assert joint[: len(prompt_ids)] == prompt_ids  # no merge across the boundary here
    expected = hand_logprob(lm, prompt_ids, joint[len(prompt_ids) :])
    assert lm.logprob([prompt], [answer])[0] == pytest.approx(expected, abs=1e-5)


def test_an_answer_that_merges_with_its_prompt_keeps_the_prompts_tokens(lm):
    tokenize = lm.tokenizer
    prompt, answer = "1", "2+34=46"  # "12" is one token: "1" + "2…" would merge
    prompt_ids = tokenize(prompt).input_ids
    assert tokenize(prompt + answer).input_ids[0] != prompt_ids[0]
    answer_ids = tokenize(answer, add_special_tokens=False).input_ids
    expected = hand_logprob(lm, prompt_ids, answer_ids)
    assert lm.logprob([prompt], [answer])[0] == pytest.approx(expected, abs=1e-5)


def test_logprob_does_not_depend_on_the_batch(lm):
    answers = ["46", "12", "100\n", "43", "85", "2", "69", ""]
    together = lm.logprob(PROMPTS, answers, batch_size=8)
    alone = np.array(
        [lm.logprob([p], [a], batch_size=1)[0] for p, a in zip(PROMPTS, answers, strict=True)]
    )
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert together[-1] == 0.0 and (together[:-1] < 0).all()
    assert lm.logprob([], []).shape == (0,)
    assert lm.complete([], 4) == []


def test_settings_out_of_range_are_config_errors(lm):
    with pytest.raises(ConfigError, match="method"):
        lm.complete(PROMPTS, 4, method="nucleus")
    with pytest.raises(ConfigError, match="seed"):
        lm.complete(PROMPTS, 4, method="sample")
    with pytest.raises(ConfigError, match="temperature"):
        lm.complete(PROMPTS, 4, method="sample", seed=0, temperature=0)
    with pytest.raises(ConfigError, match=r"prompts\[1\]"):
        lm.complete(["1+1=", ""], 4)
    with pytest.raises(ConfigError, match=r"prompts\[0\].*64 positions"):
        lm.complete(["1+1=" * 20], 4)
    with pytest.raises(ConfigError, match="answers"):
        lm.logprob(PROMPTS, ["1"])


def test_a_bin_checkpoint_loads_with_weights_only(saved, tmp_path, lm):
    from safetensors.torch import load_file

    target = tmp_path / "bin"
    shutil.copytree(saved, target)
    state = load_file(target / "model.safetensors")
    (target / "model.safetensors").unlink()
    torch.save(state, target / "pytorch_model.bin")
    assert load_causal_lm(target).complete(PROMPTS, 6) == lm.complete(PROMPTS, 6)


def test_directories_without_a_causal_model_are_checkpoint_errors(saved, tmp_path):
    with pytest.raises(CheckpointError, match=re.escape(f"{tmp_path / 'absent'}: not a directory")):
        load_causal_lm(tmp_path / "absent")
    with pytest.raises(CheckpointError, match=re.escape(f"{tmp_path}: no config.json")):
        load_causal_lm(tmp_path)

    no_tokenizer = tmp_path / "no-tokenizer"
    shutil.copytree(saved, no_tokenizer)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (no_tokenizer / name).unlink()
    with pytest.raises(CheckpointError, match=re.escape(f"{no_tokenizer}: no tokenizer")):
        load_causal_lm(no_tokenizer)

    no_weights = tmp_path / "no-weights"
    shutil.copytree(saved, no_weights)
    (no_weights / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match=re.escape(f"{no_weights}: no weights")):
        load_causal_lm(no_weights)


class Touch:
    """Pickled, it asks the loader to create a file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (type(self.marker).touch, (self.marker,))


def test_unreadable_config_and_weights_are_checkpoint_errors(saved, tmp_path):
    broken = tmp_path / "broken-config"
    shutil.copytree(saved, broken)
    (broken / "config.json").write_text("{")
    with pytest.raises(CheckpointError, match=re.escape(f"{broken / 'config.json'}: cannot be")):
        load_causal_lm(broken)

    garbage = tmp_path / "garbage"
    shutil.copytree(saved, garbage)
    (garbage / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(CheckpointError, match=re.escape(f"{garbage}: weights cannot be read")):
        load_causal_lm(garbage)

    pickled = tmp_path / "pickled"
    shutil.copytree(saved, pickled)
    (pickled / "model.safetensors").unlink()
    marker = tmp_path / "code-ran"
    torch.save({"transformer.wte.weight": Touch(marker)}, pickled / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=re.escape(f"{pickled}: weights cannot be read")):
        load_causal_lm(pickled)
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["bert", "t5"])
def test_an_encoder_or_encoder_decoder_model_is_refused(kind, saved, tmp_path):
    from transformers import BertConfig, BertForMaskedLM, T5Config, T5ForConditionalGeneration

    tiny = {"vocab_size": 300}
    if kind == "bert":
        size = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2}
        model = BertForMaskedLM(BertConfig(**tiny, **size, intermediate_size=16))
        named = "BertForMaskedLM"
    else:
        size = {"d_model": 16, "d_ff": 16, "d_kv": 8, "num_layers": 1, "num_heads": 2}
        model = T5ForConditionalGeneration(T5Config(**tiny, **size))
        named = "T5ForConditionalGeneration"
    model.save_pretrained(tmp_path)
    shutil.copy(saved / "tokenizer.json", tmp_path)
    with pytest.raises(CheckpointError, match=f"config.json: {named} is not a causal"):
        load_causal_lm(tmp_path)


def test_without_transformers_the_error_says_what_to_install(saved, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(GenprobeError, match=r"pip install 'genprobe\[hf\]'"):
        load_causal_lm(saved)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty Hugging Face cache, offline: nothing is downloaded."""
    return offline_hub_cache(monkeypatch, tmp_path / "hub")


def test_a_hub_name_loads_from_the_hugging_face_cache(saved, hub, lm):
    save_in_hub_cache(saved, hub, "tiny-org/tiny-gpt2")
    cached = load_causal_lm("tiny-org/tiny-gpt2")
    assert cached.name == "tiny-org/tiny-gpt2"
    assert cached.complete(PROMPTS, 6) == lm.complete(PROMPTS, 6)
    assert cached.complete(PROMPTS, 4, method="beam", beams=3) == lm.complete(
        PROMPTS, 4, method="beam", beams=3
    )


def test_a_hub_name_not_in_the_cache_is_a_one_line_error(saved, hub):
    save_in_hub_cache(saved, hub, "tiny-org/tiny-gpt2")
    for name in ("tiny-org/absent", "absent"):
        with pytest.raises(CheckpointError) as error:
            load_causal_lm(name)
        message = str(error.value)
        assert message.startswith(f"{name}: not a folder, and cannot be loaded as a Hugging Face")
        assert f"not in the Hugging Face cache {hub}, and HF_HUB_OFFLINE is set" in message
        assert "\n" not in message


def test_a_hub_models_bin_weights_load_weights_only(saved, hub, tmp_path, lm):
    from safetensors.torch import load_file

    snapshot = save_in_hub_cache(saved, hub, "tiny-org/bin")
    state = load_file(snapshot / "model.safetensors")
    (snapshot / "model.safetensors").unlink()
    torch.save(state, snapshot / "pytorch_model.bin")
    assert load_causal_lm("tiny-org/bin").complete(PROMPTS, 6) == lm.complete(PROMPTS, 6)

    snapshot = save_in_hub_cache(saved, hub, "tiny-org/pickled")
    (snapshot / "model.safetensors").unlink()
    marker = tmp_path / "code-ran"
    torch.save({"transformer.wte.weight": Touch(marker)}, snapshot / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match="tiny-org/pickled: weights cannot be read"):
        load_causal_lm("tiny-org/pickled")
    assert not marker.exists()


def test_a_hub_model_that_is_not_causal_is_refused(saved, hub, tmp_path):
    from transformers import BertConfig, BertForMaskedLM

    size = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2}
    BertForMaskedLM(BertConfig(vocab_size=300, **size, intermediate_size=16)).save_pretrained(
        tmp_path / "bert"
    )
    save_in_hub_cache(tmp_path / "bert", hub, "tiny-org/bert")
    with pytest.raises(CheckpointError, match=r"^tiny-org/bert: BertForMaskedLM is not a causal"):
        load_causal_lm("tiny-org/bert")


def test_a_path_that_exists_or_cannot_be_a_hub_name_is_a_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert hub_name("tiny-org/tiny-gpt2") == "tiny-org/tiny-gpt2"
    assert hub_name("gpt2") == "gpt2"
    for path in ("./tiny-org/x", "/models/x", "~/x", "models/tiny-org/x", "a..b", "org/x y"):
        assert hub_name(path) is None, path
    (tmp_path / "tiny-org" / "tiny-gpt2").mkdir(parents=True)
    assert hub_name("tiny-org/tiny-gpt2") is None
    with pytest.raises(CheckpointError, match=r"^models/tiny-org/x: not a directory"):
        load_causal_lm("models/tiny-org/x")
