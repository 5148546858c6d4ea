"""The `a2a-recorder` command line: a thin shell over the package's pure core.

Heavy imports (mitmproxy, a2a-sdk, uvicorn) happen inside the commands that need them, so
`show` and `--help` stay quick.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import click

from recorder import __version__
from recorder.capture import Capture, CaptureParseError, read_capture
from recorder.protocol import Binding
from recorder.show import (
    capture_rows,
    check_operations,
    json_lines,
    render_one,
    render_table,
    select,
)

EXIT_ERROR = 2
EXIT_LOST = 1  # record: something was lost or failed inside the recorder
MAX_PORT = 65535
# What the `demo` extra brings; an ImportError naming one of these means the extra is missing.
DEMO_MODULES = frozenset({"a2a", "starlette", "sse_starlette"})


class _Commands(click.Group):
    """Commands defined here, plus those that live in their own packages, imported on use.

    `convert` brings in mitmproxy and `diff` its reports; `show` should not wait for either.
    """

    PACKAGED = {
        "convert": "recorder.convert:convert_command",
        "diff": "recorder.diff:diff_command",
        "export": "recorder.export:export_command",
        "lint": "recorder.lint:lint_command",
        "report": "recorder.report:report_command",
        "verify": "recorder.verify:verify_command",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.PACKAGED})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.PACKAGED:
            module, _, attribute = self.PACKAGED[cmd_name].partition(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise OneLineUsageError(exc) from None


class OneLineUsageError(click.UsageError):
    """A usage error of any command as one line (`error: ...`, exit 2), not click's usage
    block: what is wrong, and where the help is."""

    def __init__(self, cause: click.UsageError) -> None:
        super().__init__(cause.format_message(), cause.ctx)

    def show(self, file: object = None) -> None:
        where = f" (see '{self.ctx.command_path} -h')" if self.ctx is not None else ""
        click.echo(f"error: {_first_line(self.format_message())}{where}", err=True)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines)


def version_text() -> str:
    """`--version`: ours, mitmproxy's, and where the gRPC descriptors come from."""
    from recorder.protocol import descriptor_source

    try:
        mitmproxy = importlib.metadata.version("mitmproxy")
    except importlib.metadata.PackageNotFoundError:
        mitmproxy = "not installed"
    return (
        f"a2a-recorder {__version__}\nmitmproxy {mitmproxy}\nA2A descriptors: {descriptor_source()}"
    )


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit()


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the versions and exit.",
)
def main() -> None:
    """Record, replay and diff A2A (Agent2Agent protocol) traffic."""


def load_capture(path: Path, only: int | None = None) -> Capture:
    """Read a capture (`only`: exchange number `only` alone) or exit 2 with `file:line: what
    is wrong`."""
    try:
        return read_capture(path, only=only)
    except CaptureParseError as exc:
        click.echo(f"error: {exc}", err=True)
    except OSError as exc:
        click.echo(f"error: {path}: {exc.strerror or exc}", err=True)
    sys.exit(EXIT_ERROR)


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or int(port) > MAX_PORT:
        raise click.BadParameter(f"expected HOST:PORT (port 0-{MAX_PORT}), got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def check_listen(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Option callback: a HOST:PORT to listen on (returned as given)."""
    if value is not None:
        parse_listen(value)
    return value


def check_grpc_upstream(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """Option callback: a gRPC upstream `parse_grpc_upstream` takes (returned as given)."""
    if value is not None:
        from recorder.record import parse_grpc_upstream

        try:
            parse_grpc_upstream(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def check_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Option callback: an http(s) URL with a host and a valid port (returned as given)."""
    if value is not None:
        url_problem(value, raise_as=click.BadParameter)
    return value


def url_problem(text: str, raise_as: type[Exception] = ValueError) -> None:
    """Raise `raise_as` saying what is wrong with `text` as an http(s) URL of an agent."""
    from urllib.parse import urlsplit

    expected = f"expected http://HOST[:PORT] or https://HOST[:PORT], got {text!r}"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise raise_as(f"{expected} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise raise_as(expected)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP all ask for one orderly stop.

    Installed before a server starts and kept until it has stopped, so that a second Ctrl-C
    (or a signal during start-up) can never interrupt the stop half-way: it is only answered
    with `busy`, a word that the stop is under way.

    The handler takes no lock: it runs in the main thread between two bytecodes, possibly
    inside code that holds the very lock it would take (an Event's, a stream's), and would
    then wait for itself for ever.  So it counts, writes with `os.write`, and `wait()` polls.
    """

    POLL = 0.05  # seconds; how soon a stop starts after the signal

    def __init__(self, busy: str = "stopping, please wait") -> None:
        self._busy = f"{busy}\n".encode()
        self.count = 0
        for number in STOP_SIGNALS:
            signal.signal(number, self._handle)

    def _handle(self, number: int, frame: object) -> None:
        self.count += 1
        if self.count == 2:
            os.write(2, self._busy)

    def wait(self) -> None:
        while not self.count:
            time.sleep(self.POLL)

    def finished(self) -> None:
        """Ignore further stop signals: all is written and the process is exiting.  A Python
        handler would be reset to the default during the interpreter's teardown, and a late
        Ctrl-C would then kill the process (exit -2) after a clean stop."""
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("number", type=int, required=False)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON Lines: one compact JSON object per exchange and line "
    "(`jq -s` gathers them into one array).",
)
@click.option(
    "--op",
    "operations",
    multiple=True,
    metavar="NAME",
    help="Only this operation (SendMessage, GetTask, AgentCard, PushDelivery, ... "
    "or a JSON-RPC method such as message/send; any case).  Repeatable.",
)
@click.option(
    "--binding",
    "bindings",
    multiple=True,
    type=click.Choice([b.value for b in Binding], case_sensitive=False),
    help="Only this binding.  Repeatable.",
)
@click.option("--task", metavar="ID", help="Only exchanges of the task whose id starts with ID.")
def show(
    file: Path,
    number: int | None,
    as_json: bool,
    operations: tuple[str, ...],
    bindings: tuple[str, ...],
    task: str | None,
) -> None:
    """Print the exchanges in a capture FILE as a table, or exchange NUMBER whole.

    The table has one row per exchange: number, start time (s), binding, operation, task,
    status (HTTP, or the gRPC status name), state (the task state the answer carried, for a
    stream its last one; or the kind of answer: message, artifactUpdate, N tasks) and the
    A2A error name.  With NUMBER, that exchange's row and then its request and response as
    the capture holds them.
    """
    try:
        check_operations(operations)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--op") from exc
    if number is not None:
        _show_one(number, filtered=bool(operations or bindings or task), file=file)
        return
    capture = load_capture(file)
    rows = select(capture_rows(capture), operations=operations, bindings=bindings, task=task)
    if as_json:
        click.echo(json_lines(rows), nl=False)
    else:
        click.echo(render_table(rows))


def _show_one(number: int, *, filtered: bool, file: Path) -> None:
    if filtered:
        raise click.UsageError(
            "NUMBER picks one exchange; --op, --binding and --task filter "
            "the table: use one or the other"
        )
    try:  # the other exchanges are not even read (a 100 MB body elsewhere costs nothing)
        click.echo(render_one(load_capture(file, only=number), number), nl=False)
        return
    except LookupError:
        pass
    try:  # the whole capture, to say which numbers there are
        render_one(load_capture(file), number)
    except LookupError as exc:
        click.echo(f"error: {file}: {exc.args[0]}", err=True)
        sys.exit(EXIT_ERROR)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def migrate(files: tuple[Path, ...]) -> None:
    """Rewrite capture FILES in the current format, in place (the content is kept exactly)."""
    from dataclasses import replace

    from recorder.capture import FORMAT_VERSION, parse, render, write_capture

    for path in files:
        capture = load_capture(path)
        if capture.format_version == FORMAT_VERSION:
            click.echo(f"{path}: already format {FORMAT_VERSION}")
            continue
        # Checked in memory before the file is replaced: the new text must read back the same.
        current = replace(capture, format_version=FORMAT_VERSION)
        if parse(render(current), str(path)) != current:
            click.echo(f"error: {path}: would not read back the same; left as it was", err=True)
            sys.exit(EXIT_ERROR)
        try:
            write_capture(path, current)  # atomic: a failure leaves the file as it was
        except OSError as exc:
            click.echo(
                f"error: {path}: cannot write: {exc.strerror or exc}; left as it was", err=True
            )
            sys.exit(EXIT_ERROR)
        click.echo(f"{path}: format {capture.format_version} -> {FORMAT_VERSION}")


@main.command()
@click.option(
    "--upstream", metavar="URL", callback=check_url, help="Reverse mode: the agent's base URL."
)
@click.option(
    "--forward",
    is_flag=True,
    help="Forward mode: clients use the recorder as HTTP_PROXY (gRPC clients: grpc.http_proxy).",
)
@click.option(
    "--listen",
    default="127.0.0.1:8480",
    show_default=True,
    metavar="HOST:PORT",
    callback=check_listen,
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Capture file (reverse) or folder (forward).",
)
@click.option(
    "--split",
    type=click.Choice(["upstream", "context"]),
    default=None,
    help="Forward mode: one capture per upstream (default) or per context.",
)
@click.option(
    "--no-card-rewrite",
    is_flag=True,
    help="Serve the agent card as it is (clients may then bypass the recorder).",
)
@click.option("--keep-secrets", is_flag=True, help="Do not redact credentials and tokens.")
@click.option("--all", "record_all", is_flag=True, help="Record non-A2A traffic too.")
@click.option(
    "--webhook-path",
    "webhook_paths",
    multiple=True,
    metavar="PATH",
    help="A path that receives push deliveries (forward mode).",
)
@click.option(
    "--grpc-upstream",
    metavar="HOST:PORT",
    callback=check_grpc_upstream,
    help="Also record gRPC to this agent (tls://HOST:PORT for TLS gRPC).",
)
@click.option(
    "--grpc-listen",
    metavar="HOST:PORT",
    callback=check_listen,
    help="Where to take gRPC (default: a free port).",
)
@click.option(
    "--push-proxy",
    metavar="HOST:PORT",
    callback=check_listen,
    help="Also listen here as a forward proxy for the agent's push deliveries "
    "(start the agent with HTTP_PROXY/HTTPS_PROXY set to it; needed for gRPC).",
)
@click.option(
    "--append",
    is_flag=True,
    help="Add to a capture that already holds exchanges (numbering goes on).",
)
@click.option("--force", is_flag=True, help="Overwrite a capture that already holds exchanges.")
@click.option(
    "--redact-header",
    "redact_headers",
    multiple=True,
    metavar="NAME",
    help="Also redact this header (known credentials and names with token, secret, "
    "password, api-key, key, *-key, x-auth are redacted anyway).",
)
@click.option(
    "--redact-param",
    "redact_params",
    multiple=True,
    metavar="NAME",
    help="Also redact this query parameter.",
)
@click.option(
    "--card",
    metavar="FILE|URL",
    help="An agent card whose security schemes name the API keys to redact, for clients "
    "that never fetch the card through the recorder (the upstream's own card is fetched "
    "at start anyway when it can be).",
)
@click.option(
    "--read-timeout",
    type=float,
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Close a connection whose request head or body is not complete in time.",
)
@click.option(
    "--max-body-size",
    default="100m",
    show_default=True,
    metavar="SIZE",
    help="Largest request or response body (k, m, g suffixes; streams are not "
    "bounded): a larger request gets 413, a larger response 502.",
)
@click.option("--quiet", "-q", is_flag=True, help="No line per recorded exchange.")
@click.option(
    "--lint",
    "lint_spec",
    is_flag=False,
    flag_value="1.0.1",
    default=None,
    metavar="[SPEC]",
    help="Lint each exchange as it is recorded (A2A spec 1.0.1, or 1.0.0) and print "
    "what breaks a rule under its line.",
)
def record(
    upstream: str | None,
    forward: bool,
    listen: str,
    out: Path,
    split: str | None,
    no_card_rewrite: bool,
    keep_secrets: bool,
    record_all: bool,
    webhook_paths: tuple[str, ...],
    grpc_upstream: str | None,
    grpc_listen: str | None,
    push_proxy: str | None,
    append: bool,
    force: bool,
    redact_headers: tuple[str, ...],
    redact_params: tuple[str, ...],
    card: str | None,
    read_timeout: float,
    max_body_size: str,
    quiet: bool,
    lint_spec: str | None,
) -> None:
    """Record A2A traffic between clients and agents into .http captures.

    A capture that already holds exchanges is never overwritten unless --force is given;
    --append adds to it.  Ctrl-C, SIGTERM and SIGHUP stop the recorder; every exchange that
    completed is kept, and those still in flight are written as cut by the shutdown.

    Exit status: 0 when every exchange was recorded (or left out on purpose, as said);
    1 when exchanges were lost (a full disk) or an error happened inside the recorder;
    2 for bad options or when the recorder cannot start.
    """
    from recorder.record import ProxyStartError, RecordingProxy

    if forward == bool(upstream):
        raise click.UsageError("give exactly one of --upstream URL (reverse) and --forward")
    if append and force:
        raise click.UsageError("give at most one of --append and --force")
    if grpc_listen and not grpc_upstream:
        raise click.UsageError("--grpc-listen needs --grpc-upstream")
    signals = StopSignals("stopping: finishing the capture, please wait")
    try:
        proxy = RecordingProxy(
            "forward" if forward else "reverse",
            upstream,
            parse_listen(listen),
            out,
            card_rewrite=not no_card_rewrite,
            keep_secrets=keep_secrets,
            record_all=record_all,
            split=split,
            webhook_paths=webhook_paths,
            grpc_upstream=grpc_upstream,
            grpc_listen=parse_listen(grpc_listen) if grpc_listen else None,
            push_proxy=parse_listen(push_proxy) if push_proxy else None,
            existing="append" if append else "overwrite" if force else "refuse",
            console=None if quiet else lambda line: click.echo(line, err=True),
            redact_headers=redact_headers,
            redact_params=redact_params,
            card=card,
            read_timeout=read_timeout,
            max_body_size=max_body_size,
            lint=lint_spec,
        )
        proxy.start()
    except (ProxyStartError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    how = f"HTTP_PROXY={proxy.url}" if forward else f"point A2A clients at {proxy.url}"
    click.echo(f"recording to {out}: {how} (Ctrl-C to stop)", err=True)
    if proxy.grpc_target:
        click.echo(f"recording gRPC: point gRPC clients at {proxy.grpc_target}", err=True)
    if proxy.push_proxy_url:
        click.echo(
            f"recording push deliveries: start the agent with "
            f"HTTP_PROXY={proxy.push_proxy_url} (and NO_PROXY unset)",
            err=True,
        )
    try:
        signals.wait()
    finally:
        proxy.stop()
        signals.finished()
        _say_written(proxy, out, quiet)
    if not proxy.faults.clean:
        sys.exit(EXIT_LOST)


def _say_written(proxy: Any, out: Path, quiet: bool) -> None:  # a RecordingProxy
    """The captures that exist now, and what was lost (the console said it unless quiet)."""
    written = sorted(path for path in proxy.addons.save.totals.captures if path.is_file())
    for path in written:
        click.echo(f"capture written: {path}", err=True)
    if not written:
        kept = f" ({out} left as it was)" if out.is_file() else ""
        click.echo(f"nothing recorded: no capture written{kept}", err=True)
    faults = proxy.faults
    for line in faults.summary() if quiet else ():
        click.echo(line, err=True)
    if not faults.clean:
        lost, errors = faults.lost_count, faults.error_count
        click.echo(
            f"error: {lost} exchange{'' if lost == 1 else 's'} lost, {errors} "
            f"error{'' if errors == 1 else 's'} inside the recorder (see above)",
            err=True,
        )


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--listen", default="127.0.0.1:8490", show_default=True, metavar="HOST:PORT")
@click.option(
    "--timing",
    default="none",
    show_default=True,
    help="none, recorded, or xN (N times faster than recorded).",
)
@click.option(
    "--on-miss",
    default="error",
    show_default=True,
    metavar="error|forward URL",
    help="Answer an unmatched request with an error, or forward it to URL "
    "(also written forward=URL).",
)
@click.option(
    "--grpc-listen",
    metavar="HOST:PORT",
    help="Where to serve gRPC (default: a free port when the captures hold gRPC).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="At exit, report exchanges never served, requests never matched and answers the "
    "replayer wrote itself (synthesized); exit 1 if there are any.",
)
@click.option(
    "--read-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="A request (head and body) must arrive within this; a slower client gets 408.",
)
@click.option(
    "--max-request-bytes",
    type=click.IntRange(min=1024),
    default=16 * 1024 * 1024,
    show_default=True,
    help="A larger request body gets 413.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    help="Client sessions remembered; the least recently used are forgotten.",
)
@click.option(
    "--journal-bytes",
    type=click.IntRange(min=0),
    default=64 * 1024 * 1024,
    show_default=True,
    help="Bytes the request journal keeps; beyond, the oldest bodies are cut to 1 KiB.",
)
@click.option(
    "--keep-secrets",
    is_flag=True,
    help="Serve the journal and report with credentials as received (redacted by default).",
)
@click.option(
    "--serve-version",
    type=click.Choice(["1.0", "0.3", "both"]),
    help="The A2A versions to speak, translating a capture of the other one (default: as "
    "recorded).  'both' serves a dual card and answers each request in its own version.",
)
def replay(
    files: tuple[str, ...],
    listen: str,
    timing: str,
    on_miss: str,
    grpc_listen: str | None,
    strict: bool,
    read_timeout: float,
    max_request_bytes: int,
    max_sessions: int,
    journal_bytes: int,
    keep_secrets: bool,
    serve_version: str | None,
) -> None:
    """Serve captures as a fake A2A agent, offline."""
    from recorder._gcpause import collector_paused
    from recorder.redaction import Rules
    from recorder.replay import Limits, Replayer, Timing

    try:
        pace = Timing.parse(timing)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--timing") from exc
    paths, forward = _forward_url(on_miss, files)
    with collector_paused():  # this process is the CLI's own: see recorder._gcpause
        captures = [load_capture(Path(path)) for path in paths]
    signals = StopSignals()
    host, port = parse_listen(listen)
    grpc_host, grpc_port = parse_listen(grpc_listen) if grpc_listen else (host, None)
    if grpc_host != host:
        raise click.BadParameter(
            f"gRPC is served on the host of --listen ({host})", param_hint="--grpc-listen"
        )
    limits = Limits(read_timeout=read_timeout, max_body_bytes=max_request_bytes)
    try:
        with collector_paused():
            replayer = Replayer(
                captures,
                host=host,
                port=port,
                timing=pace,
                on_miss=forward,
                grpc_port=grpc_port,
                limits=limits,
                max_sessions=max_sessions,
                journal_bytes=journal_bytes,
                redaction=Rules(keep_secrets=keep_secrets),
                serve_version=serve_version,
            )
        replayer.start()
    except OSError as exc:
        click.echo(f"error: cannot listen on {listen}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_ERROR)
    except RuntimeError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    count = sum(len(c.exchanges) for c in captures)
    click.echo(f"replaying {count} exchanges at {replayer.url} (Ctrl-C to stop)", err=True)
    if replayer.grpc_target:
        click.echo(f"replaying gRPC at {replayer.grpc_target}", err=True)
    try:
        signals.wait()
    finally:
        replayer.stop()
        signals.finished()
    report = replayer.report
    if report.synthesized_count:
        click.echo(
            f"note: {report.synthesized_count} answers were not recorded but written by the "
            "replayer (see 'synthesized' in the report)",
            err=True,
        )
    for value in report.not_carried_values:
        click.echo(f"not carried: {value}", err=True)
    if strict and not report.clean:
        click.echo(json.dumps(report.as_json(), indent=2), err=True)
        sys.exit(1)


def _forward_url(on_miss: str, files: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """The capture files and the URL to forward misses to, if any.

    `--on-miss forward URL` takes two words; click hands the URL over among the FILE arguments
    (a capture's path never starts with http:// or https://), so it is taken back from there.
    """
    if on_miss == "error":
        return files, None
    url = on_miss.removeprefix("forward").lstrip("=: ")
    if not url and files and _is_url(files[0]):
        url, files = files[0], files[1:]
    if not _is_url(url):
        raise click.BadParameter("expected 'error' or 'forward URL'", param_hint="--on-miss")
    try:
        url_problem(url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--on-miss") from None
    if not files:
        raise click.UsageError("no capture FILE given")
    return files, url


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


@main.command()
@click.option(
    "--out",
    default="out/demo",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where captures go.",
)
@click.option(
    "--binding", type=click.Choice(["JSONRPC", "HTTP+JSON"]), default="JSONRPC", show_default=True
)
def demo(out: Path, binding: str) -> None:
    """Record a real session against the bundled demo agent, replay it, and diff the two.

    Needs the `demo` extra (a2a-sdk): pip install 'a2a-recorder[demo]'.
    """
    try:
        from recorder.demo import run_demo
    except ImportError as exc:
        if exc.name is None or exc.name.partition(".")[0] not in DEMO_MODULES:
            raise
        click.echo(
            f"error: the demo needs a2a-sdk ({exc.name} is missing): "
            "pip install 'a2a-recorder[demo]'",
            err=True,
        )
        sys.exit(EXIT_ERROR)

    sys.exit(run_demo(out, binding, echo=click.echo))
