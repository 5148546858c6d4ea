"""The lint engine: run the rule table over exchanges, one at a time or a whole capture.

State across exchanges is a `LintContext`, a value moved on by `saw_request` and
`saw_response`.  A push config set inline in a blocking send is on the wire before the
deliveries it causes, which complete first; so each request is learned when it started, each
response when it completed, and an exchange is linted when it completes.  Invariant: linting
never raises on what a capture holds; a check that fails gives a MAY finding saying so.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypedDict, Unpack

from recorder.lint._rules import RULES, Rule
from recorder.lint._view import ExchangeLike, Session, Violation, view_exchange
from recorder.protocol import LATEST_SPEC, Severity, SpecVersion

_EXCHANGE_LINE = re.compile(r"### ([0-9]+) ")  # docs/capture-format.md


@dataclass(frozen=True, slots=True)
class Finding:
    """One violated rule in one exchange; `file` and `line` locate its `###` line."""

    rule: str
    severity: Severity
    citation: str
    summary: str
    message: str
    expected: str
    actual: str
    exchange: int
    operation: str | None = None
    binding: str | None = None
    where: str = ""
    file: str | None = None
    line: int | None = None

    @property
    def location(self) -> str:
        if self.file is None:
            return f"exchange {self.exchange}"
        return f"{self.file}:{self.line}" if self.line else self.file

    @property
    def brief(self) -> str:
        """One line for a console: `MUST error.mapping: ... (expected X, got Y)`."""
        return (
            f"{self.severity.value} {self.rule}: {self.message} "
            f"(expected {self.expected}, got {self.actual})"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "citation": self.citation,
            "file": self.file,
            "line": self.line,
            "exchange": self.exchange,
            "operation": self.operation,
            "binding": self.binding,
            "where": self.where,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
            "summary": self.summary,
        }


class LintSettings(TypedDict, total=False):
    """What a linter is set up with (`LintContext.create` gives the defaults)."""

    spec: SpecVersion | str
    rules: Sequence[Rule]
    keys: Mapping[str, Mapping[str, Any]] | None


@dataclass(frozen=True, slots=True)
class LintContext:
    """What linting one exchange may know: the spec version, the rules, the session so far."""

    spec: SpecVersion = LATEST_SPEC
    rules: tuple[Rule, ...] = RULES
    session: Session = field(default_factory=Session)

    @classmethod
    def create(
        cls,
        spec: SpecVersion | str = LATEST_SPEC,
        rules: Sequence[Rule] = RULES,
        keys: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> LintContext:
        """A fresh context; `keys` are JWKs by `kid` that may verify card signatures."""
        return cls(SpecVersion(spec), tuple(rules), Session(keys=dict(keys or {})))

    def saw_request(self, exchange: ExchangeLike) -> LintContext:
        return replace(self, session=self.session.learn_request(view_exchange(exchange)))

    def saw_response(self, exchange: ExchangeLike) -> LintContext:
        return replace(self, session=self.session.learn_response(view_exchange(exchange)))


def lint_exchange(exchange: ExchangeLike, context: LintContext) -> list[Finding]:
    """The findings of every rule in `context` that applies to `exchange` (none if not A2A)."""
    if not exchange.classification.is_a2a:
        return []
    view = view_exchange(exchange)
    found: list[Finding] = []
    for rule in context.rules:
        if rule.applies(view, context.spec):
            found += _run(rule, view, context, exchange)
    return found


def _run(rule: Rule, view: Any, context: LintContext, exchange: ExchangeLike) -> list[Finding]:
    try:
        violations = list(rule.check(view, context.session, context.spec))
    except Exception as exc:  # a lint must not stop on one odd exchange
        failed = Violation(
            f"the check failed on this exchange ({type(exc).__name__}: {exc})",
            "a check that completes",
            "an error",
            "",
        )
        return [replace(_finding(rule, failed, context.spec, exchange), severity=Severity.MAY)]
    return [_finding(rule, v, context.spec, exchange) for v in violations]


def _finding(
    rule: Rule, violation: Violation, spec: SpecVersion, exchange: ExchangeLike
) -> Finding:
    level = rule.level(spec)
    c = exchange.classification
    return Finding(
        rule=rule.id,
        severity=level.severity if level else Severity.MAY,
        citation=violation.citation or rule.citation(spec),
        summary=rule.summary,
        message=_printable(violation.message),
        expected=_printable(violation.expected),
        actual=_printable(violation.actual),
        exchange=exchange.number,
        operation=c.operation,
        binding=c.binding_name,
        where=_printable(violation.where),
    )


def _printable(text: str) -> str:
    """Text any report can write: a non-UTF-8 byte (a lone surrogate) shown as `\\udcff`."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class TimedExchange(ExchangeLike, Protocol):
    @property
    def started_us(self) -> int: ...
    @property
    def duration_us(self) -> int: ...


class CaptureLike(Protocol):
    @property
    def exchanges(self) -> Sequence[TimedExchange]: ...


def lint_capture(
    capture: CaptureLike,
    *,
    file: str | None = None,
    text: str | None = None,
    **settings: Unpack[LintSettings],
) -> list[Finding]:
    """Lint every exchange of a capture in the order the session ran; findings by exchange
    number, then table order, located as `file:line` given the capture's `file` and `text`."""
    context = LintContext.create(**settings)
    found: list[Finding] = []
    for is_end, exchange in _timeline(capture.exchanges):
        if is_end:
            found += lint_exchange(exchange, context)
            context = context.saw_response(exchange)
        else:
            context = context.saw_request(exchange)
    order = {rule.id: index for index, rule in enumerate(context.rules)}
    found.sort(key=lambda f: (f.exchange, order.get(f.rule, len(order))))
    lines = exchange_lines(text) if text is not None else {}
    return [replace(f, file=file, line=lines.get(f.exchange)) for f in found]


def _timeline(exchanges: Sequence[TimedExchange]) -> list[tuple[int, TimedExchange]]:
    """(0 for a start or 1 for an end, exchange), in the order things happened."""
    points = [(x.started_us, 0, i) for i, x in enumerate(exchanges)]
    points += [(x.started_us + x.duration_us, 1, i) for i, x in enumerate(exchanges)]
    points.sort()
    return [(kind, exchanges[i]) for _, kind, i in points]


def exchange_lines(text: str) -> dict[int, int]:
    found: dict[int, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        match = _EXCHANGE_LINE.match(line)
        if match:
            found.setdefault(int(match.group(1)), number)
    return found


class Linter:
    """A thread-safe live linter for one capture: `feed` it exchanges as they complete (it
    learns the request too if `saw_request` was not called for it)."""

    def __init__(self, **settings: Unpack[LintSettings]) -> None:
        self._context = LintContext.create(**settings)
        self._requests_seen: set[int] = set()
        self._lock = threading.Lock()

    @property
    def context(self) -> LintContext:
        return self._context

    def saw_request(self, exchange: ExchangeLike) -> None:
        with self._lock:
            self._learn_request(exchange)

    def feed(self, exchange: ExchangeLike) -> list[Finding]:
        with self._lock:
            self._learn_request(exchange)
            found = lint_exchange(exchange, self._context)
            self._context = self._context.saw_response(exchange)
            return found

    def _learn_request(self, exchange: ExchangeLike) -> None:
        if exchange.number not in self._requests_seen:
            self._requests_seen.add(exchange.number)
            self._context = self._context.saw_request(exchange)
