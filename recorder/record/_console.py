"""The console addon: what a person watching the recorder sees.

A line per exchange written, like mitmdump's flow log (`exchange_line`, pure); a warning once
per upstream it cannot reach; a line the first time an exchange is left out for a reason; every
incident once per reason (`_ledger`); and a summary at stop.  `a2a_quiet` turns the lines off
(warnings and the summary go to the log; errors and losses are still shown).  With `a2a_lint`
(a spec version) each exchange is linted as it is written (one `recorder.lint.Linter` per
capture) and its findings follow its line, quiet or not; a push delivery that arrives before
the send that configured it inline is not judged.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mitmproxy import ctx

from recorder._background import host_port
from recorder.capture import Exchange, outcome
from recorder.options import parse_spec
from recorder.protocol import CUT_SHORT, answered_state
from recorder.record._ledger import Incident, Kind, Ledger, many
from recorder.record._options import AddonOptionError, addon_options, declare, touched
from recorder.record._save import Save

logger = logging.getLogger(__name__)

OPTIONS = addon_options("quiet", "lint")
SHORT_ID = 8
LEFT_OUT_SHOWN = 5  # reasons the stop summary names; the rest are counted


def exchange_line(exchange: Exchange) -> str:
    """`#12 JSONRPC SendMessage task 3f2a1b0c… COMPLETED 14 ms`."""
    c = exchange.classification
    words = [
        f"#{exchange.number}",
        c.binding_name or "-",
        c.operation or "(not A2A)",
    ]
    answer = answered_state(exchange.response)
    task = c.task_id or (answer.task_id if answer else None)
    if task:
        words.append(f"task {task[:SHORT_ID]}{'…' if len(task) > SHORT_ID else ''}")
    said = (answer.state or ("message" if answer.kind == "message" else None)) if answer else None
    words.append(c.error or said or outcome(exchange))
    words.append(f"{exchange.duration_us // 1000} ms")
    flagged = [n for n in exchange.notes if n.startswith((*CUT_SHORT, "possible secret"))]
    return " ".join(words) + (f" ({'; '.join(flagged)})" if flagged else "")


class Console:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_console"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(
        self, save: Save, ledger: Ledger, echo: Callable[[str], None] | None = None
    ) -> None:
        self.save = save
        self.ledger = ledger
        self.quiet = False
        self.lint_spec = ""
        self._linters: dict[Path, Any] = {}  # capture -> recorder.lint.Linter
        self._echo = echo or _stderr
        self._warned: set[str] = set()
        self.listening = False  # a proxy that never listened recorded nothing: no summary
        save.listeners.append(self._exchange_written)
        save.left_out_listeners.append(self._left_out)
        ledger.listeners.append(self._incident)

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if not touched(updated, OPTIONS):
            return
        self.quiet = ctx.options.a2a_quiet
        spec = ctx.options.a2a_lint
        try:
            self.lint_spec = parse_spec(spec) if spec else ""
        except ValueError as exc:
            raise AddonOptionError(f"{{lint}}: {exc}") from None

    def server_connect_error(self, data: Any) -> None:
        address = data.server.address
        where = host_port(*address[:2]) if address else "the upstream"
        if where in self._warned:
            return
        self._warned.add(where)
        self._say(
            f"warning: cannot reach {where}: {data.server.error or 'connection failed'}; "
            "clients get 502 until it is up",
            level=logging.WARNING,
        )

    def error(self, flow: Any) -> None:
        message = flow.error.msg if flow.error else ""
        if "body_size_limit" in message:
            self._say(
                f"warning: {message} ({flow.request.method} {flow.request.path}); "
                "raise it with --max-body-size",
                level=logging.WARNING,
            )

    def done(self) -> None:
        if not self.listening:  # the start failed, and says why itself
            return
        t = self.save.totals
        files = ", ".join(str(path) for path in sorted(t.captures))
        self._say(
            f"recorded {many(t.exchanges, 'exchange')} ({many(t.errors, 'error')}, "
            f"{_size(t.bytes)}, {t.redactions} with redactions)" + (f" to {files}" if files else "")
        )
        if t.left_out:
            self._say(left_out_summary(t.left_out))
        if t.dropped_by_hook:
            self._say(f"before_record left out {t.dropped_by_hook} exchanges")
        for line in self.ledger.summary():
            self._say(line, level=logging.WARNING)

    def warning(self, text: str) -> None:
        """A warning line for the person watching (other addons' too)."""
        self._say(f"warning: {text}", level=logging.WARNING)

    def _left_out(self, why: str, count: int) -> None:
        if count == 1:
            self._say(f"left out (not A2A; --all records it): {why}")

    def _incident(self, incident: Incident) -> None:
        """The first of each reason (the log has them all); `a2a_quiet` silences warnings."""
        if self.quiet and incident.kind is Kind.WARNING:
            return
        self._echo(f"{INCIDENT_PREFIX[incident.kind]}{incident.reason}")
        if incident.detail:
            self._echo(_indented(incident.detail))

    def _exchange_written(self, capture: Path, exchange: Exchange, size: int) -> None:
        findings = self._lint(capture, exchange)
        if not self.quiet or findings:  # several captures: the line names its own
            named = f"{capture.name} " if self.save.split != "none" else ""
            self._echo(named + exchange_line(exchange))
        for finding in findings:
            self._echo(f"  ! {finding}")

    def _lint(self, capture: Path, exchange: Exchange) -> list[str]:
        if not self.lint_spec:
            return []
        linter = self._linters.get(capture)
        if linter is None:
            from recorder.lint import Linter

            linter = self._linters[capture] = Linter(spec=self.lint_spec)
        return [finding.brief for finding in linter.feed(exchange)]

    def _say(self, text: str, level: int = logging.INFO) -> None:
        if self.quiet:
            logger.log(level, text)
        else:
            self._echo(text)


def left_out_summary(left_out: Counter[str]) -> str:
    """`left out 7 exchanges that are not A2A (--all records them): 5× no A2A route …; …`"""
    total = sum(left_out.values())
    shown = left_out.most_common(LEFT_OUT_SHOWN)
    parts = [f"{count}× {why}" for why, count in shown]
    if len(left_out) > len(shown):
        parts.append(f"{len(left_out) - len(shown)} more reasons")
    noun = "exchange that is" if total == 1 else "exchanges that are"
    return f"left out {total} {noun} not A2A (--all records them): " + "; ".join(parts)


INCIDENT_PREFIX = {
    Kind.ERROR: "error inside the recorder: ",
    Kind.LOST: "lost: ",
    Kind.WARNING: "warning: ",
}


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.rstrip("\n").splitlines())


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    return f"{count / 1024:.1f} KiB" if count < 1024 * 1024 else f"{count / 1024 / 1024:.1f} MiB"
