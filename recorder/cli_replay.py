"""`a2a-recorder replay`: serve captures as a fake agent, one agent's or a fleet's folder, until
Ctrl-C or SIGTERM (`--strict`: exit 1 unless the report is clean).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from recorder._errors import Exit, InputError, StartError
from recorder._shell import Command, cut_short
from recorder.options import FORWARD, REPLAY, parse_url, show_address

STRICT_CLEAN = (
    "every recorded exchange was served, every request matched, no answer was synthesized "
    "and every fault spec was used"
)


@click.command("replay", cls=Command, table=REPLAY)
@click.argument("files", nargs=-1, required=True, type=click.Path())
def replay_command(
    files: tuple[str, ...],
    listen: tuple[str, int],
    grpc_listen: tuple[str, int] | None,
    on_miss: str | None,
    strict: bool,
    forward: bool,
    ports_file: Path | None,
    faults_file: Path | None,
    **options: Any,
) -> None:
    """Serve captures as a fake A2A agent, offline.

    FILES are one agent's captures.  A folder DIR instead is a fleet: every capture in it
    at once, one agent per upstream it was recorded against (`record --forward` writes one
    capture per upstream), each on a port of its own (printed, and written to --ports-file),
    or with --forward all behind one proxy that routes by the URL the client calls.
    """
    if any(Path(f).is_dir() for f in files):
        if grpc_listen or on_miss is not None:
            raise InputError("a fleet (DIR) takes neither --grpc-listen nor --on-miss")
        if options["faults"] or faults_file:  # a #N names one capture's exchange
            raise InputError("a fleet (DIR) takes no --fault/--faults: give capture files")
        _serve_fleet(files, listen, forward, ports_file, strict, options)
        return
    if forward or ports_file:
        raise InputError("--forward and --ports-file serve a fleet: give a folder DIR")
    if faults_file is not None:  # read_faults: a FaultSpecError naming the file
        from recorder.replay import read_faults

        profile = tuple(spec.text for spec in read_faults(faults_file))
        options["faults"] = (*profile, *options["faults"])
    _serve_one(files, listen, grpc_listen, on_miss, strict, options)


def _serve_one(
    files: tuple[str, ...],
    listen: tuple[str, int],
    grpc_listen: tuple[str, int] | None,
    on_miss: str | None,
    strict: bool,
    options: dict[str, Any],
) -> None:
    """`replay FILES`: one agent's captures (`recorder.replay.Replayer`)."""
    from recorder._gcpause import collector_paused
    from recorder._stop import StopSignals
    from recorder.capture import recover_capture
    from recorder.replay import Replayer

    paths, forward_to = _forward_url(on_miss, files)
    with collector_paused():  # this process is the CLI's own: see recorder._gcpause
        read = [recover_capture(Path(path)) for path in paths]
    captures = [capture for capture, _ in read]
    cut = [path for path, (_, where) in zip(paths, read, strict=True) if cut_short(where)]
    host, port = listen
    grpc_host, grpc_port = grpc_listen or (host, None)
    if grpc_host != host:
        raise click.BadParameter(
            f"gRPC is served on the host of --listen ({host})", param_hint="--grpc-listen"
        )
    signals = StopSignals()
    with _starting(listen):
        with collector_paused():
            replayer = Replayer(
                captures, host=host, port=port, grpc_port=grpc_port, on_miss=forward_to, **options
            )
        replayer.start()
    count = sum(len(c.exchanges) for c in captures)
    click.echo(f"replaying {count} exchanges at {replayer.url} (Ctrl-C to stop)", err=True)
    if replayer.grpc_target:
        click.echo(f"replaying gRPC at {replayer.grpc_target}", err=True)
    if options["faults"]:
        click.echo(f"fault profile: {', '.join(options['faults'])}", err=True)
    try:
        signals.wait()
    finally:
        replayer.stop()
        signals.finished()
    report = replayer.report
    for value in report.not_carried_values:
        click.echo(f"not carried: {value}", err=True)
    for spec in report.faults_unused:
        click.echo(f"note: fault {spec!r} never hit a request", err=True)
    if report.synthesized_count:
        click.echo(
            f"note: {report.synthesized_count} answers were not recorded but written by the "
            "replayer (see 'synthesized' in the report)",
            err=True,
        )
    _strict(strict, report.clean and not cut, report.as_json)


def _serve_fleet(
    files: tuple[str, ...],
    listen: tuple[str, int],
    forward: bool,
    ports_file: Path | None,
    strict: bool,
    options: dict[str, Any],
) -> None:
    """`replay DIR`: every capture in DIR, one replayer per agent (`recorder.replay.Fleet`)."""
    from recorder._gcpause import collector_paused
    from recorder._stop import StopSignals
    from recorder.capture import read_capture
    from recorder.replay import Fleet, fleet_paths, ports_file_problem

    if len(files) != 1:
        raise InputError("give one folder DIR (a fleet), or capture FILES (one agent)")
    if ports_file is not None and (problem := ports_file_problem(ports_file)) is not None:
        raise InputError(f"--ports-file {ports_file}: {problem}; give another path")
    signals = StopSignals()
    host, port = listen
    paths = fleet_paths(Path(files[0]))
    if not paths:
        raise InputError(f"{files[0]}: no capture (*.http) in it")
    with collector_paused():  # as for one agent's captures (see recorder._gcpause)
        found = [(path, read_capture(path)) for path in paths]  # (an OSError: no port's)
    with _starting(listen):
        with collector_paused():
            fleet = Fleet(found, forward=forward, host=host, port=port, **options)
        fleet.start()
    click.echo(fleet.table(), err=True)
    for agent in fleet.agents:
        for note in agent.plan.notes:
            click.echo(f"note: {agent.name}: {note}", err=True)
    where = f"HTTP_PROXY={fleet.proxy_url} (gRPC: grpc_proxy)" if forward else "the ports above"
    try:
        if ports_file is not None:
            fleet.write_ports(ports_file)
        click.echo(f"replaying {len(fleet.agents)} agents: {where} (Ctrl-C to stop)", err=True)
        signals.wait()
    finally:
        fleet.stop()
        signals.finished()
    _strict(strict, fleet.clean, fleet.report_json)


def _strict(strict: bool, clean: bool, report: Callable[[], object]) -> None:
    """`--strict` at exit: the report and exit 1, or a line saying the replay was clean."""
    if strict and clean:
        click.echo(f"strict: clean: {STRICT_CLEAN}", err=True)
    elif strict:
        click.echo(json.dumps(report(), indent=2), err=True)
        sys.exit(Exit.FOUND)


@contextlib.contextmanager
def _starting(listen: tuple[str, int]) -> Iterator[None]:
    """Start a replayer or fleet: an unbindable port, or a stop meanwhile, is a StartError."""
    try:
        yield
    except OSError as exc:
        where = show_address(listen)
        raise StartError(f"cannot listen on {where}: {exc.strerror or exc}") from exc
    except RuntimeError as exc:
        raise StartError(str(exc)) from exc


def _forward_url(on_miss: str | None, files: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """The capture files, and the URL to forward misses to (None: answer with an error); click hands
    `--on-miss forward URL`'s URL over among the FILE arguments, so it is taken back from there."""
    if on_miss != FORWARD:
        return files, on_miss
    if not files or not files[0].startswith(("http://", "https://")):
        raise click.BadParameter("expected 'error' or 'forward URL'", param_hint="--on-miss")
    try:
        url = parse_url(files[0])
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--on-miss") from None
    if len(files) == 1:
        raise click.UsageError("no capture FILE given")
    return files[1:], url
