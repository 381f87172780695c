"""Every benchmark script still imports against today's code: a benchmark is how a speed
claim is measured, and one that no longer runs measures nothing (two had gone stale with
renames before this test). Each is imported as its own command line would import it, its
folder on the path (benchmarks share helpers); what it measures runs only as a script."""

import importlib.util
import sys
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[1] / "benchmarks"
BENCHMARKS = sorted(FOLDER.glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.stem)
def test_a_benchmark_imports(script, monkeypatch):
    monkeypatch.syspath_prepend(str(FOLDER))
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, script.stem, module)
    spec.loader.exec_module(module)
    assert module.__doc__, f"{script.name} says what it measures"
