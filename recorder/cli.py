"""The `a2a-recorder` command line: a thin shell over the package's pure core.

Heavy imports (mitmproxy, a2a-sdk, uvicorn) happen inside the commands that need them, so
`show` and `--help` stay quick.
"""

from __future__ import annotations

import importlib
import json
import signal
import sys
import threading
from pathlib import Path

import click

from recorder import __version__
from recorder.capture import Capture, CaptureParseError, read_capture
from recorder.show import capture_rows, render_table

EXIT_ERROR = 2


class _Commands(click.Group):
    """Commands defined here, plus those that live in their own packages, imported on use.

    `convert` brings in mitmproxy and `diff` its reports; `show` should not wait for either.
    """

    PACKAGED = {"convert": "recorder.convert:convert_command", "diff": "recorder.diff:diff_command"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.PACKAGED})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.PACKAGED:
            module, _, attribute = self.PACKAGED[cmd_name].partition(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="a2a-recorder")
def main() -> None:
    """Record, replay and diff A2A (Agent2Agent protocol) traffic."""


def load_capture(path: Path) -> Capture:
    """Read a capture or exit 2 with `file:line: what is wrong`."""
    try:
        return read_capture(path)
    except CaptureParseError as exc:
        click.echo(f"error: {exc}", err=True)
    except OSError as exc:
        click.echo(f"error: {path}: {exc.strerror or exc}", err=True)
    sys.exit(EXIT_ERROR)


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()):
        raise click.BadParameter(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def wait_for_signal() -> None:
    """Block until Ctrl-C or SIGTERM."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per exchange.")
def show(file: Path, as_json: bool) -> None:
    """Print a readable table of the exchanges in a capture FILE."""
    rows = capture_rows(load_capture(file))
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        click.echo(render_table(rows))


@main.command()
@click.option("--upstream", metavar="URL", help="Reverse mode: the agent's base URL.")
@click.option("--forward", is_flag=True,
              help="Forward mode: clients use the recorder as HTTP_PROXY "
                   "(gRPC clients: grpc.http_proxy).")
@click.option("--listen", default="127.0.0.1:8480", show_default=True, metavar="HOST:PORT")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Capture file (reverse) or folder (forward).")
@click.option("--split", type=click.Choice(["upstream", "context"]), default=None,
              help="Forward mode: one capture per upstream (default) or per context.")
@click.option("--no-card-rewrite", is_flag=True,
              help="Serve the agent card as it is (clients may then bypass the recorder).")
@click.option("--keep-secrets", is_flag=True, help="Do not redact credentials and tokens.")
@click.option("--all", "record_all", is_flag=True, help="Record non-A2A traffic too.")
@click.option("--webhook-path", "webhook_paths", multiple=True, metavar="PATH",
              help="A path that receives push deliveries (forward mode).")
@click.option("--grpc-upstream", metavar="HOST:PORT",
              help="Also record gRPC to this agent (tls://HOST:PORT for TLS gRPC).")
@click.option("--grpc-listen", metavar="HOST:PORT",
              help="Where to take gRPC (default: a free port).")
@click.option("--push-proxy", metavar="HOST:PORT",
              help="Also listen here as a forward proxy for the agent's push deliveries "
                   "(start the agent with HTTP_PROXY/HTTPS_PROXY set to it; needed for gRPC).")
def record(upstream: str | None, forward: bool, listen: str, out: Path, split: str | None,
           no_card_rewrite: bool, keep_secrets: bool, record_all: bool,
           webhook_paths: tuple[str, ...], grpc_upstream: str | None,
           grpc_listen: str | None, push_proxy: str | None) -> None:
    """Record A2A traffic between clients and agents into .http captures."""
    from recorder.record import ProxyStartError, RecordingProxy

    if forward == bool(upstream):
        raise click.UsageError("give exactly one of --upstream URL (reverse) and --forward")
    proxy = RecordingProxy("forward" if forward else "reverse", upstream, parse_listen(listen),
                           out, card_rewrite=not no_card_rewrite, keep_secrets=keep_secrets,
                           record_all=record_all, split=split, webhook_paths=webhook_paths,
                           grpc_upstream=grpc_upstream,
                           grpc_listen=parse_listen(grpc_listen) if grpc_listen else None,
                           push_proxy=parse_listen(push_proxy) if push_proxy else None)
    try:
        proxy.start()
    except (ProxyStartError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    how = f"HTTP_PROXY={proxy.url}" if forward else f"point A2A clients at {proxy.url}"
    click.echo(f"recording to {out}: {how} (Ctrl-C to stop)", err=True)
    if proxy.grpc_target:
        click.echo(f"recording gRPC: point gRPC clients at {proxy.grpc_target}", err=True)
    if proxy.push_proxy_url:
        click.echo(f"recording push deliveries: start the agent with "
                   f"HTTP_PROXY={proxy.push_proxy_url} (and NO_PROXY unset)", err=True)
    try:
        wait_for_signal()
    finally:
        proxy.stop()
        click.echo(f"capture written: {out}", err=True)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--listen", default="127.0.0.1:8490", show_default=True, metavar="HOST:PORT")
@click.option("--timing", default="none", show_default=True,
              help="none, recorded, or xN (N times faster than recorded).")
@click.option("--on-miss", default="error", show_default=True, metavar="error|forward URL",
              help="Answer an unmatched request with an error, or forward it to URL "
                   "(also written forward=URL).")
@click.option("--grpc-listen", metavar="HOST:PORT",
              help="Where to serve gRPC (default: a free port when the captures hold gRPC).")
@click.option("--strict", is_flag=True,
              help="At exit, report exchanges never served and requests never matched; "
                   "exit 1 if there are any.")
@click.option("--read-timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              metavar="SECONDS", help="A request (head and body) must arrive within this; "
                                      "a slower client gets 408.")
@click.option("--max-request-bytes", type=click.IntRange(min=1024), default=16 * 1024 * 1024,
              show_default=True, help="A larger request body gets 413.")
@click.option("--max-sessions", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Client sessions remembered; the least recently used are forgotten.")
def replay(files: tuple[str, ...], listen: str, timing: str, on_miss: str,
           grpc_listen: str | None, strict: bool, read_timeout: float, max_request_bytes: int,
           max_sessions: int) -> None:
    """Serve captures as a fake A2A agent, offline."""
    from recorder.replay import Limits, Replayer, Timing

    try:
        pace = Timing.parse(timing)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--timing") from exc
    paths, forward = _forward_url(on_miss, files)
    captures = [load_capture(Path(path)) for path in paths]
    host, port = parse_listen(listen)
    grpc_port = parse_listen(grpc_listen)[1] if grpc_listen else None
    limits = Limits(read_timeout=read_timeout, max_body_bytes=max_request_bytes)
    try:
        replayer = Replayer(captures, host=host, port=port, timing=pace, on_miss=forward,
                            grpc_port=grpc_port, limits=limits,
                            max_sessions=max_sessions).start()
    except (OSError, RuntimeError) as exc:
        click.echo(f"error: cannot listen on {listen}: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    count = sum(len(c.exchanges) for c in captures)
    click.echo(f"replaying {count} exchanges at {replayer.url} (Ctrl-C to stop)", err=True)
    if replayer.grpc_target:
        click.echo(f"replaying gRPC at {replayer.grpc_target}", err=True)
    try:
        wait_for_signal()
    finally:
        replayer.stop()
    report = replayer.report
    if report.ties:
        click.echo(f"note: {report.tie_count} requests fitted more than one client session "
                   "equally (see 'ties' in the report)", err=True)
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
    if not files:
        raise click.UsageError("no capture FILE given")
    return files, url


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


@main.command()
@click.option("--out", default="out/demo", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Where captures go.")
@click.option("--binding", type=click.Choice(["JSONRPC", "HTTP+JSON"]), default="JSONRPC",
              show_default=True)
def demo(out: Path, binding: str) -> None:
    """Record a real session against the bundled demo agent, replay it, and diff the two."""
    from recorder.demo._run import run_demo

    sys.exit(run_demo(out, binding, echo=click.echo))
