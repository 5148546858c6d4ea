"""The `a2a-recorder` command line: the group, and the commands too small for a module.

Every command is loaded when used (`_Commands.LAZY`) and heavy imports happen inside the
commands that need them, so `a2a-recorder --help` loads none of them.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recorder import __version__
from recorder._errors import Exit, InputError, RecorderError
from recorder._shell import HELP_NAMES, Command, cut_short
from recorder.options import (
    NAMES,
    RECORD,
    Table,
    command_option,
    shared,
)

if TYPE_CHECKING:
    from recorder.record import RecordingProxy


class _Commands(click.Group):
    """The commands here, and those in their own modules, each imported when it is used.

    `LAZY` gives each command's module and its summary line, so that the listing of
    `a2a-recorder --help` imports none of them (`test_cli_flags` checks the lines agree with
    the commands' own).
    """

    command_class = Command
    LAZY = {
        "convert": ("recorder.convert:convert_command", "Convert mitmproxy flow files "
                    "(.mitm/.flow) and HAR files (.har) INPUT... into a capture."),
        "diff": ("recorder.diff:diff_command", "Compare two captures A and B (or two folders "
                 "of captures) of the same scenario."),
        "export": ("recorder.export:export_command", "Export capture FILE for other tools: "
                   "HAR 1.2, or JSON Lines of its stream events."),
        "matrix": ("recorder.diff:matrix_command", "Compare the same scenarios across SDK "
                   "FOLDERS (one per SDK and version) as a matrix."),
        "lint": ("recorder.lint:lint_command", "Check captures against the A2A spec: one "
                 "finding per violated rule per exchange."),
        "replay": ("recorder.cli_replay:replay_command", "Serve captures as a fake A2A agent, "
                   "offline."),
        "report": ("recorder.report:report_command", "Draw a capture FILE as a sequence "
                   "diagram and timeline in one HTML page."),
        "verify": ("recorder.verify:verify_command", "Send the client side of CAPTURE to the "
                   "live agent at URL and report what drifted."),
    }  # fmt: skip

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY:
            module, _, attribute = self.LAZY[cmd_name][0].partition(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing, with the lazy commands' summaries from `LAZY` (none is imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:  # each line as click makes it from the command's help
            lazy = self.LAZY.get(name)
            command = click.Command(name, help=lazy[1]) if lazy else super().get_command(ctx, name)
            rows.append((name, command.get_short_help_str(limit) if command is not None else ""))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:  # `a2a-recorder --bogus`: as a command's own
            raise OneLineUsageError(exc) from None

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
        # Click's message on one line: `Choose from:\n\thar,\n\tjsonl` is `Choose from: har,
        # jsonl`, other lines are joined by `; `.
        line = ""
        for part in filter(None, (part.strip() for part in self.format_message().splitlines())):
            line += (" " if line.endswith((":", ",")) else "; " if line else "") + part
        click.echo(f"error: {line}{where}", err=True)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`--version`: ours, mitmproxy's, and where the gRPC descriptors come from."""
    if value and not ctx.resilient_parsing:
        from recorder._demo_needs import installed_version
        from recorder.protocol import descriptor_source

        mitmproxy = installed_version("mitmproxy") or "not installed"
        click.echo(
            f"a2a-recorder {__version__}\nmitmproxy {mitmproxy}\n"
            f"A2A descriptors: {descriptor_source()}"
        )
        ctx.exit()


@click.group(cls=_Commands, context_settings={"help_option_names": HELP_NAMES})
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


def _operation(word: str) -> str:
    from recorder.show import check_operations

    check_operations([word])
    return word


SHOW = Table(
    [
        command_option(
            "as_json", bool, False,
            "Print JSON Lines: one compact JSON object per exchange and line (`jq -s` gathers "
            "them into one array).",
            flag="--json",
        ),
        command_option(
            "operations", NAMES, (),
            "Only this operation (SendMessage, GetTask, AgentCard, PushDelivery, ... or a "
            "JSON-RPC method of any A2A version, such as message/send; any case).  Repeatable.",
            metavar="NAME", flag="--op", parse=_operation,
        ),
        shared.binding("Only this binding (any case).  Repeatable.", repeat=True),
        command_option(
            "task", str, None, "Only exchanges of the task whose id starts with ID.",
            metavar="ID",
        ),
    ]
)  # fmt: skip


@main.command(table=SHOW)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("number", type=int, required=False)
def show(
    file: Path,
    number: int | None,
    as_json: bool,
    operations: tuple[str, ...],
    binding: tuple[str, ...],
    task: str | None,
) -> None:
    """Print the exchanges in a capture FILE as a table, or exchange NUMBER whole.

    The table has one row per exchange: number, start time (s), binding, operation, task,
    status (HTTP, or the gRPC status name), state (the task state the answer carried, for a
    stream its last one; or the kind of answer: message, artifactUpdate, N tasks) and the
    A2A error name.  With NUMBER, that exchange's row and then its request and response as
    the capture holds them.  A capture cut short shows the exchanges before the cut, with a
    warning (and exit status 1 for the table).
    """
    from recorder.capture import recover_capture
    from recorder.show import (
        capture_rows,
        json_lines,
        learnt_fields,
        learnt_lines,
        render_table,
        select,
    )

    if number is not None:
        _show_one(number, filtered=bool(operations or binding or task), file=file)
        return
    capture, cut = recover_capture(file)
    rows = select(capture_rows(capture), operations=operations, bindings=binding, task=task)
    learnt = learnt_fields(capture)
    if as_json:
        for row in rows:
            if row.get("number") in learnt:
                row["learnt"] = learnt[row["number"]]
        click.echo(json_lines(rows), nl=False)
    else:
        click.echo(render_table(rows) + learnt_lines(learnt))
    if cut_short(cut):
        sys.exit(Exit.FOUND)


def _show_one(number: int, *, filtered: bool, file: Path) -> None:
    from recorder.capture import CaptureParseError, read_capture, recover_capture
    from recorder.show import render_one

    if filtered:
        raise click.UsageError(
            "NUMBER picks one exchange; --op, --binding and --task filter "
            "the table: use one or the other"
        )
    try:  # the other exchanges are not even read (a 100 MB body elsewhere costs nothing)
        click.echo(render_one(read_capture(file, only=number), number), nl=False)
        return
    except (LookupError, CaptureParseError):
        pass
    capture, cut = recover_capture(file)  # the whole, to say which numbers there are
    cut_short(cut)
    try:
        click.echo(render_one(capture, number), nl=False)
    except LookupError as exc:
        raise InputError(f"{file}: {exc.args[0]}") from None


MIGRATE = Table(
    [
        command_option(
            "salvage", bool, False,
            "A capture cut short in its last exchange is rewritten with the exchanges before "
            "the cut; the bytes cut off are kept beside it, in FILE.cut.",
        ),
    ]
)  # fmt: skip


@main.command(table=MIGRATE)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def migrate(files: tuple[Path, ...], salvage: bool) -> None:
    """Rewrite capture FILES in the current format, in place (the content is kept exactly)."""
    from dataclasses import replace

    from recorder._files import replace_file
    from recorder.capture import (
        FORMAT_VERSION,
        parse,
        read_capture,
        recover_capture,
        render,
        write_capture,
    )

    for path in files:
        capture, cut = recover_capture(path) if salvage else (read_capture(path), None)
        if capture.format_version == FORMAT_VERSION and cut is None:
            click.echo(f"{path}: already format {FORMAT_VERSION}")
            continue
        # Checked in memory before the file is replaced: the new text must read back the same.
        current = replace(capture, format_version=FORMAT_VERSION)
        if parse(render(current), str(path)) != current:
            raise RecorderError(f"{path}: would not read back the same; left as it was")
        try:
            if cut is not None:
                replace_file(f"{path}.cut", path.read_bytes()[cut.offset :])
            write_capture(path, current)  # atomic: a failure leaves the file as it was
        except OSError as exc:
            raise RecorderError(
                f"{path}: cannot write: {exc.strerror or exc}; left as it was"
            ) from exc
        kept = f"{len(capture.exchanges)} exchanges kept, the cut-off rest in {path}.cut; "
        click.echo(
            f"{path}: {kept if cut else ''}format {capture.format_version} -> {FORMAT_VERSION}"
        )


@main.command(table=RECORD)
def record(
    upstream: str | None,
    forward: bool,
    listen: tuple[str, int],
    out: str,
    quiet: bool,
    **options: Any,
) -> None:
    """Record A2A traffic between clients and agents into .http captures.

    A capture that already holds exchanges is never overwritten unless --force is given;
    --append adds to it.  Ctrl-C, SIGTERM and SIGHUP stop the recorder; every exchange that
    completed is kept, and those still in flight are written as cut by the shutdown.

    Exit status: 0 when every exchange was recorded (or left out on purpose, as said);
    1 when exchanges were lost (a full disk) or an error happened inside the recorder;
    2 for bad options or when the recorder cannot start.
    """
    if forward == bool(upstream):
        raise click.UsageError("give exactly one of --upstream URL (reverse) and --forward")
    if options["grpc_listen"] and not options["grpc_upstream"]:
        raise click.UsageError("--grpc-listen needs --grpc-upstream")
    from recorder._stop import StopSignals
    from recorder.record import RecordingProxy  # mitmproxy: only once the flags are known

    signals = StopSignals("stopping: finishing the capture, please wait")
    proxy = RecordingProxy(
        "forward" if forward else "reverse",
        upstream,
        listen,
        out,
        console=None if quiet else lambda line: click.echo(line, err=True),
        **options,
    )
    proxy.start()
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
        _say_written(proxy, Path(out), quiet)
    if not proxy.ledger.clean:
        sys.exit(Exit.FOUND)


def _say_written(proxy: RecordingProxy, out: Path, quiet: bool) -> None:
    """The captures that exist now, and what was lost (the console said it unless quiet)."""
    written = sorted(path for path in proxy.addons.save.totals.captures if path.is_file())
    for path in written:
        click.echo(f"capture written: {path}", err=True)
    if not written:
        kept = f" ({out} left as it was)" if out.is_file() else ""
        click.echo(f"nothing recorded: no capture written{kept}", err=True)
    ledger = proxy.ledger
    for line in ledger.summary() if quiet else ():
        click.echo(line, err=True)
    if not ledger.clean:
        lost, errors = ledger.lost_count, ledger.error_count
        click.echo(
            f"error: {lost} exchange{'' if lost == 1 else 's'} lost, {errors} "
            f"error{'' if errors == 1 else 's'} inside the recorder (see above)",
            err=True,
        )


DEMO = Table(
    [
        shared.capture_out("The folder the captures and the page go to.", default="out/demo"),
        shared.binding(
            "The binding the session uses (any case).", choices=("JSONRPC", "HTTP+JSON")
        ),
    ]
)  # fmt: skip


@main.command(table=DEMO)
def demo(out: Path, binding: str) -> None:
    """Record a real session against the bundled demo agent, replay it, and diff the two.

    Needs a2a-sdk 1.3 (the `demo` extra, where no other a2a-sdk is installed).
    """
    from recorder._demo_needs import DEMO_MODULES, demo_advice

    try:
        from recorder.demo import run_demo
    except ImportError as exc:
        if exc.name is None or exc.name.partition(".")[0] not in DEMO_MODULES:
            raise
        raise RecorderError(demo_advice(exc.name)) from None
    sys.exit(run_demo(out, binding, echo=click.echo))
