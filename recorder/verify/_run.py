"""Verify's shell: the live card, verify's webhook, the recorder, the schedule, then the diff.

Nothing is sent before the patterns are checked, every redacted value has a supplied one, and
the live card is fetched (an agent that cannot be reached is exit 2).  The plan runs through a
`RecordingProxy` until it has written every exchange it carried.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from recorder._background import run_to_end
from recorder._errors import Unsendable, VerifyError
from recorder.capture import Capture, CaptureParseError, read_capture, started_at
from recorder.diff import diff_captures, parse_compare, parse_ignores
from recorder.protocol import (
    AGENT_CARD,
    PUSH_DELIVERY,
    Binding,
    Interface,
    Json,
    Version,
    find_card,
    interfaces_from_card,
    parse_json,
)
from recorder.replay import capture_as
from recorder.script import Step, delivery_url
from recorder.verify._live import LiveIds
from recorder.verify._outgoing import (
    GrpcOutgoing,
    Outgoing,
    PathMap,
    grpc_outgoing,
    http_outgoing,
)
from recorder.verify._plan import Plan, make_plan
from recorder.verify._result import NotSent, VerifyResult, latencies
from recorder.verify._schedule import TIMEOUT, Schedule
from recorder.verify._secrets import Credentials, missing_credentials
from recorder.verify._send import GrpcSender, HttpSender, LiveAnswer
from recorder.verify._webhook import Receiver

CARD_PATH = "/.well-known/agent-card.json"
WRITE_TIMEOUT = 5.0  # seconds for the recorder to write what it carried
WRITE_POLL = 0.01
BIND_ATTEMPTS = 3


@dataclass(frozen=True)
class Options:
    """How to verify: the command's options."""

    agent: str
    grpc: str | None = None
    out: Path | None = None
    ignore: Sequence[str] = ()
    compare: Sequence[str] = ()
    credentials: Credentials = field(default_factory=Credentials)
    timeout: float = TIMEOUT
    max_slowdown: float | None = None
    name: str = "recorded"
    as_version: Version | None = None  # send the capture in this protocol version


def verify_capture(capture: Capture, agent: str, **options: Any) -> VerifyResult:
    """Play the client side of `capture` against the live agent at `agent` (`Options`'s fields
    as options); diff the two.  Blocking: it runs its own event loop (in a thread under a
    running one).  Raises `VerifyError` when verify cannot run."""
    settings = Options(agent=agent, **options)
    return run_to_end(lambda: verify_async(capture, settings))


async def verify_async(capture: Capture, options: Options) -> VerifyResult:
    try:
        parse_ignores(options.ignore)
        parse_compare(options.compare)
    except ValueError as exc:
        raise VerifyError(str(exc)) from exc
    capture, crossed = _as_version(capture, options.as_version)
    plan = make_plan(capture)
    requests = (step.exchange.request for step in plan.script.steps)
    options = replace(options, credentials=options.credentials.reading(requests))
    missing = missing_credentials(plan.script.steps, options.credentials)
    if missing:
        raise VerifyError(
            "verify never sends a redacted secret to an agent:\n  " + "\n  ".join(missing)
        )
    live = await _live_interfaces(options.agent, capture, options.credentials, options.timeout)
    grpc = options.grpc
    if grpc is None and _has_grpc(plan):
        grpc = _grpc_address(live)
    if grpc is not None and grpc.startswith(("tls://", "https://")):
        raise VerifyError(f"--grpc {grpc}: verify speaks plaintext gRPC only")
    paths = PathMap.of(_recorded_interfaces(capture), live, _bases(capture, options.agent))
    with tempfile.TemporaryDirectory(prefix="a2a-verify-") as scratch:
        out = options.out or Path(scratch) / "live.http"
        run = await _record(plan, options, grpc, paths, out)
        new = _comparable(_read_new(out, options.agent), plan, run)
    left_out = {s.exchange.number for s in plan.skipped}
    recorded = replace(
        capture, exchanges=tuple(e for e in capture.exchanges if e.number not in left_out)
    )
    b_name = str(options.out) if options.out else f"live {options.agent}"
    diff = diff_captures(
        recorded,
        new,
        ignore=options.ignore,
        compare=options.compare,
        collapse_polls=True,
        a_name=options.name,
        b_name=b_name,
    )
    skipped = tuple(
        NotSent(s.exchange.number, s.exchange.classification.operation or "-", s.reason)
        for s in plan.skipped
    )
    return VerifyResult(
        options.name,
        options.agent,
        diff,
        tuple(run.not_sent),
        skipped,
        latencies(diff),
        options.max_slowdown,
        (*crossed, *run.notes),
        options.out,
        dict(run.ids.to_live),
    )


def _as_version(capture: Capture, version: Version | None) -> tuple[Capture, tuple[str, ...]]:
    if version is None:
        return capture, ()
    found = capture_as(capture, version)
    notes = [f"the recording, sent and compared as A2A v{version}: {c}" for c in found.changes]
    notes += [f"not carried in v{version}: {lost}" for lost in found.lost]
    notes += [f"{k}: v{version} has no such operation; sent as recorded" for k in found.kept]
    return found.capture, tuple(notes)


@dataclass
class _Run:
    not_sent: list[NotSent]
    notes: list[str]
    ids: LiveIds
    receiver: Receiver


def _comparable(new: Capture, plan: Plan, run: _Run) -> Capture:
    """The new capture less the deliveries to webhooks the recording holds none to (its
    recorder may not have seen them), with a note of how many."""
    left: Counter[str] = Counter()
    kept = []
    for exchange in new.exchanges:
        key = (
            run.receiver.webhook_of(delivery_url(exchange.request))
            if (exchange.classification.operation == PUSH_DELIVERY)
            else None
        )
        if key is not None and not plan.deliveries.get(key):
            left[key] += 1
        else:
            kept.append(exchange)
    for key, count in left.items():
        run.notes.append(
            f"{count} push deliveries to {key} not compared: the recording holds "
            "none to that webhook (its recorder did not see them)"
        )
    return replace(new, exchanges=tuple(kept)) if left else new


async def _record(
    plan: Plan, options: Options, grpc: str | None, paths: PathMap, out: Path
) -> _Run:
    loop = asyncio.get_running_loop()
    receiver = Receiver(plan.deliveries)
    with receiver:
        proxy = await asyncio.to_thread(_start_proxy, options.agent, grpc, out)
        try:
            transport = _Transport(
                receiver,
                HttpSender(proxy.url, options.timeout),
                GrpcSender(proxy.grpc_target) if proxy.grpc_target else None,
            )
            ids = LiveIds(receiver.live_url, dict(plan.script.issuer))
            schedule = Schedule(
                plan, ids, transport, _preparer(options, grpc, paths), options.timeout
            )

            def notify() -> None:
                loop.call_soon_threadsafe(schedule.changed)

            receiver.notify = notify
            try:
                await schedule.run()
            finally:
                await transport.close()
            await _until_written(proxy, schedule.sent + receiver.relayed, schedule.notes)
        finally:
            await asyncio.to_thread(proxy.stop)
    return _Run(schedule.not_sent, schedule.notes, ids, receiver)


async def _until_written(proxy: Any, expected: int, notes: list[str]) -> None:
    """Until the recorder has written `expected` exchanges (it tells no one: polled)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WRITE_TIMEOUT
    while (written := proxy.addons.save.totals.exchanges) < expected:
        if loop.time() >= deadline:
            notes.append(
                f"the recorder wrote {written} of the {expected} exchanges it carried "
                f"within {WRITE_TIMEOUT:g} s"
            )
            return
        await asyncio.sleep(WRITE_POLL)


def _start_proxy(agent: str, grpc: str | None, out: Path) -> Any:
    """A RecordingProxy, again when a port it picked was taken before it bound it."""
    from recorder.record import ProxyStartError, RecordingProxy

    for attempt in range(1, BIND_ATTEMPTS + 1):
        proxy = RecordingProxy(
            upstream=_origin(agent),
            out=out,
            grpc_upstream=grpc,
            existing="overwrite",
        )
        try:
            return proxy.start()
        except ProxyStartError as exc:
            if attempt == BIND_ATTEMPTS or "already in use" not in str(exc):
                raise VerifyError(f"the recorder could not start: {exc}") from exc
        except ValueError as exc:
            raise VerifyError(str(exc)) from exc
    raise AssertionError("unreachable")


class _Transport:
    def __init__(self, receiver: Receiver, http: HttpSender, grpc: GrpcSender | None) -> None:
        self.receiver, self.http, self.grpc = receiver, http, grpc

    async def send(self, step: Step, out: Outgoing, timeout: float, on_document: Any) -> LiveAnswer:
        if isinstance(out, GrpcOutgoing):
            assert self.grpc is not None
            return await self.grpc.send(out, timeout, on_document)
        return await self.http.send(out, step.exchange.classification.binding, on_document)

    def received(self, webhook: str) -> int:
        return self.receiver.received(webhook)

    async def close(self) -> None:
        await self.http.close()
        if self.grpc is not None:
            await self.grpc.close()


def _preparer(options: Options, grpc: str | None, paths: PathMap) -> Any:
    def prepare(step: Step, mapping: dict[str, str]) -> Outgoing:
        c = step.exchange.classification
        if c.binding is Binding.GRPC:
            if grpc is None:
                raise Unsendable(
                    "a gRPC call, and the live agent's card names no gRPC "
                    "address: pass --grpc HOST:PORT"
                )
            return grpc_outgoing(step.exchange.request, mapping, options.credentials)
        return http_outgoing(
            step.exchange.request, c.binding, c.version, mapping, options.credentials, paths
        )

    return prepare


def _read_new(out: Path, agent: str) -> Capture:
    if not out.exists():
        return Capture(started=started_at(0), recorder_version="-", upstreams=(agent,))
    try:
        return read_capture(out)
    except CaptureParseError as exc:  # the recorder's own file: never expected
        raise VerifyError(f"the new capture cannot be read: {exc}") from exc


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _card_exchange(capture: Capture) -> Any:
    return next(
        (
            e
            for e in capture.exchanges
            if e.classification.operation == AGENT_CARD and e.response is not None
        ),
        None,
    )


def _recorded_interfaces(capture: Capture) -> tuple[Interface, ...]:
    exchange = _card_exchange(capture)
    if exchange is None or exchange.response is None:
        return ()
    card = find_card(exchange.response.body, exchange.classification)
    return interfaces_from_card(card) if card is not None else ()


def _bases(capture: Capture, agent: str) -> tuple[str, str]:
    """(recorded base path, live base path): where each agent's card is, its suffix aside."""
    exchange = _card_exchange(capture)
    recorded = exchange.request.target.partition("?")[0] if exchange is not None else CARD_PATH
    suffix = (
        "/.well-known/" + recorded.rpartition("/.well-known/")[2]
        if ("/.well-known/" in recorded)
        else CARD_PATH
    )
    return recorded[: len(recorded) - len(suffix)], urlsplit(agent).path.rstrip("/")


async def _live_interfaces(
    agent: str, capture: Capture, credentials: Credentials, timeout: float
) -> tuple[Interface, ...]:
    """The live card's interfaces (none when it serves no card there)."""
    exchange = _card_exchange(capture)
    base = agent.rstrip("/")
    recorded_base, _ = _bases(capture, agent)
    path = exchange.request.target[len(recorded_base) :] if exchange is not None else CARD_PATH
    headers = (
        {k: v for k, v in exchange.request.headers if k.lower() == "a2a-version"}
        if (exchange is not None)
        else {}
    )
    headers = dict(credentials.fill_headers(headers.items()))
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
            response = await client.get(base + path, headers=headers)
    except httpx.HTTPError as exc:
        raise VerifyError(f"cannot reach the agent at {agent}: {exc}") from exc
    document: Json = parse_json(response.content)
    card = document if isinstance(document, Mapping) and response.status_code < 400 else None
    return interfaces_from_card(card) if card is not None else ()


def _has_grpc(plan: Plan) -> bool:
    return any(s.step.exchange.classification.binding is Binding.GRPC for s in plan.sends)


def _grpc_address(interfaces: Sequence[Interface]) -> str | None:
    for iface in interfaces:
        if iface.binding is Binding.GRPC:
            url = iface.url
            return urlsplit(url).netloc if "://" in url else url
    return None
