"""Verify reports: the diff's report of recorded against live, then verify's own facts (pure).

Each format is the diff's, followed by what only verify knows: requests not sent and why,
notes, timing, stale baseline entries and the verdict.  JUnit has one case, the capture.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from recorder._pages import render_page
from recorder.ci import Case, Failure, Suite, render_junit
from recorder.diff import diff_failures, diff_notes, diff_page, json_text, md_text, report_dict
from recorder.diff import render_markdown as diff_markdown
from recorder.diff import render_text as diff_text
from recorder.verify._result import Latency, NotSent, VerifyResult

REPORT_FORMAT = "a2a-recorder-verify"
REPORT_VERSION = 1


def _ms(us: int) -> str:
    return f"{us / 1000:.1f} ms"


def _factor(x: Latency) -> str:
    return f"×{x.ratio:.2f}" if x.ratio is not None else "×-"


def _timing_line(x: Latency, result: VerifyResult) -> str:
    slow = "  slower than allowed" if x in result.slow else ""
    return (
        f"A#{x.a} ~ B#{x.b}  {x.operation}  {_ms(x.recorded_us)} → {_ms(x.live_us)}  "
        f"{_factor(x)}{slow}"
    )


def _not_sent_line(item: NotSent) -> str:
    return f"#{item.number} {item.operation}: {item.reason}"


def _lists(result: VerifyResult) -> list[tuple[str, list[str]]]:
    """The titled lists every format shows (an empty one is left out)."""
    return [
        ("Not sent", [_not_sent_line(n) for n in result.not_sent]),
        ("Left out (not compared)", [_not_sent_line(n) for n in result.skipped]),
        ("Notes", list(result.notes)),
    ]


def render_text(result: VerifyResult, *, color: bool = False) -> str:
    out = [diff_text([result.diff], color=color).rstrip("\n")]
    for title, lines in _lists(result):
        out += [f"{title}:", *(f"  {line}" for line in lines)] if lines else []
    if result.latencies:
        out += [
            "Timing (recorded → live):",
            *(f"  {_timing_line(x, result)}" for x in result.latencies),
        ]
    if result.stale:
        out += ["Stale baseline entries (no longer found):", *(f"  {e}" for e in result.stale)]
    out.append(f"Verify: {result.summary()}")
    return "\n".join(out) + "\n"


def render_markdown(result: VerifyResult, *, color: bool = False) -> str:
    out = [diff_markdown([result.diff]).rstrip("\n"), ""]
    for title, lines in _lists(result):
        out += [f"### {title}", "", *(f"- {md_text(line)}" for line in lines), ""] if lines else []
    if result.latencies:
        out += [
            "### Timing",
            "",
            "| A | B | operation | recorded | live | factor |",
            "|---|---|---|---|---|---|",
        ]
        out += [
            f"| A#{x.a} | B#{x.b} | {md_text(x.operation)} | {_ms(x.recorded_us)} | "
            f"{_ms(x.live_us)} | {_factor(x)}{' (slow)' if x in result.slow else ''} |"
            for x in result.latencies
        ]
        out.append("")
    if result.stale:
        out += ["### Stale baseline entries", "", *(f"- {md_text(e)}" for e in result.stale), ""]
    out += [f"**Verify:** {md_text(result.summary())}", ""]
    return "\n".join(out)


def report_head(format: str, version: int, capture: str, agent: str) -> dict[str, Any]:
    """What a verify JSON report begins with: `format` and `version` (stable for CI), and what
    was verified against what."""
    return {"format": format, "version": version, "capture": capture, "agent": agent}


def report(result: VerifyResult) -> dict[str, Any]:
    """The JSON-ready report."""
    return {
        **report_head(REPORT_FORMAT, REPORT_VERSION, result.capture, result.agent),
        "drift": result.drift,
        "status": result.status,
        "summary": result.summary(),
        "diff": report_dict(result.diff),
        "not_sent": [_item(n) for n in result.not_sent],
        "skipped": [_item(n) for n in result.skipped],
        "notes": list(result.notes),
        "max_slowdown": result.max_slowdown,
        "timing": [_latency(x, result) for x in result.latencies],
        "new_capture": str(result.new_capture) if result.new_capture else None,
        "baseline": _baseline(result),
    }


def _baseline(result: VerifyResult) -> dict[str, Any] | None:
    if result.baseline is None:
        return None
    return {
        "file": result.baseline.path,
        "accepted": result.baseline.accepted,
        "stale": list(result.baseline.stale),
        "written": result.baseline.written,
    }


def _item(item: NotSent) -> dict[str, Any]:
    return {"number": item.number, "operation": item.operation, "reason": item.reason}


def _latency(x: Latency, result: VerifyResult) -> dict[str, Any]:
    return {
        "a": x.a,
        "b": x.b,
        "operation": x.operation,
        "recorded_us": x.recorded_us,
        "live_us": x.live_us,
        "ratio": x.ratio,
        "slow": x in result.slow,
    }


def render_json(result: VerifyResult, *, color: bool = False) -> str:
    return json_text(report(result))


def render_html(result: VerifyResult, *, color: bool = False) -> str:
    """The diff's page, which `templates/verify.html.j2` extends, with verify's sections."""
    return render_page("verify.html.j2", **diff_page([result.diff]), verify=_html_facts(result))


def _html_facts(result: VerifyResult) -> dict[str, object]:
    return {
        "stale": list(result.stale),
        "lists": _lists(result),
        "timing": [
            (
                f"A#{x.a}",
                f"B#{x.b}",
                x.operation,
                _ms(x.recorded_us),
                _ms(x.live_us),
                _factor(x) + (" (slow)" if x in result.slow else ""),
            )
            for x in result.latencies
        ],
        "summary": result.summary(),
    }


CLASSNAME = "a2a-recorder.verify"


def verify_case(result: VerifyResult) -> Case:
    failures = list(diff_failures(result.diff))
    failures += [Failure(f"not sent: {_not_sent_line(n)}", "not-sent") for n in result.not_sent]
    failures += [
        Failure(f"slower than allowed: {_timing_line(x, result)}", "slow") for x in result.slow
    ]
    failures += [Failure(f"stale baseline entry: {e}", "stale") for e in result.stale]
    notes = [*result.notes, *(f"left out: {_not_sent_line(n)}" for n in result.skipped)]
    output = "".join(f"{line}\n" for line in notes) + diff_notes(result.diff)
    return Case(
        result.capture, CLASSNAME, tuple(failures), output=output + f"Verify: {result.summary()}\n"
    )


def render_junit_report(result: VerifyResult, *, color: bool = False) -> str:
    suite = Suite("verify", (verify_case(result),), (("agent", result.agent),))
    return render_junit([suite], "a2a-recorder verify")


Renderer = Callable[..., str]
FORMATS: Mapping[str, Renderer] = {
    "text": render_text, "markdown": render_markdown, "json": render_json, "html": render_html,
    "junit": render_junit_report,
}  # fmt: skip
