"""The content-addressed cache: where it lives, keys, and entries that fail their digest."""

from pathlib import Path

import pytest

from genprobe.runs.cache import Cache, cache_key, default_root

KEY = cache_key({"suite": "robustness-simple", "n": 3})


def test_the_cache_lives_in_genprobe_cache_else_xdg_else_home(monkeypatch, tmp_path):
    monkeypatch.setenv("GENPROBE_CACHE", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_root() == tmp_path / "mine"
    monkeypatch.delenv("GENPROBE_CACHE")
    assert default_root() == tmp_path / "xdg" / "genprobe"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert default_root() == tmp_path / "home" / ".cache" / "genprobe"


def test_a_key_is_the_sha256_of_what_made_the_value_in_any_order():
    assert cache_key({"n": 3, "suite": "robustness-simple"}) == KEY
    assert len(KEY) == 64 and set(KEY) <= set("0123456789abcdef")
    assert cache_key({"suite": "robustness-simple", "n": 4}) != KEY


def test_a_value_is_stored_beside_its_sha256_and_read_back(tmp_path):
    cache = Cache(tmp_path / "c")
    assert cache.get(KEY) is None
    cache.put(KEY, b"table")
    assert cache.get(KEY) == b"table"
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [KEY, f"{KEY}.sha256"]


@pytest.mark.parametrize(
    ("damage", "logged"),
    [
        (lambda entry: entry.write_bytes(b"tab"), "fails its sha256"),  # truncated
        (lambda entry: entry.write_bytes(b"tablE"), "fails its sha256"),
        (lambda entry: Path(f"{entry}.sha256").unlink(), "unreadable"),
    ],
)
def test_a_damaged_entry_is_a_miss_with_a_log_line_and_is_overwritten(tmp_path, damage, logged):
    lines = []
    cache = Cache(tmp_path, log=lines.append)
    cache.put(KEY, b"table")
    damage(tmp_path / KEY)
    assert cache.get(KEY) is None
    [line] = lines
    assert logged in line and KEY in line
    cache.put(KEY, b"table")
    assert cache.get(KEY) == b"table"


def test_a_cache_that_cannot_be_written_logs_and_does_not_raise(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    lines = []
    Cache(tmp_path / "file", log=lines.append).put(KEY, b"table")
    assert len(lines) == 1 and "not written" in lines[0]


def test_a_key_that_is_not_a_sha256_is_refused(tmp_path):
    with pytest.raises(ValueError, match="sha256"):
        Cache(tmp_path).get("../escape")
