"""`--compare shape:PATH`: sampled text compared by whether it is there, the shape by value.

An LLM-backed agent answers with new text on every run; its task states, part kinds and
artifact names are what a regression changes.  A shape comparison drops a text changed for
another text under PATH, and nothing else: not a state, not an artifact's name, not a part
of another kind, not text that vanished, and nothing outside PATH.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree
from test_diff_factory import capture, send_exchange

from recorder.capture import Exchange, write_capture
from recorder.cli import main
from recorder.diff import (
    ABSENT,
    Difference,
    DiffKind,
    diff_captures,
    parse_compare,
    render_report,
    sampled,
)
from recorder.protocol import SHAPE_FIELDS

ROOT = Path(__file__).resolve().parents[2]
SHAPE = ("shape:$.result.task.artifacts",)


def send(change: Callable[[dict[str, Any]], None], seed: str = "s") -> Exchange:
    """A SendMessage whose answered task is changed by `change` (artifacts[0] named 'answer')."""
    x = send_exchange(1, seed, 8080)
    assert x.response is not None
    document = json.loads(x.response.body)
    artifact = document["result"]["task"]["artifacts"][0]
    artifact["name"] = "answer"
    change(document["result"]["task"])
    body = json.dumps(document).encode()
    return replace(x, response=replace(x.response, body=body))


def text(value: str) -> Callable[[dict[str, Any]], None]:
    def change(task: dict[str, Any]) -> None:
        task["artifacts"][0]["parts"][0]["text"] = value

    return change


def paths(change: Callable[[dict[str, Any]], None], compare: tuple[str, ...] = SHAPE) -> list[str]:
    a = capture(send(text("the weather is fine")), seed="a")
    b = capture(send(change, seed="b"), seed="b")
    result = diff_captures(a, b, compare=compare)
    return [d.path for pair in result.exchanges for d in pair.differences if d.counts]


def test_other_text_is_no_difference_by_shape_but_is_by_value() -> None:
    assert paths(text("sunny, 21 degrees")) == []
    assert paths(text("sunny, 21 degrees"), compare=()) == [
        "body.result.task.artifacts[0].parts[0].text"
    ]


@pytest.mark.parametrize(
    "change, path",
    [
        (lambda t: t["status"].update(state="TASK_STATE_FAILED"), "body.result.task.status.state"),
        (lambda t: t["artifacts"][0].update(name="answer-2"), "body.result.task.artifacts[0].name"),
        (text(""), "body.result.task.artifacts[0].parts[0].text"),
        (lambda t: t["artifacts"][0]["parts"][0].pop("text"),
         "body.result.task.artifacts[0].parts[0].text"),
        (lambda t: t["artifacts"][0]["parts"].__setitem__(0, {"data": {"x": 1}}),
         "body.result.task.artifacts[0].parts[0].text"),
        (lambda t: t["artifacts"][0]["parts"].append({"text": "more"}),
         "body.result.task.artifacts[0].parts[1]"),
        (lambda t: t["history"][0]["parts"][0].update(text="hello"),
         "body.result.task.history[0].parts[0].text"),
    ],
    ids=["state", "artifact-name", "text-emptied", "text-gone", "part-kind", "part-added",
         "outside-path"],
)  # fmt: skip
def test_the_shape_is_still_compared(change: Callable[[dict[str, Any]], None], path: str) -> None:
    assert path in paths(change)


def test_bad_settings_name_the_syntax() -> None:
    for bad in ("value:body", "shape:", "shape", "shape:nokeyword.x"):
        with pytest.raises(ValueError):
            parse_compare([bad])
    (pattern,) = parse_compare(["shape:events[*].data"])
    assert pattern.shape and pattern.text == "shape:events[*].data"


@given(
    old=st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
    new=st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
    leaf=st.sampled_from(sorted(SHAPE_FIELDS | {"text", "description", "[0]"})),
    kind=st.sampled_from(list(DiffKind)),
    inside_json=st.booleans(),
)
def test_only_a_text_for_a_text_outside_the_shape_is_sampled(
    old: Any, new: Any, leaf: str, kind: DiffKind, inside_json: bool
) -> None:
    path = f"parts{leaf}" if leaf.startswith("[") else f"parts[0].{leaf}"
    diff = Difference(kind, f"body.{path}", old, new, path if inside_json else None)
    expected = (
        kind is DiffKind.CHANGED
        and inside_json
        and isinstance(old, str)
        and isinstance(new, str)
        and bool(old and new)
        and leaf not in SHAPE_FIELDS
    )
    assert sampled(diff) is expected
    assert not sampled(replace(diff, old=ABSENT))


def test_diff_command_takes_compare_and_writes_junit(tmp_path: Path) -> None:
    a, b = tmp_path / "a.http", tmp_path / "b.http"
    write_capture(a, capture(send(text("one answer")), seed="a"))
    write_capture(b, capture(send(text("another answer"), seed="b"), seed="b"))
    runner = CliRunner()
    assert runner.invoke(main, ["diff", str(a), str(b)]).exit_code == 1
    assert runner.invoke(main, ["diff", str(a), str(b), "--compare", SHAPE[0]]).exit_code == 0
    bad = runner.invoke(main, ["diff", str(a), str(b), "--compare", "size:body"])
    assert bad.exit_code == 2 and "expected shape:PATH" in bad.stderr
    report = runner.invoke(main, ["diff", str(a), str(b), "--format", "junit"])
    document = etree.fromstring(report.stdout.encode())
    etree.XMLSchema(etree.parse(str(ROOT / "tests/data/junit.xsd"))).assertValid(document)
    (case,) = document.findall("testsuite/testcase")
    assert case.get("name") == f"{a} ~ {b}"
    (failure,) = case.findall("failure")
    assert failure.get("message") == (
        "A#1 ~ B#1 SendMessage: body.result.task.artifacts[0].parts[0].text: "
        '"one answer" → "another answer"'
    )
    assert failure.get("type") == "changed"
    assert "Summary: 1 exchanges compared, 1 differ" in case.findtext("system-out", "")


def test_junit_names_unpaired_files_and_one_sided_exchanges(tmp_path: Path) -> None:
    one = capture(send(text("x")), seed="a")
    two = capture(send(text("x")), send_exchange(2, "b", 8080), seed="b")
    result = diff_captures(one, two, a_name="a", b_name="b")
    document = etree.fromstring(
        render_report("junit", [result], unpaired=[("A", "only.http")]).encode()
    )
    cases = document.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["a ~ b", "only.http"]
    assert [f.get("type") for f in cases[0].findall("failure")] == ["inserted"]
    assert cases[1].find("failure").get("message") == "only in A: only.http"
