"""An exchange the format refuses is still written, marked, under its own number."""

from __future__ import annotations

import pytest

from recorder.capture import (
    Capture,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    parse,
    render_exchange,
)
from recorder.protocol import Classification
from recorder.record._stand_in import stand_in

REFUSED = Exchange(
    7,
    Classification(operation="Two words"),
    Request(
        "G T",
        "/x",
        (("Bad Name", "v"), ("Good", "w")),
        http_version="HTTP 9",
        messages=(GrpcMessage(0, json="{}", type_name="not one word"),),
    ),
    Response(42, "odd", (("Also Bad", "x"),), events=(), newline="\n\n"),
    notes=("card rewritten",),
)


def test_a_refused_exchange_renders_once_stood_in() -> None:
    with pytest.raises(ValueError):
        render_exchange(REFUSED)
    marked = stand_in(REFUSED, "header name 'Bad Name' is not a token")
    text = "# a2a-recorder capture format 2\n# recorder: x\n# started: s\n\n"
    parsed = parse(text + render_exchange(marked))
    (exchange,) = parsed.exchanges
    assert exchange.number == 7
    assert exchange.notes == (
        "card rewritten",
        "not written as recorded: header name 'Bad Name' is not a token",
    )
    assert exchange.request.headers == (("X-Invalid-Name", "v"), ("Good", "w"))
    assert exchange.request.target == "/x"
    assert isinstance(parsed, Capture)
