"""`verify --learn`'s pure parts: paths from differences, the learnt table, editing verify.toml.

The runs themselves are in `tests/integration/test_verify_noisy.py`; here, the learning from
captures, and the text edit that must leave everything in the file but its own table as the
user wrote it.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from test_diff_factory import capture, send_exchange

from recorder.capture import Exchange
from recorder.verify import (
    ConfigError,
    Learning,
    Learnt,
    learn,
    learnt_table,
    pattern_of,
    with_learnt,
)
from recorder.verify._learnt import checked

USER = '# mine\nignore = ["header:etag"]  # kept\n\n[captures."grpc/*.http"]\nignore = ["status"]\n'


def _sent(text: str, seed: str) -> Exchange:
    x = send_exchange(1, seed, 8080)
    assert x.response is not None
    document = json.loads(x.response.body)
    document["result"]["task"]["artifacts"][0]["parts"][0]["text"] = text
    return replace(x, response=replace(x.response, body=json.dumps(document).encode()))


def test_learning_names_what_differs_between_runs_and_which_runs() -> None:
    runs = [capture(_sent(t, s), seed=s) for t, s in (("a", "x"), ("a", "y"), ("b", "z"))]
    learning = learn(runs)
    path = "body.result.task.artifacts[0].parts[0].text"
    assert learning == Learning(3, (Learnt(path, ((1, 3), (2, 3))),))
    assert learning.learnt[0].comment() == "differed between runs 1 and 3, 2 and 3"
    assert learn(runs, ignore=[path]).learnt == ()  # the ignores in force are not learnt again


def test_paths_become_patterns_in_the_recording_s_indexes() -> None:
    assert pattern_of("events[3~4].data.result.kind") == "events[3].data.result.kind"
    assert pattern_of("body.skills[id=echo].name") == "body.skills[id=echo].name"
    assert pattern_of("nonsense[") is None


def _table(*patterns: str, runs: int = 3) -> str:
    learning = Learning(runs, tuple(Learnt(p, ((1, 2),)) for p in patterns))
    return learnt_table("llm.http", learning, agent="http://127.0.0.1:9", when="T")


@pytest.mark.parametrize("start", ["", USER, USER.rstrip("\n"), USER + "\n\n"])
def test_the_table_is_added_and_then_replaced_leaving_the_rest(start: str) -> None:
    once = with_learnt(start, "llm.http", _table("body.a", "status"))
    assert once.startswith(start) and tomllib.loads(once)["learnt"]["llm.http"]["ignore"] == [
        "body.a",
        "status",
    ]
    twice = with_learnt(once, "llm.http", _table("body.b", runs=5))
    assert twice.count('[learnt."llm.http"]') == 1 and "--learn 5" in twice
    assert tomllib.loads(twice)["learnt"]["llm.http"]["ignore"] == ["body.b"]
    assert twice.startswith(start)
    assert with_learnt(twice, "llm.http", _table("body.b", runs=5)) == twice  # stable


def test_a_table_in_the_middle_keeps_what_follows() -> None:
    after = USER.partition("\n\n")[2]  # the [captures...] table
    middle = with_learnt("", "llm.http", _table("body.a")) + "\n# theirs\n" + after
    again = with_learnt(middle, "llm.http", _table("body.c"))
    assert again.endswith("\n# theirs\n" + after)
    assert tomllib.loads(again)["learnt"]["llm.http"]["ignore"] == ["body.c"]
    assert tomllib.loads(again)["captures"]["grpc/*.http"]["ignore"] == ["status"]


def test_an_edit_that_would_not_read_back_is_refused(tmp_path: Path) -> None:
    broken = with_learnt('ignore = ["x"\n', "llm.http", _table("body.a"))
    with pytest.raises(ConfigError, match="nothing was written"):
        checked(broken, "llm.http", ["body.a"], tmp_path / "verify.toml")
    fine = with_learnt("", "llm.http", _table("body.a"))
    with pytest.raises(ConfigError, match="would not read back"):
        checked(fine, "llm.http", ["body.b"], tmp_path / "verify.toml")


def test_a_learnt_table_is_this_capture_s_ignores_only(tmp_path: Path) -> None:
    from recorder.verify import find_config

    (tmp_path / "verify.toml").write_text(
        with_learnt(USER, "llm.http", _table("body.a")), encoding="utf-8"
    )
    config = find_config(tmp_path)
    assert config.ignores_for(tmp_path / "llm.http") == ("header:etag", "body.a")
    assert config.ignores_for(tmp_path / "llm.http", learnt=False) == ("header:etag",)
    assert config.ignores_for(tmp_path / "other.http") == ("header:etag",)
