"""What a test's replay could not answer, for the pytest plugin to say once.

Each answer the replayer wrote itself fails the test once (`Unanswered` counts what was said).
With `new_episodes`, a miss that cannot be appended (a gRPC call, or an id this replay handed
out that the live agent refused) is said too, and what was appended is a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recorder.capture import Capture, Exchange
    from recorder.replay import JournalRequest


@dataclass
class Unanswered:
    """The problems of one test's replay (`lines`), as read (`message`), and which were said."""

    lines: Callable[[], Sequence[str]]
    message: Callable[[Sequence[str]], str]
    said: set[str] = field(default_factory=set)

    def unsaid(self) -> str | None:
        """The message for what was not said yet (None when nothing), from now on said."""
        new = [line for line in dict.fromkeys(self.lines()) if line not in self.said]
        self.said.update(new)
        return self.message(new) if new else None


def is_grpc_miss(line: str) -> bool:
    """A report line (`POST /lf.a2a.v1.A2AService/GetTask: ...`) of a gRPC call."""
    from recorder.protocol import grpc_method

    target = line.split(" ", 2)[1].rstrip(":") if line.count(" ") >= 1 else ""
    return grpc_method(target) is not None


def misses_among(misses: Sequence[str], answers: Sequence[str]) -> list[str]:
    """The misses (report lines) that some of the synthesized `answers` stand for."""
    return [m for m in misses if any(a.endswith(m.partition(": ")[2]) for a in answers)]


def miss_message(misses: Sequence[str], capture: Capture, synthesized: Sequence[str] = ()) -> str:
    """Each answer the replayer wrote itself, and a word on bindings the capture never recorded."""
    text = "requests the capture could not answer:\n  " + "\n  ".join(misses) if misses else ""
    others = [s for s in synthesized if not any(s.endswith(m.partition(": ")[2]) for m in misses)]
    if others:
        text += ("\n" if text else "") + "answers the capture does not hold, written by the "
        text += "replayer:\n  " + "\n  ".join(others)
    from recorder.protocol import AGENT_CARD

    # The bindings of the capture's A2A exchanges (the card aside), in the order first seen.
    seen = (x.classification for x in capture.exchanges if x.classification.is_a2a)
    bindings = list(
        dict.fromkeys(c.binding.value for c in seen if c.binding and c.operation != AGENT_CARD)
    )
    if any(is_grpc_miss(m) for m in misses) and "GRPC" not in bindings:
        held = ", ".join(bindings) or "no binding"
        text += (
            f"\nthe capture holds no GRPC exchange (it holds {held}): this test called "
            f"gRPC; record it again with --a2a-record=all --a2a-upstream URL "
            f"--a2a-grpc-upstream HOST:PORT"
        )
    return text


# -- new_episodes ---------------------------------------------------------------------------------


def episode_problems(
    misses: Sequence[JournalRequest],
    answers: Sequence[Exchange],
    handed_out: Callable[[str], object],
) -> list[str]:
    """What of the misses cannot be appended: gRPC calls, failed forwards, and requests naming ids
    the replay handed out (`handed_out`) that the live agent refused (`answers`: the recorder's)."""
    problems = []
    for entry in misses:
        where = f"{entry.request.method} {entry.request.target}"
        if is_grpc_miss(f"{where}:"):
            problems.append(f"{where}: a gRPC call (new_episodes appends HTTP exchanges only)")
            continue
        if entry.outcome != "forwarded":
            problems.append(f"{where}: not forwarded: {entry.detail or 'the forward failed'}")
            continue
        issued = [i for i in entry.ids if i.provenance == "issued" or handed_out(i.value)]
        answer = _live_answer(entry, answers, [i.value for i in issued])
        if issued and answer is not None and _failed(answer):
            names = ", ".join(f"{i.location} {i.value}" for i in issued)
            problems.append(
                f"{where}: names {names}, which this replay handed out; forwarded to the live "
                f"agent, which does not know it: it answered {_outcome(answer)}, no answer to "
                "the request the capture holds, so nothing was appended"
            )
    return problems


def episode_message(problems: Sequence[str]) -> str:
    return (
        "new_episodes could not add these requests the capture could not answer (record the "
        "capture again with --a2a-record=all):\n  " + "\n  ".join(problems)
    )


def forwarded_summary(path: object, added: Sequence[Exchange]) -> str:
    """The warning after a new episode was appended: what went to the live agent."""
    shown = ", ".join(
        f"#{x.number} {x.classification.operation or x.request.method}" for x in added
    )
    return (
        f"{path}: new_episodes sent {len(added)} request(s) the capture could not answer to the "
        f"live agent, and appended its answers as {shown}"
    )


def _live_answer(
    entry: JournalRequest, answers: Sequence[Exchange], values: Sequence[str]
) -> Exchange | None:
    """The recorded exchange of a forwarded request: same operation, target and ids."""
    for answer in answers:
        request = answer.request
        if (
            answer.classification.operation == entry.classification.operation
            and request.target == entry.request.target
            and all(v in request.target or v.encode() in request.body for v in values)
        ):
            return answer
    return None


def _failed(answer: Exchange) -> bool:
    response = answer.response
    return response is None or answer.classification.error is not None or response.status >= 400


def _outcome(answer: Exchange) -> str:
    if answer.classification.error:
        return answer.classification.error
    return str(answer.response.status) if answer.response is not None else "nothing"
