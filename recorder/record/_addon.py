"""The recording addon: classify every A2A exchange and append it to a capture when complete.

Loadable as is (`mitmdump -s recorder/record/addon.py`) and used by `RecordingProxy`.  Options
share the `a2a_` prefix, are declared in `load()` and validated in `configure()`.

Invariants:
- What the proxy forwards is never altered, except what it announces in the capture's notes:
  card interface URLs ("card rewritten", reverse mode), push-config URLs ("push relay"), and a
  dropped `If-None-Match` on card fetches (so the agent answers with a card to rewrite).
- An exchange is written once, when it is complete: on `response` (for a stream, its end) or on
  `error`.  Exchanges are numbered per capture in completion order.
- The capture holds what the client sent and saw, except the agent card, which is kept as the
  agent served it.  Secrets are redacted in the capture only.

Push notifications, the choice made here: a **relay** (`_push`).  In reverse mode the recorder
replaces each push-config `url` it sees in a request (CreateTaskPushNotificationConfig, v1.0 flat
and v0.3 nested; inline SendMessage `configuration`, both shapes) by a URL of its own,
`http://<proxy address>/__a2a_recorder/push/<n>`.  The agent POSTs deliveries there; the addon
points each such request at the real webhook, so the client still gets it, and records it as a
`PushDelivery` exchange in the same capture.  Responses that carry the relay URL (create, get,
list) are rewritten back, so the client sees the URL it sent.  The relay needs nothing from the
agent's HTTP client (no proxy settings).  In forward mode no URL is
replaced; deliveries that pass through the proxy (agent using HTTP_PROXY) are recognised by the
webhook URLs seen in configs, or by `a2a_webhook_paths`.

gRPC push configs cannot be relayed (the gRPC bytes pass untouched), so their deliveries are
recorded through a **push proxy**: a forward-proxy mode (`push_proxy_mode`, set by
`RecordingProxy(push_proxy=...)`) that the agent uses as HTTP_PROXY.  A flow arriving there is a
delivery when its URL is a webhook seen in a push config (gRPC messages or HTTP bodies), its path
is in `a2a_webhook_paths`, or the classifier's heuristic calls it one (POST of a StreamResponse
with `X-A2A-Notification-Token`; an inline config's stream may still be open when its deliveries
go out, so its URL is not known yet).  Deliveries go to the capture of the upstream whose config
named the webhook and share its redactor, so tokens read as the config's placeholders.  Other
traffic through the push proxy is forwarded and, unless `a2a_all`, not recorded.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, exceptions, http
from mitmproxy.proxy.mode_specs import ReverseMode

from recorder.capture import Exchange, Request, Response
from recorder.protocol import (
    AGENT_CARD,
    PUSH_DELIVERY,
    Classification,
    card_location,
    classify,
    find_card,
    interfaces_from_card,
    is_event_stream,
    parse_json,
    rewrite_card,
    rewrite_grpc_interfaces,
)
from recorder.record._flows import SseTee, origin, to_request, to_response
from recorder.record._grpcrecord import GrpcRecord
from recorder.record._push import (
    PUSH_CONFIG_OPERATIONS,
    RELAY_PREFIX,
    PushRelay,
    as_delivery,
    config_root,
    url_key,
    webhook_urls,
)
from recorder.record._scan import scan_exchange
from recorder.record._sinks import SPLITS, Sink, capture_path, out_problem

logger = logging.getLogger(__name__)
OptionsError: Any = exceptions.OptionsError  # untyped in mitmproxy

EXTENDED_CARD = "GetExtendedAgentCard"

@dataclass
class _Pending:
    """What the addon remembers about one live flow."""

    request: Request  # as the client sent it
    notes: list[str] = field(default_factory=list)
    tee: SseTee | None = None
    delivery: bool = False
    pushed: bool = False  # arrived through the push proxy


class Recorder:
    """The mitmproxy addon.  See the module docstring."""

    def __init__(self) -> None:
        self.out: Path | None = None
        self.card_rewrite = True
        self.keep_secrets = False
        self.record_all = False
        self.split = "none"
        self.webhook_paths: tuple[str, ...] = ()
        self.relay = PushRelay()
        self._pending: dict[str, _Pending] = {}
        self._sinks: dict[Path, Sink] = {}
        self._interfaces: dict[str, tuple[Any, ...]] = {}
        self._cards: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._warned_signed = False
        self._warned_suspects: set[str] = set()
        # The proxy's own gRPC address (`host:port`); reverse mode points GRPC interfaces at it.
        self.grpc_target: str | None = None
        # The push proxy's mode spec (`regular@127.0.0.1:8081`), and the upstream a capture
        # opened by one of its deliveries names in its header.
        self.push_proxy_mode: str | None = None
        self.push_upstream: str | None = None
        # Webhook URLs seen in push configs (`url_key`) -> the upstream whose config named them.
        self._webhooks: dict[str, str] = {}

    # -- options ----------------------------------------------------------------------------

    def load(self, loader: Any) -> None:
        loader.add_option(
            "a2a_out",
            str,
            "",
            "Capture file to write (split=none), or directory for one file per upstream/context.",
        )
        loader.add_option(
            "a2a_card_rewrite",
            bool,
            True,
            "Reverse mode: point the agent card's interface URLs at the proxy.",
        )
        loader.add_option(
            "a2a_keep_secrets", bool, False, "Write secrets to the capture instead of redacting."
        )
        loader.add_option("a2a_all", bool, False, "Also record non-A2A traffic.")
        loader.add_option(
            "a2a_split",
            str,
            "none",
            "One capture file (none), one per upstream host:port, or one per A2A context.",
            choices=SPLITS,
        )
        loader.add_option(
            "a2a_webhook_paths",
            Sequence[str],
            [],
            "Request paths that are push deliveries (for deliveries not sent through the relay).",
        )

    def configure(self, updated: set[str]) -> None:
        if not updated & {
            "a2a_out",
            "a2a_card_rewrite",
            "a2a_keep_secrets",
            "a2a_all",
            "a2a_split",
            "a2a_webhook_paths",
        }:
            return
        options = ctx.options
        if options.a2a_split not in SPLITS:
            raise OptionsError(f"a2a_split must be one of {', '.join(SPLITS)}")
        out = Path(options.a2a_out).expanduser() if options.a2a_out else None
        if problem := out_problem(out, options.a2a_split):
            raise OptionsError(problem)
        bad = [p for p in options.a2a_webhook_paths if not p.startswith("/")]
        if bad:
            raise OptionsError(f"a2a_webhook_paths must start with '/': {bad}")
        self.out, self.split = out, options.a2a_split
        self.card_rewrite = options.a2a_card_rewrite
        self.keep_secrets = options.a2a_keep_secrets
        self.record_all = options.a2a_all
        self.webhook_paths = tuple(options.a2a_webhook_paths)

    # -- hooks ------------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        captured, notes = to_request(flow.request)
        pending = _Pending(captured, list(notes))
        self._pending[flow.id] = pending
        if self._via_push_proxy(flow):
            # A relay URL is served here: mitmproxy will not connect to its own listener.
            pending.pushed = True
            pending.delivery = (self._relay_delivery(flow, pending)
                                or self._is_delivery(flow, captured))
            return
        if self._relay_delivery(flow, pending):
            return
        if self._known_webhook(flow):
            pending.delivery = True
            return
        classification = self._classify(flow, captured)
        if classification.operation in PUSH_CONFIG_OPERATIONS:
            root = config_root(classification)
            self._learn_webhooks(parse_json(captured.body), root, _upstream_origin(flow))
        is_card = classification.operation in (AGENT_CARD, EXTENDED_CARD)
        if is_card and self._rewriting(flow) and flow.request.headers.pop("if-none-match", None):
            pending.notes.append("If-None-Match dropped")
        if classification.operation in PUSH_CONFIG_OPERATIONS and _is_reverse(flow):
            self._substitute_push_urls(flow, classification, pending)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        pending = self._pending.get(flow.id)
        response = flow.response
        if pending is None or response is None or not is_event_stream(
                response.headers.get("content-type")):
            return
        encoded = response.headers.get("content-encoding", "identity") != "identity"
        pending.tee = SseTee(compressed=encoded)
        if encoded:
            pending.notes.append("compressed event stream not framed")
        response.stream = pending.tee

    def response(self, flow: http.HTTPFlow) -> None:
        pending = self._pending.pop(flow.id, None)
        if pending is None or flow.response is None:
            return
        if pending.tee is not None:
            pending.tee.close()
            if pending.tee.truncated:
                pending.notes.append("stream truncated")
        original, notes = to_response(flow.response, pending.tee)
        pending.notes.extend(notes)
        client_view = self._adjust_response(flow, pending, original)
        self._record(flow, pending, client_view, None)

    def error(self, flow: http.HTTPFlow) -> None:
        pending = self._pending.pop(flow.id, None)
        if pending is None:
            return
        message = flow.error.msg if flow.error else "unknown error"
        response = None
        if flow.response is not None:
            if pending.tee is not None:
                pending.tee.close()
            response, notes = to_response(flow.response, pending.tee)
            pending.notes.extend(notes)
            pending.notes.append("client closed" if _client_side(message) else "stream truncated")
        self._record(flow, pending, response, message)

    def done(self) -> None:
        """Close the captures; on a clean stop the header lists what was actually redacted."""
        with self._lock:
            sinks, self._sinks = list(self._sinks.values()), {}
        for sink in sinks:
            sink.close(keep_secrets=self.keep_secrets)

    # -- request side -------------------------------------------------------------------------

    def _via_push_proxy(self, flow: http.HTTPFlow) -> bool:
        mode = getattr(flow.client_conn, "proxy_mode", None)
        return self.push_proxy_mode is not None and (
            getattr(mode, "full_spec", None) == self.push_proxy_mode)

    def _known_webhook(self, flow: http.HTTPFlow) -> bool:
        """A POST to a webhook named in a push config or by `a2a_webhook_paths`."""
        if flow.request.method != "POST":
            return False  # deliveries are POSTs; a GET to the same URL is something else
        url = flow.request.url
        return (url in self.relay.real_urls or url_key(url) in self._webhooks
                or urlsplit(flow.request.path).path in self.webhook_paths)

    def _is_delivery(self, flow: http.HTTPFlow, request: Request) -> bool:
        if self._known_webhook(flow):
            return True
        return self._classify(flow, request).operation == PUSH_DELIVERY

    def _learn_webhooks(self, document: Any, root: tuple[str, ...], upstream: str) -> None:
        """Remember the webhook URLs a push-config request names, and whose config it is."""
        for url in webhook_urls(document, root):
            self._webhooks.setdefault(url_key(url), upstream)

    def _relay_delivery(self, flow: http.HTTPFlow, pending: _Pending) -> bool:
        if not flow.request.path.startswith(RELAY_PREFIX):
            return False
        pending.delivery = True
        real = self.relay.real_url(flow.request.path)
        if real is None:
            flow.response = http.Response.make(
                404,
                b'{"error":"unknown a2a-recorder push relay path"}',
                {"Content-Type": "application/json"},
            )
            return True
        pending.notes.append(f"push relay: {flow.request.path} -> webhook")
        flow.request.url = real
        return True

    def _substitute_push_urls(
        self, flow: http.HTTPFlow, classification: Classification, pending: _Pending
    ) -> None:
        body = flow.request.get_content(strict=False) or b""
        new, count = self.relay.to_relay(body, config_root(classification), _own_origin(flow))
        if count:
            flow.request.content = new
            pending.notes.append("push relay: webhook URL replaced by the recorder's")

    # -- response side ------------------------------------------------------------------------

    def _adjust_response(
        self, flow: http.HTTPFlow, pending: _Pending, original: Response
    ) -> Response:
        """Rewrite what the client gets (card URLs, relay URLs); return the client's view.

        The agent card is the exception: the capture keeps the agent's original.
        """
        assert flow.response is not None
        if pending.tee is not None or pending.delivery or pending.pushed:
            return original
        classification = self._classify(flow, pending.request, original)
        if classification.operation in (AGENT_CARD, EXTENDED_CARD):
            self._learn_card(flow, classification, original.body)
            if self._rewriting(flow):
                self._rewrite_card(flow, classification, original.body, pending)
            return original
        body = self.relay.to_real(original.body, _own_origin(flow))
        if body != original.body:
            flow.response.content = body
            pending.notes.append("push relay: relay URL replaced by the webhook's")
            return to_response(flow.response)[0]  # with the Content-Length the client got
        return original

    def _rewrite_card(
        self, flow: http.HTTPFlow, classification: Classification, body: bytes, pending: _Pending
    ) -> None:
        assert flow.response is not None
        at = card_location(classification) or ()
        result = rewrite_card(body, _upstream_origin(flow), _own_origin(flow), at=at)
        if self.grpc_target:
            grpc = rewrite_grpc_interfaces(result.body, self.grpc_target, at=at)
            result = replace(grpc, replaced=(*result.replaced, *grpc.replaced))
        if not result.changed:
            return
        flow.response.content = result.body
        flow.response.headers.pop("etag", None)
        pending.notes.append("card rewritten")
        if result.signed:
            pending.notes.append("card signature no longer verifies")
            if not self._warned_signed:
                self._warned_signed = True
                logger.warning(
                    "the agent card is signed; the rewritten card's signature no longer "
                    "verifies. Use forward-proxy mode (or a2a_card_rewrite=false) to keep it."
                )

    def _learn_card(self, flow: http.HTTPFlow, classification: Classification, body: bytes) -> None:
        card = find_card(body, classification)
        if card is None:
            return
        self._cards.append(card)
        try:
            self._interfaces[_upstream_origin(flow)] = tuple(interfaces_from_card(card))
        except (ValueError, TypeError, KeyError) as exc:
            logger.warning("agent card interfaces not understood: %s", exc)
        for sink in self._sinks.values():
            sink.redactor.learn_card(card)

    # -- recording ------------------------------------------------------------------------------

    def _classify(
        self,
        flow: http.HTTPFlow,
        request: Request,
        response: Response | None = None,
        *,
        webhook_paths: tuple[str, ...] = (),
    ) -> Classification:
        interfaces = self._interfaces.get(_upstream_origin(flow), ())
        webhooks = (*self.webhook_paths, *webhook_paths)
        try:
            return classify(request, response, interfaces=interfaces, webhook_paths=webhooks)
        except Exception as exc:  # a classifier bug must not break the proxy
            logger.warning("classification failed for %s: %s", request.target, exc)
            return Classification(reason=f"classification failed: {exc}")

    def _record(
        self,
        flow: http.HTTPFlow,
        pending: _Pending,
        response: Response | None,
        error: str | None,
    ) -> None:
        if self.out is None:
            return
        request = pending.request
        if pending.delivery:
            request, _ = to_request(flow.request)  # as the webhook got it
            webhook = (urlsplit(request.target).path,)
            found = self._classify(flow, request, response, webhook_paths=webhook)
            classification = as_delivery(found, request)
        else:
            classification = self._classify(flow, request, response)
        if pending.pushed and not pending.delivery and not self.record_all:
            return  # the agent's other outgoing traffic
        if not classification.is_a2a and not self.record_all:
            return
        self._append(self._sink_upstream(flow, pending), classification, request, response,
                     notes=pending.notes, started=flow.request.timestamp_start,
                     ended=_end_time(flow), error=error)

    def record_grpc(self, record: GrpcRecord, upstream: str) -> None:
        """Write one gRPC call observed on the gRPC listener (see `_grpcrecord`).

        `upstream` is its origin as the capture header names it (`grpc://127.0.0.1:50051`).
        """
        if self.out is None:
            return
        classification = self._classify_values(upstream, record.request, record.response)
        if classification.operation in PUSH_CONFIG_OPERATIONS:
            for message in record.request.messages:
                self._learn_webhooks(parse_json(message.json), (), upstream)
        if not classification.is_a2a and not self.record_all:
            return
        self._append(upstream, classification, record.request, record.response,
                     notes=record.notes, started=record.started, ended=record.ended,
                     error=record.error)

    def _append(
        self, upstream: str, classification: Classification, request: Request,
        response: Response | None, *, notes: Sequence[str], started: float, ended: float,
        error: str | None,
    ) -> None:
        """Number the exchange in its capture, redact it and append it (times: epoch seconds)."""
        with self._lock:
            sink = self._sink(upstream, classification)
            request, response, kept_notes = self._redacted(sink, request, response, notes)
            sink.count += 1
            sink.writer.append(Exchange(
                number=sink.count, classification=classification, request=request,
                response=response, started_us=max(0, int((started - sink.started) * 1_000_000)),
                duration_us=max(0, int((ended - started) * 1_000_000)),
                notes=kept_notes, error=error))

    def _redacted(
        self, sink: Sink, request: Request, response: Response | None, notes: Sequence[str]
    ) -> tuple[Request, Response | None, tuple[str, ...]]:
        """The exchange as the capture keeps it: secrets redacted (gRPC messages too), noted."""
        if self.keep_secrets:
            return request, response, tuple(notes)
        request, response, redacted = sink.redactor.exchange(request, response)
        suspects = scan_exchange(request, response)
        for suspect in suspects:
            if suspect not in self._warned_suspects:
                self._warned_suspects.add(suspect)
                logger.warning("%s (left as is; check the capture before sharing it)", suspect)
        return request, response, (*notes, *redacted, *suspects)

    def _classify_values(
        self, upstream: str, request: Request, response: Response | None
    ) -> Classification:
        # gRPC knows no tenant from its path; the HTTP card of any upstream may name one.
        interfaces = tuple(i for found in self._interfaces.values() for i in found)
        try:
            return classify(request, response, interfaces=interfaces)
        except Exception as exc:  # a classifier bug must not break the proxy
            logger.warning("classification failed for %s%s: %s", upstream, request.target, exc)
            return Classification(reason=f"classification failed: {exc}")

    def _sink(self, upstream: str, classification: Classification) -> Sink:
        """The open capture for an exchange (opened on first use); call with the lock held."""
        assert self.out is not None
        path = capture_path(self.out, self.split, upstream, classification.context_id)
        if path not in self._sinks:
            self._sinks[path] = Sink.open(path, upstream, keep_secrets=self.keep_secrets,
                                          cards=self._cards)
        return self._sinks[path]

    def _sink_upstream(self, flow: http.HTTPFlow, pending: _Pending) -> str:
        """The upstream an exchange belongs to; a pushed delivery, that of its config."""
        if pending.pushed:
            known = self._webhooks.get(url_key(flow.request.url)) or self.push_upstream
            if known:
                return known
        return _upstream_origin(flow)

    def _rewriting(self, flow: http.HTTPFlow) -> bool:
        return self.card_rewrite and _is_reverse(flow)


# -- small helpers ----------------------------------------------------------------------------


def _is_reverse(flow: http.HTTPFlow) -> bool:
    return isinstance(flow.client_conn.proxy_mode, ReverseMode)


def _own_origin(flow: http.HTTPFlow) -> str:
    """The proxy's address as this client reached it."""
    host, port = flow.client_conn.sockname[:2]
    return origin("https" if flow.client_conn.tls_established else "http", host, port)


def _upstream_origin(flow: http.HTTPFlow) -> str:
    return origin(flow.request.scheme, flow.request.host, flow.request.port)


def _client_side(message: str) -> bool:
    return "client" in message.lower()


def _end_time(flow: http.HTTPFlow) -> float:
    if flow.response is not None and flow.response.timestamp_end:
        return flow.response.timestamp_end
    return time.time()
