"""`a2a-recorder export`: HAR 1.2 and JSON Lines of stream events, and HAR's round trip.

Every corpus capture is exported to HAR, read back by `convert` (its HAR reader), and must
give the same exchanges, less what HAR cannot hold (`HAR_LOSES`, each with why).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import recorder.export as export
from recorder.capture import Capture, Exchange, read_capture
from recorder.cli import main
from recorder.convert import convert, har_items
from recorder.export import capture_to_har, capture_to_jsonl, stream_events

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "captures").rglob("*.http"))
STREAM = ROOT / "captures" / "a2a-python-1.3.0" / "05-streaming.http"
GRPC_STREAM = ROOT / "captures" / "a2a-python-1.3.0" / "grpc" / "05-streaming.http"

# What a HAR round trip cannot keep, and why.
HAR_LOSES = {
    # HAR has no field for what the recorder did ("card rewritten", "redacted: ...", "push
    # relay: ..."); the export keeps them under `_a2a.notes` for a reader, but `convert` writes
    # only its own notes, about what it did with the HAR (here: nothing, or event times it
    # could not know for an empty event stream).
    "notes",
}


def _comparable(exchange: Exchange) -> Exchange:
    return replace(exchange, **{name: () for name in HAR_LOSES})


def _round_trip(capture: Capture, out: Path) -> Capture:
    document = json.loads(json.dumps(capture_to_har(capture)))  # through its JSON text
    conversion = convert(har_items(document), out, keep_secrets=True, include_all=True)
    assert conversion.problems == () and conversion.capture is not None
    return conversion.capture


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(ROOT / "captures")))
def test_every_corpus_capture_survives_a_har_round_trip(path: Path, tmp_path: Path) -> None:
    capture = read_capture(path)
    back = _round_trip(capture, tmp_path / "back.http")
    assert back.started == capture.started
    assert back.upstreams == tuple(dict.fromkeys(back.upstreams))
    assert [_comparable(x) for x in back.exchanges] == [_comparable(x) for x in capture.exchanges]


def test_the_corpus_holds_what_the_round_trip_must_carry() -> None:
    """So the test above means something: streams, gRPC with trailers, missing responses."""
    exchanges = [x for path in CORPUS for x in read_capture(path).exchanges]
    assert any(x.response and x.response.events for x in exchanges)
    assert any(x.response and x.response.messages and x.response.trailers for x in exchanges)
    assert any(x.request.messages for x in exchanges)
    assert len(CORPUS) > 100


def _entries(path: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = capture_to_har(read_capture(path))["log"]["entries"]
    return entries


def test_har_is_har_1_2_with_sse_events_under_event_source_messages() -> None:
    document = capture_to_har(read_capture(STREAM))
    assert document["log"]["version"] == "1.2"
    assert document["log"]["creator"]["name"] == "a2a-recorder"
    for entry in document["log"]["entries"]:
        assert {"startedDateTime", "time", "request", "response", "cache", "timings"} <= set(entry)
        for key in ("method", "url", "httpVersion", "cookies", "headers", "queryString"):
            assert key in entry["request"]
        for key in ("status", "statusText", "httpVersion", "cookies", "headers", "content"):
            assert key in entry["response"]
    stream = document["log"]["entries"][1]
    assert stream["_a2a"]["operation"] == "SendStreamingMessage"
    events = stream["_eventSourceMessages"]
    assert events and all(e["eventName"] == "message" for e in events)
    assert all("result" in json.loads(e["data"]) for e in events)
    times = [e["time"] for e in events]
    assert times == sorted(times)
    assert stream["response"]["content"]["text"].count("data: ") == len(events)


def test_har_decodes_grpc_messages_to_json() -> None:
    entry = _entries(GRPC_STREAM)[1]
    assert entry["request"]["url"].startswith("http://127.0.0.1:")
    assert entry["request"]["url"].endswith("/lf.a2a.v1.A2AService/SendStreamingMessage")
    (sent,) = json.loads(entry["request"]["postData"]["text"])
    assert sent["message"]["parts"][0]["text"]
    received = json.loads(entry["response"]["content"]["text"])
    assert len(received) == len(entry["response"]["_grpcMessages"]) == 6
    assert entry["response"]["_grpcMessages"][0]["type"] == "lf.a2a.v1.StreamResponse"
    assert {"name": "grpc-status", "value": "0"} in entry["response"]["_trailers"]


def test_jsonl_has_one_stream_event_per_line() -> None:
    capture = read_capture(STREAM)
    lines = capture_to_jsonl(capture)
    events = [e for x in capture.exchanges if x.response for e in x.response.events]
    assert len(lines) == len(events) > 0
    first = json.loads(lines[0])
    assert (first["exchange"], first["operation"], first["binding"]) == (
        2, "SendStreamingMessage", "JSONRPC"
    )  # fmt: skip
    assert first["index"] == 0 and first["event"] == "message"
    assert first["data"]["jsonrpc"] == "2.0"
    assert all("\n" not in line for line in lines)


def test_jsonl_takes_the_messages_of_grpc_streams_only() -> None:
    capture = read_capture(GRPC_STREAM)
    found = list(stream_events(capture))
    assert len(found) == 6 and {e["type"] for e in found} == {"lf.a2a.v1.StreamResponse"}
    assert [e["index"] for e in found] == list(range(6))
    unary = read_capture(ROOT / "captures" / "a2a-python-1.3.0" / "grpc" / "03-blocking-task.http")
    assert capture_to_jsonl(unary) == []


def test_export_command_writes_stdout_or_a_file(tmp_path: Path) -> None:
    runner = CliRunner()
    har = runner.invoke(main, ["export", str(STREAM), "--to", "har"])
    assert har.exit_code == 0 and json.loads(har.stdout)["log"]["version"] == "1.2"
    out = tmp_path / "stream.jsonl"
    jsonl = runner.invoke(main, ["export", str(STREAM), "--to", "jsonl", "-o", str(out)])
    assert jsonl.exit_code == 0 and jsonl.stdout == ""
    assert out.read_text(encoding="utf-8").splitlines() == capture_to_jsonl(read_capture(STREAM))


def test_export_command_errors_exit_2(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.http"
    damaged.write_text("# a2a-recorder capture format 2\n### x\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(main, ["export", str(damaged), "--to", "har"])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {damaged}:")
    missing = runner.invoke(main, ["export", str(tmp_path / "nope.http"), "--to", "jsonl"])
    assert missing.exit_code == 2 and "nope.http" in missing.stderr
    assert runner.invoke(main, ["export", str(STREAM), "--to", "csv"]).exit_code == 2
    unwritable = runner.invoke(main, ["export", str(STREAM), "--to", "har", "-o", str(tmp_path)])
    assert unwritable.exit_code == 2


def test_exports_are_sorted_and_complete() -> None:
    assert list(export.__all__) == sorted(export.__all__, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(export, name) for name in export.__all__)
