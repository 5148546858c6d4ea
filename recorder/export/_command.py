"""`a2a-recorder export FILE --to har|jsonl|otlp`: the thin shell around the pure exports.

Writes to standard output, or to `-o/--output FILE`; `--to otlp` takes a fleet's folder too,
and with `--endpoint URL` POSTs the traces as OTLP/HTTP protobuf instead.  Exit status 0, or 2
when the capture cannot be read, the output cannot be written (nothing is half-written then:
the text is built whole first) or the endpoint does not take the traces.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import click
import httpx

from recorder._errors import InputError
from recorder._shell import Command, write_output
from recorder.capture import Capture, read_capture
from recorder.export._har import capture_to_har
from recorder.export._jsonl import capture_to_jsonl
from recorder.export._otlp import otlp_json, otlp_request
from recorder.export._trace import trace_plan
from recorder.options import Table, command_option, shared


def har_text(capture: Capture) -> str:
    text = json.dumps(capture_to_har(capture), indent=2, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"


def jsonl_text(capture: Capture) -> str:
    text = "".join(line + "\n" for line in capture_to_jsonl(capture))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


EXPORTS: Mapping[str, Callable[[Capture], str]] = {"har": har_text, "jsonl": jsonl_text}
OTLP_PATH = "/v1/traces"  # OTLP/HTTP's path for traces, when the endpoint names none


EXPORT = Table(
    [
        command_option(
            "to", str, None,
            "har: HAR 1.2 (SSE events under _eventSourceMessages, gRPC messages as JSON); jsonl: "
            "one stream event per line; otlp: OTLP/JSON traces, a span per exchange and per "
            "stream event batch (FILE may be a fleet's folder).",
            choices=(*EXPORTS, "otlp"), required=True,
        ),
        shared.output("the export"),
        command_option(
            "endpoint", str, None,
            "With --to otlp: POST the traces to this OTLP/HTTP endpoint (protobuf; "
            f"{OTLP_PATH} when the URL has no path) instead of writing them.",
            metavar="URL",
        ),
    ]
)  # fmt: skip


@click.command("export", cls=Command, table=EXPORT)
@click.argument("file", type=click.Path(path_type=Path))
def export_command(file: Path, to: str, output: Path | None, endpoint: str | None) -> None:
    """Export capture FILE for other tools: HAR 1.2, JSON Lines of its stream events, or
    OpenTelemetry traces (OTLP) of it or of a fleet's folder."""
    if endpoint is not None and to != "otlp":
        raise InputError("--endpoint sends traces: it goes with --to otlp")
    if to != "otlp":
        if file.is_dir():
            raise InputError(f"{file}: a folder is exported --to otlp only")
        write_output(EXPORTS[to](read_capture(file)), output)
        return
    plans = trace_plan(read_session(file))
    request = otlp_request(plans)
    if endpoint is None:
        write_output(json.dumps(otlp_json(request), indent=2) + "\n", output)
        return
    click.echo(f"{send_otlp(request.SerializeToString(), endpoint)}: {len(plans)} spans sent")


def read_session(path: Path) -> list[tuple[str, Capture]]:
    """A capture as `[(name, capture)]`, or each capture of a fleet's folder."""
    if not path.is_dir():
        return [(path.name, read_capture(path))]
    from recorder.replay import fleet_paths  # the fleet's rule for which files are agents

    return [(p.name, read_capture(p)) for p in fleet_paths(path)]


def send_otlp(body: bytes, endpoint: str) -> str:
    """POST an encoded request to an OTLP/HTTP endpoint; the URL it went to."""
    url = httpx.URL(endpoint)
    url = url.copy_with(path=OTLP_PATH) if url.path in ("", "/") else url
    try:
        answer = httpx.post(
            url, content=body, headers={"Content-Type": "application/x-protobuf"}, timeout=30
        )
    except httpx.HTTPError as exc:
        raise InputError(f"--endpoint {url}: {exc}") from exc
    if not answer.is_success:
        raise InputError(f"--endpoint {url}: {answer.status_code} {answer.text[:200]}")
    return str(url)
