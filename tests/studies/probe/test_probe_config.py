"""A probe run's config: an endpoint's API is part of it, and a run made before the option (in
a chat) keeps its hash; how requests are made (cache, concurrency, timeout, retries) is not."""

import json
from dataclasses import replace

import pytest
from helpers import model_settings

from genprobe.errors import ConfigError
from genprobe.runs.provenance import config_hash
from genprobe.studies.probe.config import ProbeConfig

ENDPOINT = ProbeConfig(
    model_settings("openai:tiny@http://127.0.0.1:8000/v1", formats=2, shots=1),
    task="addition", task_options=(("format", "plain"),),
)  # fmt: skip


def _asked(config, **settings):
    """`config` with its model's settings replaced."""
    return replace(config, model=replace(config.model, **settings))


def test_a_run_made_before_the_api_option_keeps_its_hash():
    """The hash this config's identity had before `api` was a setting."""
    assert config_hash(ENDPOINT.identity()) == "c8f5dbff86fa4a06"
    assert config_hash(_asked(ENDPOINT, api="chat").identity()) == "c8f5dbff86fa4a06"
    assert config_hash(_asked(ENDPOINT, api="completions").identity()) != "c8f5dbff86fa4a06"


def test_how_requests_are_made_is_no_part_of_the_identity():
    asked = _asked(ENDPOINT, api="completions")
    elsewhere = _asked(asked, cache_dir="/tmp/cache", concurrency=64, timeout=5.0, retries=0)
    assert elsewhere.identity() == asked.identity()
    rebuilt = ProbeConfig.from_identity(json.loads(json.dumps(elsewhere.identity())))
    assert rebuilt == asked and rebuilt.model.api == "completions"


def test_the_loaded_model_gets_the_endpoints_settings_given(monkeypatch):
    import genprobe.under_test.adapters.integration_tokens as integration_tokens

    given = {}
    monkeypatch.setattr(
        integration_tokens, "as_sequence_model", lambda spec, task, **kw: given.update(kw)
    )
    _asked(ENDPOINT, cache_dir="c", retries=0).model.sequence_model(None)
    assert {k: given[k] for k in ("api", "cache_dir", "retries")} == {
        "api": "chat", "cache_dir": "c", "retries": 0,
    }  # fmt: skip
    assert "concurrency" not in given and "timeout" not in given  # the endpoint's own


@pytest.mark.parametrize(
    ("config", "named"),
    [
        (_asked(ENDPOINT, api="legacy"), "api"),
        (ProbeConfig(model_settings("sympy", retries=2), task="integration"), "--retries"),
        (ProbeConfig(model_settings("sympy", api="completions", timeout=1.0), task="integration"),
         "--api/--timeout"),
        # a probe of a token model decodes by its --k: an integration model's decoding
        # settings are refused (an integration model decodes by its own: the brittleness preset)
        (_asked(ENDPOINT, deadline=1.0), "deadline"),
    ],
)  # fmt: skip
def test_endpoint_settings_are_an_endpoints(config, named):
    with pytest.raises(ConfigError) as raised:
        config.validated()
    assert raised.value.name == named
