"""What replay matching compares of a request with secrets in it (pure).

A capture's requests hold `<redacted:N>` where the recorder found a secret, and a live client
sends its own secret there.  So that such a request still matches, both sides are masked the
same way before they are compared: every placeholder in a recorded value, and every secret a
live client's credentials carry (learnt from each live request's head, with the recorder's
rules) in a live value, read `MASK`, in every encoding `_sweep` knows.  Short secrets (under
`MIN_SWEPT_LENGTH`) are swept by neither side.
"""

from __future__ import annotations

from typing import Any

from recorder.capture import Request
from recorder.redaction._redactor import NO_RULES, Redactor
from recorder.redaction._rules import Rules
from recorder.redaction._sweep import Finder, secret_pattern, sweep_text

MASK = "<redacted>"
MAX_SECRETS = 10_000  # live secrets remembered (the oldest are forgotten first)


class Masker:
    """Masks placeholders and learnt live secrets in request values (see the module doc)."""

    def __init__(self, rules: Rules = NO_RULES) -> None:
        self._redactor = Redactor(rules, max_secrets=MAX_SECRETS)
        self._finder: Finder | None = None
        self._generation = -1

    def learn(self, request: Request) -> None:
        """Learn the secrets a live request's credential headers and parameters carry."""
        self._redactor.learn_head(request.headers, request.target)

    def value(self, node: Any) -> Any:
        """A JSON value with every string's placeholders and known secrets masked."""
        return _masked(node, self._current())

    def _current(self) -> Finder:
        if self._finder is None or self._generation != self._redactor.generation:
            pattern = secret_pattern(self._redactor.sweepable, placeholders=True)
            self._finder = Finder(pattern, _mask, keep_placeholders=False)
            self._generation = self._redactor.generation
        return self._finder


def _mask(_: str) -> str:
    return MASK


def _masked(node: Any, finder: Finder) -> Any:
    if isinstance(node, str):
        return sweep_text(node, finder) if node else node
    if isinstance(node, list):
        return [_masked(item, finder) for item in node]
    if isinstance(node, dict):
        return {key: _masked(value, finder) for key, value in node.items()}
    return node
