"""A probe run's config: an endpoint's API is part of it, and a run made before the option (in
a chat) keeps its hash; how requests are made (cache, concurrency, timeout, retries) is not."""

import json
from dataclasses import replace

import pytest

from genprobe.errors import ConfigError
from genprobe.runs.provenance import config_hash
from genprobe.studies.probe.config import ProbeConfig

ENDPOINT = ProbeConfig(
    "openai:tiny@http://127.0.0.1:8000/v1", task="addition", task_options=(("format", "plain"),),
    formats=2, shots=1,
)  # fmt: skip


def test_a_run_made_before_the_api_option_keeps_its_hash():
    """The hash this config's identity had before `api` was a setting."""
    assert config_hash(ENDPOINT.identity()) == "c8f5dbff86fa4a06"
    assert config_hash(replace(ENDPOINT, api="chat").identity()) == "c8f5dbff86fa4a06"
    assert config_hash(replace(ENDPOINT, api="completions").identity()) != "c8f5dbff86fa4a06"


def test_how_requests_are_made_is_no_part_of_the_identity():
    asked = replace(ENDPOINT, api="completions")
    elsewhere = replace(asked, cache_dir="/tmp/cache", concurrency=64, timeout=5.0, retries=0)
    assert elsewhere.identity() == asked.identity()
    rebuilt = ProbeConfig.from_identity(json.loads(json.dumps(elsewhere.identity())))
    assert rebuilt == asked and rebuilt.api == "completions"


def test_the_loaded_model_gets_the_endpoints_settings_given():
    settings = replace(ENDPOINT, cache_dir="c", retries=0).model_settings()
    assert {k: settings[k] for k in ("api", "cache_dir", "retries")} == {
        "api": "chat", "cache_dir": "c", "retries": 0,
    }  # fmt: skip
    assert "concurrency" not in settings and "timeout" not in settings  # the endpoint's own


@pytest.mark.parametrize(
    ("config", "named"),
    [
        (replace(ENDPOINT, api="legacy"), "api"),
        (ProbeConfig("sympy", task="integration", retries=2), "--retries"),
        (ProbeConfig("sympy", task="integration", api="completions", timeout=1.0),
         "--api/--timeout"),
    ],
)  # fmt: skip
def test_endpoint_settings_are_an_endpoints(config, named):
    with pytest.raises(ConfigError) as raised:
        config.validated()
    assert raised.value.name == named
