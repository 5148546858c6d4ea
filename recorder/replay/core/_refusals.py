"""Requests no recorded step answers: refused or missed, each journaled (pure).

A request lacking a credential a recorded one like it carried gets the agent's recorded
refusal; one no agent route serves gets the agent's refusal of the same trouble
(`_fallback`), else an a2a-sdk agent's; anything else is a miss (`_misses`).
"""

from __future__ import annotations

from recorder.capture import Request
from recorder.protocol import Classification, parse_json
from recorder.replay.core._building import Builder, nothing
from recorder.replay.core._fallback import WORDS, Troubles, describe, trouble
from recorder.replay.core._misses import (
    NEAREST_SCAN,
    MissReport,
    miss_answer,
    nearest,
    refusal,
    unserved_version,
)
from recorder.replay.core._outcomes import Client, Ledger, Logged, Miss, Outcomes, Refused, Served
from recorder.replay.core._reader import Reading
from recorder.replay.core._resolve import Unanswered
from recorder.replay.core._versions import Refusal
from recorder.script import Script, Step


class Refusals:
    def __init__(
        self, script: Script, builder: Builder, ledger: Ledger, jsonrpc_paths: frozenset[str]
    ) -> None:
        self.script = script
        self.builder = builder
        self.ledger = ledger
        self.jsonrpc_paths = jsonrpc_paths  # where the capture's JSON-RPC endpoints are
        self.troubles = Troubles(script.steps, self.jsonrpc_paths)
        self.forwarding = False  # misses go to a live agent (`--on-miss forward`)

    def unanswered(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        found: Unanswered,
        received: Request | None = None,
    ) -> Outcomes:
        """A request nothing recorded answers; `received`: what the client sent, untranslated."""
        unauthorized = self._refused_for_credentials(reading)
        if unauthorized is not None:
            why = "that lacked the same credentials"
            return self._instead(request, client, reading, unauthorized, why)
        troubled = self.troubled(request, client, reading)
        if troubled is not None:
            return troubled
        report = self._nearest(found, reading)
        answer = miss_answer(report, reading.jsonrpc_id, grpc=bool(request.messages))
        text = report.describe()
        self.ledger.report.missed(self.ledger.journal.line(received or request, text))
        logged = Logged("miss", "synthesized", (text,), detail=text)
        number = self.ledger.log(request, client, reading, logged, answer)
        if not self.forwarding or request.messages:
            self.ledger.synthesized(number, text, received or request)
        return Miss(answer, report, number)

    def invalid(self, request: Request, c: Classification) -> bool:
        """Whether a request is JSON that is no JSON-RPC request (its id may be no id)."""
        return trouble(request, c, self.jsonrpc_paths) == "jsonrpc:invalid"

    def troubled(self, request: Request, client: Client, reading: Reading) -> Outcomes | None:
        """A request no agent route serves, refused as the agent or a2a-sdk does (None: A2A)."""
        c = reading.classification
        kind = trouble(request, c, self.jsonrpc_paths)
        if kind is None:
            return None
        instead = self.troubles.answer(kind, request)
        if instead is not None:
            return self._instead(request, client, reading, instead)
        refused = refusal(request, c, kind.startswith("jsonrpc"))
        if refused is None:
            return None
        reason = WORDS[kind]
        why = f"refused as an a2a-sdk agent refuses it: {reason}"
        logged = Logged("refused", "synthesized", (why,), detail=reason)
        number = self.ledger.log(request, client, reading, logged, refused)
        self.ledger.synthesized(number, why, request)
        return Refused(refused, reason, number)

    def unserved_version(
        self, request: Request, client: Client, reading: Reading, refused: Refusal
    ) -> Refused:
        """A request in a version the replay does not serve, refused as such an agent does."""
        c = reading.classification
        why = refused.describe()
        answer = unserved_version(c, why, reading.jsonrpc_id, grpc=bool(request.messages))
        logged = Logged("refused", "synthesized", (why,), detail=why)
        number = self.ledger.log(request, client, reading, logged, answer)
        self.ledger.synthesized(number, why, request)
        return Refused(answer, why, number)

    def _refused_for_credentials(self, reading: Reading) -> Step | None:
        """The agent's refusal of a request with these credentials, this one lacking some."""
        value = reading.live.value
        held = value.get("credentials", []) if isinstance(value, dict) else []
        c = reading.classification
        if not self.script.credentials or c.binding is None:
            return None
        like = self.script.by_operation.get((c.binding.value, c.operation or "-"), [])
        if not any(set(s.credentials) > set(held) for s in like[:NEAREST_SCAN]):
            return None  # it lacks nothing a recorded request like it carried
        return self.script.refusals.get((c.binding.value, tuple(held)))

    def _instead(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        step: Step,
        why: str = "it could not serve",
    ) -> Served:
        """The agent's refusal of another request of the same trouble (or credentials)."""
        answer = self.builder.answer(step, nothing, reading)
        self.ledger.report.served(step.key)
        change = f"the agent's answer to another request {why}: {describe(step)}"
        logged = Logged("served", "adapted", (change,), step=step)
        number = self.ledger.log(request, client, reading, logged, answer)
        return Served(answer, step, None, (), number, "adapted", (change,))

    def _nearest(self, found: Unanswered, reading: Reading) -> MissReport:
        classification = reading.classification
        binding, operation = found.key[0], found.key[1]
        if found.fitting:
            misfit = _misfit(found, self.script.issuer)
            return MissReport(classification, found.fitting[0].exchange, misfit)
        same = self.script.by_operation.get((binding, operation), [])
        others = [b for b, op in self.script.by_operation if op == operation and b != binding]
        return nearest(classification, parse_json(found.key[2]), same, others)


def _misfit(found: Unanswered, issuer: dict[str, int]) -> tuple[str, ...]:
    named = sorted({v for s in found.fitting for v in s.names})
    ids = ", ".join(f"{v} (handed out by #{issuer[v]})" if v in issuer else v for v in named[:4])
    return (
        "the same request, about other recorded ids than the live ones stand for (it names "
        f"{ids or 'none'}): no recorded story of the live ids holds such a request at this point",
    )
