"""`a2a-recorder report`: the page shows every exchange, event, message and delivery; it
escapes what peers sent; it fetches nothing; a click opens an exchange.

The page is read back with the stdlib HTML parser (`_report_page`).  The demo capture is
recorded here, through a real recorder, from the bundled a2a-sdk agent; the corpus captures
are real SDK sessions.  The browser test runs when Debian's `chromium` is installed and is
skipped otherwise.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from _report_page import Page, missing_from, read_page
from click.testing import CliRunner

from recorder.capture import (
    Capture,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    SseEvent,
    read_capture,
)
from recorder.cli import main
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY, Binding, Classification
from recorder.record import RecordingProxy
from recorder.report import render_report

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
# One capture per SDK, chosen for what they hold: push deliveries, SSE, v0.3 shapes, gRPC.
PER_SDK = (
    "a2a-python-1.3.0/08-push-configs.http",
    "a2a-python-1.2.3/05-streaming.http",
    "a2a-python-0.3.26/06-subscribe.http",
    "a2a-js-1.3.0/grpc/05-streaming.http",
)
ALL = sorted(CAPTURES.rglob("*.http"))
# Tags a page may hold; anything else (img, iframe, link, object ...) came from a capture.
PAGE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "span",
    "dl",
    "dt",
    "dd",
    "code",
    "p",
    "b",
    "details",
    "summary",
    "ul",
    "li",
    "a",
    "div",
    "label",
    "input",
    "i",
    "main",
    "svg",
    "text",
    "line",
    "polygon",
    "path",
    "circle",
    "rect",
    "aside",
    "section",
    "nav",
    "pre",
    "script",
}


def _page(capture: Capture, **options: object) -> tuple[str, Page]:
    html = render_report(capture, **options)  # type: ignore[arg-type]
    html.encode("utf-8")  # a page is always valid UTF-8
    return html, read_page(html)


def _no_network(html: str, page: Page) -> None:
    for tag, name, value in page.attributes:
        assert name not in ("src", "srcset", "action", "poster", "xlink:href", "data"), (tag, name)
        if name == "href":
            assert value.startswith("#"), (tag, value)
    assert not {"link", "img", "iframe", "object", "embed", "base", "use", "image"} & set(page.tags)
    for css in page.styles:
        assert "url(" not in css and "@import" not in css and "//" not in css.replace("/*", "")
    assert not re.search(r"https?://", "".join(page.scripts))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy and "default-src 'none'" in policy.group(1)
    # The policy allows exactly the page's own script, by its hash.
    (script,) = page.scripts
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy.group(1)


# ---- every part of a capture is on the page ----


@pytest.mark.parametrize("name", PER_SDK)
def test_a_corpus_capture_per_sdk_is_all_there(name: str) -> None:
    capture = read_capture(CAPTURES / name)
    html, page = _page(capture, name=name)
    assert missing_from(page, capture) == []
    pushes = [x.number for x in capture.exchanges if x.classification.operation == PUSH_DELIVERY]
    assert sorted(n for n, row in page.rows.items() if "push" in row["class"].split()) == pushes
    _no_network(html, page)


def test_every_corpus_capture_is_all_there() -> None:
    gaps = {}
    for path in ALL:
        capture = read_capture(path)
        found = missing_from(read_page(render_report(capture)), capture)
        if found:
            gaps[path.relative_to(CAPTURES).as_posix()] = found[:3]
    assert gaps == {}
    assert len(ALL) > 100


def test_the_push_corpus_capture_has_four_deliveries_to_the_webhook() -> None:
    capture = read_capture(CAPTURES / "a2a-python-1.3.0/08-push-configs.http")
    _, page = _page(capture)
    pushes = [n for n, row in page.rows.items() if "push" in row["class"].split()]
    assert len(pushes) == 4
    assert "webhook" in page.text and "127.0.0.1:39603" in page.text  # the webhook lane names it


def test_errors_are_red_and_only_errors() -> None:
    capture = read_capture(CAPTURES / "a2a-js-1.3.0/grpc/11-errors.http")
    _, page = _page(capture)
    red = {n for n, row in page.rows.items() if "tone-error" in row["class"].split()}
    assert red == {x.number for x in capture.exchanges if x.classification.error}
    assert len(red) == 2
    for number in red:
        error = next(x for x in capture.exchanges if x.number == number).classification.error
        assert error in page.row_text[number] and error in page.sections[number]


@pytest.fixture(scope="module")
def demo_capture(tmp_path_factory: pytest.TempPathFactory) -> Capture:
    """The scripted demo session over JSON-RPC, recorded through a real recorder."""
    out = tmp_path_factory.mktemp("report") / "live.http"
    with (
        DemoAgent(event_delay=0.05, enable_grpc=False) as agent,
        WebhookReceiver() as hook,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        asyncio.run(run_session(proxy.url, binding="JSONRPC", webhook=hook))
    return read_capture(out)


def test_the_demo_capture_is_all_there(demo_capture: Capture) -> None:
    html, page = _page(demo_capture, name="live.http")
    assert missing_from(page, demo_capture) == []
    stream = next(
        x for x in demo_capture.exchanges if x.classification.operation == "SendStreamingMessage"
    )
    assert len(stream.response.events) == 6 if stream.response else False
    ticks = [item for item in page.items if item.startswith(f"{stream.number}:response:")]
    assert len(ticks) == 6
    pushes = [n for n, row in page.rows.items() if "push" in row["class"].split()]
    assert len(pushes) == 4
    for state in ("SUBMITTED", "WORKING", "COMPLETED"):
        assert any(state in page.row_text[n] for n in pushes)
    assert "TaskNotFoundError" in page.text and "live.http" in page.text
    _no_network(html, page)


@pytest.fixture(scope="module")
def three_bindings(tmp_path_factory: pytest.TempPathFactory) -> Capture:
    """The scripted session over JSON-RPC, HTTP+JSON and gRPC, recorded into one capture."""
    out = tmp_path_factory.mktemp("report") / "mixed.http"
    with (
        DemoAgent(event_delay=0.05) as agent,
        WebhookReceiver() as hook,
        RecordingProxy(upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target) as proxy,
    ):
        for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
            asyncio.run(run_session(proxy.url, binding=binding, webhook=hook))
    return read_capture(out)


def test_a_capture_of_three_bindings_is_all_there(three_bindings: Capture) -> None:
    html, page = _page(three_bindings)
    assert missing_from(page, three_bindings) == []
    bindings = {x.classification.binding for x in three_bindings.exchanges}
    assert bindings == {Binding.JSONRPC, Binding.HTTP_JSON, Binding.GRPC, Binding.HTTP}
    for binding in bindings:
        rows = [x.number for x in three_bindings.exchanges if x.classification.binding == binding]
        assert all(binding.value in page.row_text[n] for n in rows)
    grpc_stream = next(
        x
        for x in three_bindings.exchanges
        if x.classification.binding == Binding.GRPC
        and x.classification.operation == "SendStreamingMessage"
    )
    assert grpc_stream.response is not None and len(grpc_stream.response.messages) == 6
    assert "6 messages" in page.row_text[grpc_stream.number]
    errors = {n for n, row in page.rows.items() if "tone-error" in row["class"].split()}
    assert len(errors) == 12  # the session's four errors, on each binding
    _no_network(html, page)


def test_rows_follow_start_time_and_link_to_their_detail(demo_capture: Capture) -> None:
    html, page = _page(demo_capture)
    order = [int(n) for n in re.findall(r'<a class="row[^"]*" id="r(\d+)"', html)]
    started = {x.number: x.started_us for x in demo_capture.exchanges}
    assert order == sorted(started, key=lambda n: (started[n], n))
    for number, row in page.rows.items():
        assert row["href"] == f"#x{number}"


def test_three_hundred_exchanges_scroll_at_full_size() -> None:
    one = read_capture(CAPTURES / "a2a-python-1.3.0/08-push-configs.http")
    span = max(x.started_us + x.duration_us for x in one.exchanges)
    many = tuple(
        replace(x, number=round_ * 100 + x.number, started_us=x.started_us + round_ * span)
        for round_ in range(25)
        for x in one.exchanges
    )
    big = replace(one, exchanges=many)
    html, page = _page(big)
    assert len(page.rows) == 300 and missing_from(page, big) == []
    heights = re.findall(r'<svg class="seq" width="\d+" height="(\d+)"', html)
    assert len(heights) == 301 and len(set(heights[1:])) == 1  # the head, then equal rows
    few = re.findall(
        r'<svg class="seq" width="\d+" height="(\d+)"',
        render_report(replace(one, exchanges=one.exchanges[:3])),
    )
    assert few[1:] == heights[1:4]  # 3 rows are as tall as 300 rows


# ---- hostile content ----

HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\"'&"
SURROGATE_JSON = '{"text": "\\ud800 and \\udfff", "html": "<svg onload=alert(3)>"}'


def _hostile_capture() -> Capture:
    request = Request(
        "POST",
        "/a2a?q=" + HOSTILE,
        (("X-Evil", HOSTILE), ("X-Lone", "\ud800"), ("Content-Type", "text/html")),
        body=HOSTILE.encode(),
    )
    events = (
        SseEvent(5, (f"event: {HOSTILE}", f"data: {SURROGATE_JSON}")),
        SseEvent(9, (": <b>ping</b>",)),
    )
    response = Response(
        200, reason=HOSTILE, headers=(("Content-Type", "text/event-stream"),), events=events
    )
    grpc = Request(
        "POST",
        "/lf.a2a.v1.A2AService/SendMessage",
        http_version="HTTP/2",
        messages=(
            GrpcMessage(0, json=json.dumps({"x": "\ud800" + HOSTILE})),
            GrpcMessage(1, raw=b"\x00<script>"),
        ),
    )
    c = Classification(
        binding=Binding.JSONRPC,
        operation=HOSTILE,
        task_id=HOSTILE,
        method=HOSTILE,
        error=HOSTILE,
        reason=HOSTILE,
    )
    return Capture(
        started=HOSTILE,
        recorder_version=HOSTILE,
        upstreams=(f"javascript:{HOSTILE}",),
        redacted=(HOSTILE,),
        extra=((HOSTILE, HOSTILE),),
        exchanges=(
            Exchange(1, c, request, response, notes=(HOSTILE, f"possible secret: {HOSTILE}")),
            Exchange(
                2,
                Classification(binding=Binding.GRPC, operation=PUSH_DELIVERY),
                grpc,
                None,
                error=HOSTILE + "\ud800\x00",
            ),
        ),
    )


def test_hostile_content_is_text_never_markup() -> None:
    html, page = _page(_hostile_capture(), name=HOSTILE, marks={1: [HOSTILE], 7: [HOSTILE]})
    assert set(page.tags) <= PAGE_TAGS
    assert page.tags["script"] == 1 and "alert" not in "".join(page.scripts)
    assert not [name for _, name, _ in page.attributes if name.startswith("on")]
    assert page.text.count(HOSTILE) >= 10  # shown, as text
    assert "<svg onload=alert(3)>" in page.sections[1]
    _no_network(html, page)


def test_lone_surrogates_and_controls_are_shown_escaped() -> None:
    html, page = _page(_hostile_capture())
    assert not re.search("[\ud800-\udfff\x00]", html)
    assert "X-Lone: \\ud800" in page.sections[1]
    assert "\\ud800 and \\udfff" in page.sections[1]  # from JSON escapes in an event
    assert "\\u0000" in page.sections[2]  # the error's NUL
    assert "ADxzY3JpcHQ+" in page.sections[2]  # the undecoded message, as base64


# ---- marks (the hook for lint findings) ----


def test_marks_show_on_the_arrow_in_the_detail_and_in_the_notes() -> None:
    capture = read_capture(CAPTURES / "a2a-python-1.3.0/11-errors.http")
    marks = {2: ["finding one", "finding <two>"], 99: ["no such exchange"]}
    _, page = _page(capture, marks=marks)
    assert "marked" in page.rows[2]["class"].split()
    assert "⚑ 2" in page.row_text[2]
    assert "finding one" in page.sections[2] and "finding <two>" in page.sections[2]
    assert not any("marked" in row["class"].split() for n, row in page.rows.items() if n != 2)
    assert "#99 (not in this capture)" in page.text and "no such exchange" in page.text
    assert "mark" in page.rows[2]["data-search"]


# ---- odd captures ----


def test_an_exchange_without_response_is_a_cut_red_arrow() -> None:
    request = Request("POST", "/a2a", (("Content-Type", "application/json"),), b'{"jsonrpc":"2.0"}')
    c = Classification(binding=Binding.JSONRPC, operation="SendMessage")
    capture = Capture(
        started="2026-01-01T00:00:00.000000Z",
        recorder_version="0",
        exchanges=(Exchange(4, c, request, None, 10, 20, error="upstream reset"),),
    )
    html, page = _page(capture)
    assert "tone-error" in page.rows[4]["class"].split()
    assert 'class="arrow cut"' in html
    assert "no response" in page.row_text[4]
    assert "No response: upstream reset" in page.sections[4]
    assert "no response: upstream reset" in page.text  # in the notes worth a look


def test_an_empty_capture_says_so() -> None:
    _, page = _page(Capture(started="2026-01-01T00:00:00.000000Z", recorder_version="0"))
    assert page.rows == {} and "holds no exchanges" in page.text


# ---- the command ----


def test_report_command_writes_the_page_and_prints_its_path(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    source = CAPTURES / "a2a-js-1.3.0/08-push-configs.http"
    result = CliRunner().invoke(main, ["report", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(out)
    capture = read_capture(source)
    page = read_page(out.read_text("utf-8"))
    assert missing_from(page, capture) == [] and "08-push-configs.http" in page.text


def test_report_command_errors(tmp_path: Path) -> None:
    damaged = tmp_path / "bad.http"
    damaged.write_text("# a2a-recorder capture format 1\n# recorder: 0\n")
    result = CliRunner().invoke(main, ["report", str(damaged), "-o", str(tmp_path / "o.html")])
    assert result.exit_code == 2 and "bad.http:" in result.output
    good = CAPTURES / "a2a-python-1.3.0/01-agent-card.http"
    result = CliRunner().invoke(
        main, ["report", str(good), "-o", str(tmp_path / "no" / "such" / "o.html")]
    )
    assert result.exit_code == 2 and "error:" in result.output
    assert "report" in CliRunner().invoke(main, ["--help"]).output


# ---- in a browser (optional: needs Debian's chromium) ----

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROBE = """(function () {
  var arrow = document.querySelector('#r%(n)d line.arrow');
  arrow.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));
  setTimeout(function () {
    var section = document.getElementById('x%(n)d');
    document.body.setAttribute('data-probe', JSON.stringify({
      hash: location.hash, section: getComputedStyle(section).display,
      panel: getComputedStyle(document.getElementById('detail')).display,
      others: Array.prototype.filter.call(document.querySelectorAll('section.exchange'),
        function (s) { return s !== section && getComputedStyle(s).display !== 'none'; }).length,
      selected: document.getElementById('r%(n)d').classList.contains('selected'),
      pwned: typeof window.alert !== 'function' || window.__pwned === 1,
      images: document.images.length}));
  }, 200);
}());"""


def _click_in_chromium(html: str, number: int, tmp_path: Path) -> dict[str, object]:
    """Click exchange `number`'s arrow in headless Chromium; what the page then shows."""
    probe = PROBE % {"n": number}
    digest = base64.b64encode(hashlib.sha256(probe.encode()).digest()).decode()
    html = html.replace("script-src '", f"script-src 'sha256-{digest}' '", 1)
    page = tmp_path / "probe.html"
    page.write_text(html.replace("</body>", f"<script>{probe}</script></body>"), "utf-8")
    assert CHROMIUM is not None
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'data-probe="([^"]*)"', result.stdout)
    assert found, result.stderr[-2000:]
    return dict(json.loads(found.group(1).replace("&quot;", '"')))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_click_on_an_arrow_opens_its_exchange(demo_capture: Capture, tmp_path: Path) -> None:
    stream = next(
        x.number
        for x in demo_capture.exchanges
        if x.classification.operation == "SendStreamingMessage"
    )
    seen = _click_in_chromium(render_report(demo_capture), stream, tmp_path)
    assert seen == {
        "hash": f"#x{stream}",
        "section": "block",
        "panel": "block",
        "others": 0,
        "selected": True,
        "pwned": False,
        "images": 0,
    }


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_hostile_content_does_not_run_in_a_browser(tmp_path: Path) -> None:
    html = render_report(_hostile_capture()).replace("alert(", "window.__pwned=1;(")
    seen = _click_in_chromium(html, 1, tmp_path)
    assert seen["pwned"] is False and seen["images"] == 0 and seen["section"] == "block"


# -- the same words as `show`, each name once, no empty lanes ------------------------------------


def _two_tasks() -> Capture:
    """09-list-tasks with its ListTasks answer holding the task twice."""
    capture = read_capture(CAPTURES / "a2a-python-1.3.0/09-list-tasks.http")
    listing = next(x for x in capture.exchanges if x.classification.operation == "ListTasks")
    assert listing.response is not None
    answer = json.loads(listing.response.body)
    answer["result"]["tasks"] *= 2
    response = replace(listing.response, body=json.dumps(answer).encode())
    exchanges = tuple(
        replace(x, response=response) if x is listing else x for x in capture.exchanges
    )
    return replace(capture, exchanges=exchanges)


def test_a_task_list_reads_as_show_reads_it() -> None:
    from recorder.show import capture_rows, render_table

    capture = _two_tasks()
    _, page = _page(capture)
    number = next(x.number for x in capture.exchanges if x.classification.operation == "ListTasks")
    assert "2 tasks" in page.row_text[number] and "200" not in page.row_text[number]
    assert "2 tasks" in render_table(capture_rows(capture))


def test_every_outcome_is_the_one_show_gives() -> None:
    """Where `show` says what an answer carried (its state column), the page says the same;
    where it says nothing, the page gives `show`'s status (errors aside: the page names them)."""
    from recorder.show import outcome_cells

    differ = {}
    for path in ALL:
        capture = read_capture(path)
        page = read_page(render_report(capture))
        for x in capture.exchanges:
            if x.response is None or x.classification.error or x.error:
                continue
            status, carried = outcome_cells(x)
            if status != "OK" and not (status.isdigit() and int(status) < 400):
                continue  # a failed status is the outcome, as the page names it
            label = page.row_text[x.number]
            if (carried or status) not in label:
                differ[f"{path.relative_to(CAPTURES)}#{x.number}"] = (carried or status, label)
    assert differ == {}


def test_each_redacted_name_is_listed_once_whatever_its_case() -> None:
    capture = read_capture(CAPTURES / "a2a-python-1.3.0/08-push-configs.http")
    merged = replace(capture, redacted=(*capture.redacted, "authorization", "TOKEN"))
    _, page = _page(merged)
    listed = page.text.split("redacted", 1)[1].split("exchange", 1)[0]
    assert listed.lower().count("authorization") == 1 and listed.count("token") == 1


def test_a_capture_without_deliveries_has_no_webhook_lane() -> None:
    without = read_capture(CAPTURES / "a2a-python-1.3.0/03-blocking-task.http")
    html, _ = _page(without)
    assert ">webhook<" not in html and "lane-webhook" not in html
    with_deliveries = read_capture(CAPTURES / "a2a-python-1.3.0/08-push-configs.http")
    html, _ = _page(with_deliveries)
    assert ">webhook<" in html and "lane-webhook" in html
