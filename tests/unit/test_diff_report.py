"""Reports: text (plain and coloured), markdown, JSON, HTML, each with the expected rows."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from html.parser import HTMLParser

import pytest
from test_diff_factory import capture, push_create_exchange, send_exchange, session

import recorder.diff as diff
from recorder.capture import Capture
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
    assert document["format"] == "a2a-recorder-diff" and document["version"] == 2
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
            "binding": "JSONRPC",
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
        self.tags: set[str] = set()
        self.links: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.links += [value or "" for name, value in attrs if name in ("href", "src")]
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
    assert "<script" not in page and "url(" not in page and "@import" not in page
    parser = _Cells()
    parser.feed(page)
    assert (parser.cells[parser.cells.index("CreateTaskPushNotificationConfig") - 2 :][:8]) == [
        "A#4",
        "B#5",
        "CreateTaskPushNotificationConfig",
        "HTTP+JSON",
        "changed",
        "status",
        "200",
        "201",
    ]
    # Nothing is fetched: no external resources, and every link stays on the page.
    assert not parser.tags & {"script", "link", "img", "iframe", "object", "embed"}
    assert parser.links and all(link.startswith("#") for link in parser.links)
    # Each row links to its exchanges, which the page shows as the capture holds them.
    assert '<a href="#d0-a4">A#4</a>' in page and '<a href="#d0-b5">B#5</a>' in page
    assert '<section class="exchange" id="d0-a4">' in page
    assert '<section class="exchange" id="d0-b5">' in page
    section = page.split('id="d0-b5">', 1)[1].split("</section>", 1)[0]
    assert "### 5 CreateTaskPushNotificationConfig HTTP+JSON" in section
    assert "HTTP/1.1 201" in section
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


# -- long changes are never cut ------------------------------------------------------------------

LONG = (
    "The agent read the question, looked at the three documents it was given, and wrote "
    "a summary of each before drafting the answer that follows in full below."
)


def _long_change() -> CaptureDiff:
    from dataclasses import replace

    from test_diff_factory import body

    def send(seed: str, text: str) -> object:
        x = send_exchange(1, seed, 8080)
        data = json.loads(x.response.body)  # type: ignore[union-attr]
        data["result"]["task"]["artifacts"][0]["parts"][0]["text"] = text
        return replace(x, response=replace(x.response, body=body(data)))  # type: ignore[arg-type]

    changed = LONG.replace("looked at", "looked at (checking sources)")
    return diff_captures(capture(send("a", LONG * 3)), capture(send("b", LONG + changed + LONG)))


def test_a_long_changed_text_shows_the_change_whole_with_context() -> None:
    result = _long_change()
    text = render_text([result])
    (line,) = [x for x in text.splitlines() if "parts[0].text" in x]
    assert "(checking sources)" in line
    assert line.count("…") == 4 and len(line) < len(LONG) * 2  # context, not the whole text
    assert "looked at (checking sources)" in render_markdown([result])
    page = render_html([result])
    assert "<mark>" in page
    marked = page.split("<mark>")[1].split("</mark>")[0]
    assert "checking sources" in marked or "(checking sources)" in marked
    document = json.loads(render_json([result]))
    (difference,) = [d for e in document["diffs"][0]["exchanges"] for d in e["differences"]]
    changed = LONG.replace("looked at", "looked at (checking sources)")
    assert difference["new"] == LONG + changed + LONG  # JSON holds the values whole


def test_excerpts_keep_the_span_whole_however_long() -> None:
    inserted = "x" * 500
    old, new = diff.excerpts("a" * 300 + "b" * 300, "a" * 300 + inserted + "b" * 300)
    assert new.changed == inserted and old.changed == ""
    assert new.before == '"…' + "a" * 40 and new.after == "b" * 40 + '…"'
    short_old, short_new = diff.excerpts("ab", "axb")
    assert (short_old.text, short_new.text, short_new.changed) == ('"ab"', '"axb"', "x")
    assert diff.excerpts(1, 2)[1].text == "2"


# -- folder diffs end with a files table ---------------------------------------------------------


def test_folder_reports_end_with_a_files_table() -> None:
    same = diff_captures(session("a"), session("b"), a_name="A/one.http", b_name="B/one.http")
    other = diff_captures(
        session("a"), session("c", polls=2), a_name="A/sub/two.http", b_name="B/sub/two.http"
    )
    unpaired = [("A", "three.http"), ("B", "four.http")]
    text = render_text([same, other], unpaired=unpaired)
    tail = text.rstrip().splitlines()
    assert tail[-1] == "Files summary: 1 same, 1 differ, 1 only in A, 1 only in B"
    assert any(x.split()[:2] == ["sub/two.http", "differ"] for x in tail)
    assert any(x.split()[:4] == ["three.http", "only", "in", "A"] for x in tail)
    md = render_markdown([same, other], unpaired=unpaired)
    assert "| same | differ | only in A | only in B |\n|---|---|---|---|\n| 1 | 1 | 1 | 1 |" in md
    files = json.loads(render_json([same, other], unpaired=unpaired))["files"]
    assert files == {"same": 1, "differ": 1, "only_in_A": 1, "only_in_B": 1}
    assert "<h2>Files</h2>" in render_html([same, other], unpaired=unpaired)
    assert "Files" not in render_text([same])  # one pair: no files table


# -- what UTF-8 cannot hold ----------------------------------------------------------------------


def test_lone_surrogates_and_invalid_utf8_never_break_a_report() -> None:
    from dataclasses import replace

    def send(seed: str, text: str, raw: bytes) -> object:
        x = send_exchange(1, seed, 8080)
        data = json.loads(x.response.body)  # type: ignore[union-attr]
        data["result"]["task"]["artifacts"][0]["parts"][0]["text"] = text
        data["result"]["task"]["metadata"] = {"\udfff key": "\ud800"}
        encoded = json.dumps(data).encode()  # ASCII: "\ud800" as JSON escapes, valid JSON text
        request = replace(x.request, body=raw)
        return replace(x, request=request, response=replace(x.response, body=encoded))  # type: ignore[arg-type]

    a = capture(send("a", "left \ud800", b"\xff\xfe not utf-8"))
    b = capture(send("b", "right \udc00", b"\xff\xfd not utf-8 either"))
    result = diff_captures(a, b)
    assert not result.same
    for fmt in FORMATS:
        report = render_report(fmt, [result])
        report.encode("utf-8")  # writable
        assert "\\ud800" in report or "\\\\ud800" in report
    document = json.loads(render_report("json", [result]))
    (pair,) = document["diffs"][0]["exchanges"]
    paths = {d["path"] for d in pair["differences"]}
    assert "request.body" in paths  # the bytes bodies differ, as summaries
    texts = [d for d in pair["differences"] if d["path"].endswith("parts[0].text")]
    assert texts == [
        {"kind": "changed", "path": texts[0]["path"], "old": "left \ud800", "new": "right \udc00"}
    ]


# -- file parts: their content, not their base64 -------------------------------------------------

PNG = bytes(range(256)) * 4


def _sent_parts(parts: list[dict[str, object]], version: str = "1.0") -> Capture:
    from dataclasses import replace

    from test_diff_factory import body

    x = send_exchange(1, "a", 8080, version=version)
    data = json.loads(x.request.body)
    data["params"]["message"]["parts"] = parts
    return capture(replace(x, request=replace(x.request, body=body(data))), seed="a")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_a_file_part_shows_as_text_or_as_size_and_sha256(version: str) -> None:
    def part(data: bytes, media: str) -> dict[str, object]:
        if version == "1.0":
            return {"raw": _b64(data), "mediaType": media}
        return {"kind": "file", "file": {"bytes": _b64(data), "mimeType": media}}

    old = [part(PNG, "image/png"), part(b"hello world\nline two\n", "text/plain")]
    new = [part(PNG[::-1], "image/png"), part(b"hello there\nline two\n", "text/plain")]
    extra = [*new, part(b"\x00\x01binary", "application/octet-stream")]
    result = diff_captures(_sent_parts(old, version), _sent_parts(extra, version))
    digest = hashlib.sha256(PNG).hexdigest()[:12]
    table = render_html([result]).split("<h3>")[0]  # (the exchanges below it: as recorded)
    table = html.unescape(re.sub(r"</?mark[^>]*>", "", table))
    for page in (render_text([result]), render_markdown([result]), table):
        assert _b64(PNG) not in page and _b64(PNG[::-1]) not in page  # no base64 shown
        assert f"<1024 bytes sha256:{digest}>" in page
        assert "there" in page and "hello" in page  # the text file, as text
        assert "<8 bytes sha256:" in page  # in the part added
    text = render_text([result])
    shown = '"hello world\\nline two\\n" → "hello there\\nline two\\n"'
    assert f"parts[1].raw (file content, base64 decoded): {shown}" in text  # v0.3 as v1.0
    assert json.loads(render_json([result]))["diffs"][0]["exchanges"]  # JSON keeps the wire's


def test_a_value_that_is_not_base64_is_shown_as_it_is() -> None:
    assert diff.file_content("not base64!") == "not base64!"
    assert diff.file_content(_b64(b"caf\xc3\xa9")) == "café"
    assert diff.file_content(base64.urlsafe_b64encode(b"\xfb\xff").decode().rstrip("=")).startswith(
        "<2 bytes sha256:"
    )
