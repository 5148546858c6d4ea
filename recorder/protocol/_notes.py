"""The notes the recorder writes on an exchange, by their first words: one vocabulary for the
recorder and for lint, the report, `show` and the console.  An exchange cut short did not end
as the agent ended it, so lint does not judge its ending.
"""

from __future__ import annotations

from collections.abc import Iterable

NOTE_STREAM_TRUNCATED = "stream truncated"  # the connection broke before the stream ended
NOTE_CLIENT_CLOSED = "client closed"  # the client closed its connection before the answer ended
NOTE_STREAM_RESET = "stream reset"  # HTTP/2 RST_STREAM from either side: "stream reset (code 8)"
NOTE_RECORDER_CUT = "cut by recorder shutdown"  # in flight when the recording stopped
NOTE_NO_RESPONSE = "no response"

CUT_SHORT: tuple[str, ...] = (
    NOTE_STREAM_TRUNCATED,
    NOTE_CLIENT_CLOSED,
    NOTE_STREAM_RESET,
    NOTE_RECORDER_CUT,
    NOTE_NO_RESPONSE,
)


def stream_reset(code: int | None) -> str:
    """The note on an HTTP/2 stream reset with `code` (RFC 9113 §7: 8 is CANCEL)."""
    return f"{NOTE_STREAM_RESET} (code {code})"


def is_cut_short(notes: Iterable[str]) -> bool:
    """Whether any of an exchange's notes says it was cut short."""
    return any(note.startswith(CUT_SHORT) for note in notes)


# The client's h2c upgrade offer, kept in the capture, was not passed on to the agent.
NOTE_H2C_OFFER = "h2c upgrade offer not passed on"


# The push relay swapped a webhook URL for its own (a request's note) and back (an answer's),
# so every delivery the agent made came through the recorder.
NOTE_TO_RELAY = "push relay: webhook URL replaced by the recorder's"
NOTE_TO_REAL = "push relay: relay URL replaced by the webhook's"
