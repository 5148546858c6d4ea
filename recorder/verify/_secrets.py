"""Credentials for the live agent, in place of the capture's redaction placeholders (pure).

Verify never sends a `<redacted:N>` placeholder: each redacted header or query parameter needs
a value, from `--header`/`--param` (which win) or `A2A_VERIFY_HEADER_<NAME>`/`..._PARAM_<NAME>`
(NAME upper-cased, other characters `_`), which replaces its recorded value in every request.
A body placeholder that stands in a supplied header or parameter is that value
(`Credentials.reading`); any other cannot be filled.  Push-config tokens are the client's own:
verify makes fresh ones (`_live`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, unquote, urlencode

from recorder._errors import InputError
from recorder.capture import Request
from recorder.script import Provenance, Step

PLACEHOLDER = re.compile(r"<redacted:\d+>")
ENV_PREFIX = "A2A_VERIFY_"
_NOT_NAME = re.compile(r"[^A-Za-z0-9]")


@dataclass(frozen=True)
class Credentials:
    """Values for redacted headers and query parameters."""

    headers: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # lower -> (name, value)
    params: Mapping[str, str] = field(default_factory=dict)
    environ: Mapping[str, str] = field(default_factory=dict)
    placeholders: Mapping[str, str] = field(default_factory=dict)  # `<redacted:1>` -> value

    @classmethod
    def of(
        cls,
        headers: Sequence[str] = (),
        params: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
    ) -> Credentials:
        """From `Name: value` and `name=value` texts; InputError names a malformed one."""
        found: dict[str, tuple[str, str]] = {}
        for text in headers:
            name, colon, value = text.partition(":")
            if not colon or not name.strip() or _NOT_NAME.sub("", name.strip()) == "":
                raise InputError(f"--header {text!r}: expected 'Name: value'")
            found[name.strip().lower()] = (name.strip(), value.strip())
        values: dict[str, str] = {}
        for text in params:
            name, equals, value = text.partition("=")
            if not equals or not name:
                raise InputError(f"--param {text!r}: expected 'name=value'")
            values[name] = value
        return cls(found, values, dict(environ or {}))

    @staticmethod
    def environment_name(kind: str, name: str) -> str:
        """`A2A_VERIFY_HEADER_AUTHORIZATION` for ("header", "Authorization")."""
        return f"{ENV_PREFIX}{kind.upper()}_{_NOT_NAME.sub('_', name).upper()}"

    def header(self, name: str) -> str | None:
        given = self.headers.get(name.lower())
        if given is not None:
            return given[1]
        return self.environ.get(self.environment_name("header", name))

    def param(self, name: str) -> str | None:
        given = self.params.get(name)
        return (
            given if given is not None else self.environ.get(self.environment_name("param", name))
        )

    def reading(self, requests: Iterable[Request]) -> Credentials:
        """These credentials, with each placeholder they fill read off its supplied value."""
        found = dict(self.placeholders)
        for request in requests:
            for name, value in request.headers:
                supplied = self.header(name)
                if supplied is not None and PLACEHOLDER.search(value):
                    found.update(_read_off(value, supplied))
            for name, value in parse_qsl(request.target.partition("?")[2], keep_blank_values=True):
                supplied = self.param(name)
                if supplied is not None and PLACEHOLDER.search(value):
                    found.update(_read_off(value, supplied))
        return replace(self, placeholders=found)

    def fill_headers(self, headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        return tuple(
            (k, supplied if (supplied := self.header(k)) is not None else v) for k, v in headers
        )

    def fill_query(self, target: str) -> str:
        path, sep, query = target.partition("?")
        if not query:
            return target
        pairs = parse_qsl(query, keep_blank_values=True)
        if not any(self.param(name) is not None for name, _ in pairs):
            return target
        filled = [(k, supplied if (supplied := self.param(k)) is not None else v) for k, v in pairs]
        return path + sep + urlencode(filled)


def missing_credentials(steps: Sequence[Step], credentials: Credentials) -> list[str]:
    """Every placeholder the steps' requests would send that nothing fills, one line each."""
    found: dict[str, str] = {}
    credentials = credentials.reading(step.exchange.request for step in steps)
    for step in steps:
        for line in _unfilled(step, credentials):
            found.setdefault(line.partition(":")[2], f"#{step.number}{line}")
    return list(found.values())


def _unfilled(step: Step, credentials: Credentials) -> Iterable[str]:
    request = step.exchange.request
    for name, value in request.headers:
        if PLACEHOLDER.search(value) and credentials.header(name) is None:
            yield (
                f": header {name} is redacted in the capture; supply it with "
                f"--header '{name}: VALUE' or {credentials.environment_name('header', name)}"
            )
    for name, value in parse_qsl(request.target.partition("?")[2], keep_blank_values=True):
        if PLACEHOLDER.search(value) and credentials.param(name) is None:
            yield (
                f": query parameter {name} is redacted in the capture; supply it with "
                f"--param {name}=VALUE or {credentials.environment_name('param', name)}"
            )
    fresh = {r.slot.value for r in step.slots if r.provenance is Provenance.FRESH}
    fresh |= set(credentials.placeholders)
    texts = [request.body.decode("utf-8", "replace"), *(m.json or "" for m in request.messages)]
    for text in texts:
        for placeholder in PLACEHOLDER.findall(unquote(text)):
            if placeholder not in fresh:
                yield (
                    f": the request body holds {placeholder} where the capture redacted a "
                    "secret that is not the client's own; verify cannot know what it was"
                )


def _read_off(template: str, supplied: str) -> dict[str, str]:
    """Each placeholder of `template` as `supplied` fills it; {} when their shapes differ."""
    names = PLACEHOLDER.findall(template)
    pattern = "(.+?)".join(re.escape(text) for text in PLACEHOLDER.split(template))
    matched = re.fullmatch(pattern, supplied, re.DOTALL)
    return dict(zip(names, matched.groups(), strict=True)) if matched else {}
