"""Reports: text (plain and coloured), markdown, JSON, HTML, each with the expected rows."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from test_diff_factory import capture, push_create_exchange, send_exchange, session

import recorder.diff as diff
from recorder.diff import (
    FORMATS,
    CaptureDiff,
    diff_captures,
    render_html,
    render_json,
    render_markdown,
    render_report,
    render_text,
)


@pytest.fixture
def result() -> CaptureDiff:
    """A v0.3 run against a v1.0 run with one extra poll and a 200 -> 201 create."""
    a = session("old", version="0.3", polls=1)
    b = session("new", version="1.0", polls=2)
    exchanges = list(b.exchanges)
    exchanges[4] = push_create_exchange(5, "new", 8080, status=201)
    return diff_captures(a, capture(*exchanges), a_name="old.http", b_name="new.http")


def test_text_report(result: CaptureDiff) -> None:
    text = render_text([result])
    assert "--- A: old.http" in text and "+++ B: new.http" in text
    assert "A#2 ~ B#2  SendMessage" in text
    assert "  = method renamed: message/send → SendMessage (v0.3 → v1.0)" in text
    assert "A#- ~ B#4  GetTask  inserted" in text
    assert "  ~ status: 200 → 201" in text
    assert text.rstrip().endswith(
        "Summary: 5 exchanges compared, 2 differ, 1 inserted, 0 removed, 8 renames"
    )
    assert "\x1b[" not in text


def test_text_report_is_coloured_only_on_request(result: CaptureDiff) -> None:
    coloured = render_text([result], color=True)
    assert "\x1b[" in coloured
    assert coloured != render_text([result])


def test_json_report_parses_with_every_difference(result: CaptureDiff) -> None:
    document = json.loads(render_json([result], unpaired=[("B", "extra.http")]))
    assert document["format"] == "a2a-recorder-diff" and document["version"] == 1
    assert document["same"] is False
    assert document["unpaired"] == [{"side": "B", "name": "extra.http"}]
    (one,) = document["diffs"]
    assert one["summary"] == {
        "compared": 5,
        "differ": 2,
        "inserted": 1,
        "removed": 0,
        "renames": 8,
        "text": "5 exchanges compared, 2 differ, 1 inserted, 0 removed, 8 renames",
    }
    send = next(e for e in one["exchanges"] if e["operation"] == "SendMessage")
    assert (send["a"], send["b"], send["status"]) == (2, 2, "changed")
    method = next(r for r in send["renames"] if r["rule"] == "method")
    assert method["old"] == "message/send" and method["new"] == "SendMessage"
    assert method["direction"] == "v0.3 → v1.0"
    assert method["raw"] == [
        {
            "kind": "changed",
            "path": "request.body.method",
            "old": "message/send",
            "new": "SendMessage",
        }
    ]
    create = next(
        e for e in one["exchanges"] if e["operation"] == "CreateTaskPushNotificationConfig"
    )
    assert {"kind": "changed", "path": "status", "old": 200, "new": 201} in create["differences"]
    inserted = [e for e in one["exchanges"] if e["status"] == "inserted"]
    assert inserted == [
        {
            "a": None,
            "b": 4,
            "operation": "GetTask",
            "status": "inserted",
            "renames": [],
            "differences": [],
            "raw": [],
        }
    ]


def test_markdown_report_has_rows(result: CaptureDiff) -> None:
    md = render_markdown([result])
    assert "| A | B | operation | what | path | A value | B value |" in md
    assert "| A#4 | B#5 | CreateTaskPushNotificationConfig | changed | status | 200 | 201 |" in md
    assert "|  | B#4 | GetTask | inserted |  |  |  |" in md
    assert (
        "| A#2 | B#2 | SendMessage | rename | "
        "method renamed: message/send → SendMessage (v0.3 → v1.0)" in md
    )
    assert "<details><summary>Raw differences under the renames</summary>" in md
    assert "**Summary:** 5 exchanges compared, 2 differ, 1 inserted, 0 removed, 8 renames" in md


def test_markdown_escapes_pipes() -> None:
    a = capture(send_exchange(1, "a", 8080))
    b_exchange = send_exchange(1, "b", 8080)
    data = json.loads(b_exchange.response.body)  # type: ignore[union-attr]
    data["result"]["task"]["artifacts"][0]["parts"][0]["text"] = "a|b"
    from dataclasses import replace

    from test_diff_factory import body

    b = capture(replace(b_exchange, response=replace(b_exchange.response, body=body(data))))  # type: ignore[arg-type]
    md = render_markdown([diff_captures(a, b)])
    assert '"a\\|b"' in md


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "td":
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells[-1] += data


def test_html_report_is_self_contained_with_rows(result: CaptureDiff) -> None:
    page = render_html([result], unpaired=[("A", "only-a.http")])
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page
    parser = _Cells()
    parser.feed(page)
    assert (parser.cells[parser.cells.index("CreateTaskPushNotificationConfig") - 2 :][:7]) == [
        "A#4",
        "B#5",
        "CreateTaskPushNotificationConfig",
        "changed",
        "status",
        "200",
        "201",
    ]
    assert "only in A: only-a.http" in page.replace("<code>", "").replace("</code>", "")
    assert "&lt;" in page or "<task-" not in page  # placeholders are escaped, never raw tags


def test_every_format_through_the_dispatcher(result: CaptureDiff) -> None:
    for fmt in FORMATS:
        assert "5 exchanges compared" in render_report(fmt, [result])
    with pytest.raises(ValueError, match="expected one of text, markdown, json, html"):
        render_report("yaml", [result])


def test_same_captures_list_no_rows() -> None:
    same = diff_captures(session("a"), session("b"))
    assert "~" not in render_text([same]).split("\n", 2)[2].split("Summary")[0]
    assert "| A | B |" not in render_markdown([same])


def test_exports_are_sorted_and_complete() -> None:
    assert list(diff.__all__) == sorted(diff.__all__, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(diff, name) for name in diff.__all__)
