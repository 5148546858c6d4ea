"""JUnit XML in the widely read Ant/Jenkins shape (schema: `tests/data/junit.xsd`), pure.

Characters XML 1.0 cannot hold (controls, a lone surrogate) are written as their Python escape
(`\\x1b`, `\\udcff`), never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

# What XML 1.0 allows: tab, newline, carriage return, and the ranges below (surrogates and
# U+FFFE, U+FFFF are not characters).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class Failure:
    """One finding or difference: `message` is its one line, `text` the details."""

    message: str
    type: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class Case:
    """One test case (one capture): passed when it has no failures."""

    name: str
    classname: str
    failures: tuple[Failure, ...] = ()
    time: float = 0.0
    output: str = ""  # <system-out>: what a reader should see besides the failures


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    cases: tuple[Case, ...]
    properties: tuple[tuple[str, str], ...] = ()
    timestamp: str | None = None  # ISO 8601 without a zone, as the format has it

    @property
    def failures(self) -> int:
        return sum(len(c.failures) for c in self.cases)

    @property
    def time(self) -> float:
        return sum(c.time for c in self.cases)


def xml_text(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold written as its escape."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def render_junit(suites: Sequence[Suite], name: str) -> str:
    """The JUnit XML document for `suites`, under a `<testsuites name=...>` root."""
    root = ET.Element("testsuites", _counts(name, suites))
    for suite in suites:
        root.append(_suite(suite))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _counts(name: str, suites: Sequence[Suite]) -> dict[str, str]:
    return {
        "name": xml_text(name),
        "tests": str(sum(len(s.cases) for s in suites)),
        "failures": str(sum(s.failures for s in suites)),
        "errors": "0",
        "skipped": "0",
        "time": _seconds(sum(s.time for s in suites)),
    }


def _suite(suite: Suite) -> ET.Element:
    element = ET.Element("testsuite", _counts(suite.name, [suite]))
    if suite.timestamp is not None:
        element.set("timestamp", suite.timestamp)
    if suite.properties:
        properties = ET.SubElement(element, "properties")
        for key, value in suite.properties:
            ET.SubElement(properties, "property", name=xml_text(key), value=xml_text(value))
    for case in suite.cases:
        element.append(_case(case))
    return element


def _case(case: Case) -> ET.Element:
    element = ET.Element(
        "testcase",
        name=xml_text(case.name),
        classname=xml_text(case.classname),
        time=_seconds(case.time),
    )
    for failure in case.failures:
        node = ET.SubElement(
            element, "failure", message=xml_text(failure.message), type=xml_text(failure.type)
        )
        node.text = xml_text(failure.text) if failure.text else None
    if case.output:
        ET.SubElement(element, "system-out").text = xml_text(case.output)
    return element


def _seconds(value: float) -> str:
    return f"{value:.3f}"
