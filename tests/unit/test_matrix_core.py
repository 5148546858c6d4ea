"""The SDK matrix's pure core: findings, their kinds and text, accepting, the table."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recorder.diff import (
    ABSENT,
    CaptureDiff,
    Difference,
    DiffKind,
    ExchangeDiff,
    PairKind,
    build_matrix,
    judge,
    render_matrix_markdown,
)
from recorder.diff._matrix import (
    CONTENT_TYPES,
    ERRORS,
    EXCHANGES,
    FIELDS,
    FRAMING,
    PUSH,
    ROUTES,
    VALUES,
    accepted_entries,
    finding_path,
    findings_of,
    gist,
)


def _diff(*pairs: ExchangeDiff, name: str = "03-blocking-task.http") -> CaptureDiff:
    return CaptureDiff(name, name, tuple(pairs))


def _changed(operation: str, *differences: Difference) -> ExchangeDiff:
    return ExchangeDiff(PairKind.CHANGED, operation, 2, 3, differences)


def test_a_finding_reads_the_same_in_every_binding_and_scenario() -> None:
    jsonrpc = Difference(DiffKind.ADDED, "body.result.task.history[0].taskId", ABSENT, "<task-1>")
    grpc = Difference(DiffKind.ADDED, "messages[0].task.history[3].taskId", ABSENT, "<task-2>")
    rest = Difference(DiffKind.ADDED, "body.task.history[1].taskId", ABSENT, "<task-7>")
    texts = {
        f.text
        for d in (jsonrpc, grpc, rest)
        for f in findings_of(_diff(_changed("SendMessage", d)))
    }
    assert texts == {'body.task.history[*].taskId: added "<task>"'}


_SEGMENT = st.sampled_from(["body", "result", "messages", "events", "data", "task", "history"])


@given(st.lists(st.tuples(_SEGMENT, st.integers(0, 9), st.integers(0, 9), st.booleans())))
def test_paths_that_differ_only_in_their_indexes_are_one_finding(
    parts: list[tuple[str, int, int, bool]],
) -> None:
    def path(side: int) -> str:
        return ".".join(
            f"{name}[{pair[side]}]" if indexed else name for name, *pair, indexed in parts
        )

    for streaming in (False, True):
        a, b = finding_path(path(0), streaming), finding_path(path(1), streaming)
        assert a == b
        assert all(ch not in a.replace("[*]", "") for ch in "[]")


def test_values_are_shown_whole_when_short_and_by_shape_when_long() -> None:
    assert gist("no-cache") == '"no-cache"'
    assert gist({"a": 1}) == '{"a":1}'
    assert (
        gist({f"key{i}": "x" * 20 for i in range(8)}) == "{key0, key1, key2, key3, key4, key5, …}"
    )
    assert gist(list(range(40))) == "[40 items]"
    assert gist("x" * 100) == '"<text>"'
    assert gist("\n\x0ccfg-fd835870\x1a") == '"<bytes>"'  # a message kept undecoded
    assert gist("id 54d469fe-4443-4243-b26a-b85f88b414a6") == '"id <uuid>"'


def test_each_difference_lands_in_the_first_kind_that_applies() -> None:
    pairs = [
        _changed("PushDelivery", Difference(DiffKind.REMOVED, "request.header:accept", "*/*")),
        _changed("GetTask", Difference(DiffKind.CHANGED, "request.target", "/a", "/b")),
        _changed("GetTask", Difference(DiffKind.CHANGED, "header:content-type", "a", "b")),
        _changed("CancelTask", Difference(DiffKind.CHANGED, "status", 400, 409)),
        _changed(
            "SendStreamingMessage", Difference(DiffKind.FRAMING, "framing.newline", "CRLF", "LF")
        ),
        _changed("SendStreamingMessage", Difference(DiffKind.CHANGED, "events[0].id", None, "1")),
        _changed("GetTask", Difference(DiffKind.ADDED, "body.status.timestamp", ABSENT, "t")),
        _changed("GetTask", Difference(DiffKind.CHANGED, "body.status.state", "A", "B")),
        ExchangeDiff(PairKind.INSERTED, "GetTask", None, 4),
    ]
    kinds = [f.kind for f in findings_of(_diff(*pairs))]
    assert kinds == [
        EXCHANGES,
        ROUTES,
        CONTENT_TYPES,
        ERRORS,
        FRAMING,
        FRAMING,
        PUSH,
        FIELDS,
        VALUES,
    ]


def test_notes_are_no_findings() -> None:
    note = Difference(DiffKind.POLLS, "polls", 7, 6)
    empty = Difference(DiffKind.EMPTY_DEFAULT, "empty-defaults", {"a": 1}, {})
    assert findings_of(_diff(_changed("GetTask", note, empty))) == ()


def _matrix(*differences: Difference, sdk: str = "go") -> object:
    diffs = [_diff(_changed("SendMessage", *differences), name=s) for s in ("a.http", "b.http")]
    return build_matrix("python", {sdk: diffs}, {sdk: [("B", "c.http")]})


def test_accepting_needs_a_reason_and_fails_on_new_and_stale_entries() -> None:
    d = Difference(DiffKind.CHANGED, "header:content-type", "a", "b")
    matrix = _matrix(d)
    written = accepted_entries(matrix, [])  # type: ignore[arg-type]
    assert {e["finding"] for e in written} == {
        'header:content-type: "a" → "b"',
        "no capture in the reference",
    }
    assert all(e["reason"] == "" for e in written)
    unreasoned = judge(matrix, written)  # type: ignore[arg-type]
    assert not unreasoned.new and not unreasoned.stale and len(unreasoned.unreasoned) == 2
    reasoned = [{**e, "reason": "known"} for e in written]
    assert judge(matrix, reasoned).clean  # type: ignore[arg-type]
    other = _matrix(Difference(DiffKind.CHANGED, "header:content-type", "a", "c"))
    verdict = judge(other, reasoned)  # type: ignore[arg-type]
    assert [f.text for _, _, f in verdict.new] == ['header:content-type: "a" → "c"'] * 2
    assert [e["finding"] for e in verdict.stale] == ['header:content-type: "a" → "b"']


def test_an_entry_can_name_its_scenarios() -> None:
    d = Difference(DiffKind.CHANGED, "header:content-type", "a", "b")
    matrix = _matrix(d)
    entries = [
        {"sdk": "go", "kind": CONTENT_TYPES, "finding": 'header:content-type: "a" → "b"',
         "scenarios": ["a.http"], "reason": "only there"},
        {"sdk": "go", "kind": EXCHANGES, "finding": "no capture in the reference", "reason": "r"},
    ]  # fmt: skip
    verdict = judge(matrix, entries)  # type: ignore[arg-type]
    assert [(s, f.text) for _, s, f in verdict.new] == [
        ("b.http", 'header:content-type: "a" → "b"')
    ]


def test_the_table_shows_common_findings_once_and_marks_new_ones() -> None:
    d = Difference(DiffKind.CHANGED, "header:content-type", "a", "b")
    matrix = _matrix(d)
    table = render_matrix_markdown(matrix, judge(matrix, []))  # type: ignore[arg-type]
    lines = table.splitlines()
    assert lines[0] == "Reference: `python`."
    assert lines[2] == "| scenario | go |"
    assert lines[4].startswith("| *every scenario* | **content types**: ")
    assert '`` header:content-type: "a" → "b" `` (SendMessage) **(new)**' in lines[4]
    assert lines[5:] == [
        "| `a.http` | same |",
        "| `b.http` | same |",
        "| `c.http` | **exchanges**: `` no capture in the reference `` **(new)** |",
    ]
