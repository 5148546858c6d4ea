"""The push addon: push deliveries, through the relay or the push proxy, and the webhooks that
push configs name.

Reverse mode: each push-config `url` in a request (HTTP bodies here, gRPC messages in the tap)
becomes the recorder's `/__a2a_recorder/push/<n>`; the agent POSTs deliveries there, and this
addon sends each on to the real webhook, marked a delivery.  Answers carrying a relay URL are
rewritten back.  Forward mode replaces nothing: deliveries are known by the webhooks configs
name, or `a2a_webhook_paths`.  A config the relay cannot take goes straight to its webhook
through the push proxy (the agent's HTTP_PROXY), whose flows are recorded as deliveries.
Deliveries that will be missed are said once (`warn`; docs/guides/push.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http

from recorder._background import url_key
from recorder.protocol import (
    ENCODING_HEADER,
    NOTE_TO_REAL,
    NOTE_TO_RELAY,
    PUSH_DELIVERY,
    parse_json,
)
from recorder.record._flows import to_request, to_response
from recorder.record._h2rewrite import Rewrite
from recorder.record._push import (
    PUSH_CONFIG_OPERATIONS,
    RELAY_PREFIX,
    PushRelay,
    config_root,
    grpc_swap,
    webhook_urls,
)
from recorder.record._state import FlowState, is_reverse, mode_spec, own_origin, state_of

logger = logging.getLogger(__name__)

_RELAY_UNKNOWN = b'{"error":"unknown a2a-recorder push relay path"}'
GRPC_CONFIG_WARNING = (
    "a push config was set over gRPC (webhook {url}) that the push relay could not take (forward "
    "mode, or a message the recorder cannot decode), so the agent delivers straight to that "
    "webhook and its deliveries are not recorded. To record them, start record with "
    "--push-proxy HOST:PORT and run the agent with HTTP_PROXY=http://HOST:PORT (docs: "
    "guides/push.md)"
)
NO_DELIVERY_WARNING = (
    "push configs named {count} webhook(s) ({url}), but no push delivery reached the recorder. "
    "If the agent sent some, its SDK may refuse webhooks on loopback or private addresses, as "
    "the recorder's relay is: allow them (Go: HTTPSenderConfig{{AllowPrivateNetworks: true}}; "
    "Java: a2a.push-notification.url.allow-private-network-targets=true and "
    "a2a.push-notification.url.allowed-schemes=http,https; Python: no push_url_validator) "
    "(docs: guides/push.md)"
)


class PushAddon:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_push"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.relay = PushRelay()
        self.webhook_paths: tuple[str, ...] = ()  # set from the classifier's option
        # The push proxy's mode spec, and the upstream its deliveries' new captures name.
        self.push_proxy_mode: str | None = None
        self.push_upstream: str | None = None
        self.relay_origin: str | None = None  # the recorder's HTTP origin, for gRPC configs
        # Webhook URLs seen in push configs (`url_key`) -> the upstream whose config named them.
        self._webhooks: dict[str, str] = {}
        self.warn: Callable[[str], None] = logger.warning  # the console's, when there is one
        self.delivered = 0  # deliveries that reached the recorder (relay, push proxy, webhook)
        self._expected: list[str] = []  # webhooks whose deliveries should reach the recorder
        self._warned: set[str] = set()

    def configure(self, updated: set[str]) -> None:
        if "a2a_webhook_paths" in updated:  # declared (and checked) by the classifier
            self.webhook_paths = tuple(ctx.options.a2a_webhook_paths)

    # -- hooks --------------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if state is None:
            return
        self._route(flow, state)
        if state.delivery and flow.response is None:  # not the relay's own 404
            self.delivered += 1

    def done(self) -> None:
        if self._expected and not self.delivered:
            text = NO_DELIVERY_WARNING.format(count=len(self._expected), url=self._expected[0])
            self._warn_once("no-delivery", text)

    def _route(self, flow: http.HTTPFlow, state: FlowState) -> None:
        if self._via_push_proxy(flow):
            # A relay URL is served here too: mitmproxy will not connect to its own listener.
            state.pushed = True
            state.delivery = self._relay(flow, state) or self._is_delivery(flow, state)
            if state.delivery:
                state.upstream = (
                    self._webhooks.get(url_key(flow.request.url))
                    or self.push_upstream
                    or state.upstream
                )
            return
        if self._relay(flow, state):
            return
        if self._known_webhook(flow):
            state.delivery = True
            return
        if state.classification.operation in PUSH_CONFIG_OPERATIONS:
            root = config_root(state.classification)
            self.learn(parse_json(state.request.body), root, state.upstream)
            if is_reverse(flow):
                self._substitute(flow, state, root)

    def response(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if (
            state is None
            or flow.response is None
            or state.tee is not None
            or state.delivery
            or state.pushed
        ):
            return
        body = flow.response.content or b""
        real = self.relay.to_real(body, own_origin(flow))
        if real != body:
            flow.response.content = real
            state.notes.append(NOTE_TO_REAL)
            state.response = to_response(flow.response)[0]  # what the client got

    # -- shared ---------------------------------------------------------------------------------

    def learn(
        self, document: Any, root: tuple[str, ...], upstream: str, *, expected: bool = True
    ) -> None:
        """Remember the webhook URLs a push-config request names, and whose config it is."""
        for url in webhook_urls(document, root):
            key = url_key(url)
            self._webhooks.setdefault(key, upstream)
            if expected and url not in self._expected:
                self._expected.append(url)

    def learn_grpc(self, document: Any, upstream: str) -> None:
        """A push config in a gRPC message: remember it; warn when nothing can record its
        deliveries."""
        urls = list(webhook_urls(document, ()))
        seen = self.push_proxy_mode is not None or all(map(self.relay.knows, urls))
        self.learn(document, (), upstream, expected=seen)
        if urls and not seen:
            self._warn_once("grpc-config", GRPC_CONFIG_WARNING.format(url=urls[0]))

    def grpc_relay(self, headers: Mapping[str, str], request: bool) -> Rewrite | None:
        """How a gRPC call goes through the relay (`grpc_swap`); None when it does not."""
        path, encoding = headers.get(":path"), headers.get(ENCODING_HEADER) if request else None
        if self.relay_origin is None or path is None:
            return None
        return grpc_swap(self.relay, self.relay_origin, path, request, encoding)

    def _warn_once(self, kind: str, text: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            self.warn(text)

    # -- request side -------------------------------------------------------------------------

    def _via_push_proxy(self, flow: http.HTTPFlow) -> bool:
        wanted = self.push_proxy_mode
        return wanted is not None and mode_spec(flow.client_conn) == wanted

    def _known_webhook(self, flow: http.HTTPFlow) -> bool:
        """A POST to a webhook named in a push config or by `a2a_webhook_paths`."""
        if flow.request.method != "POST":
            return False  # deliveries are POSTs; a GET to the same URL is something else
        if not (self._webhooks or self.webhook_paths or self.relay):
            return False  # no webhook known yet (building the URL costs, on every request)
        url = flow.request.url
        return (
            self.relay.knows(url)
            or url_key(url) in self._webhooks
            or urlsplit(flow.request.path).path in self.webhook_paths
        )

    def _is_delivery(self, flow: http.HTTPFlow, state: FlowState) -> bool:
        return self._known_webhook(flow) or state.classification.operation == PUSH_DELIVERY

    def _relay(self, flow: http.HTTPFlow, state: FlowState) -> bool:
        """A POST to a relay path: sent on to the real webhook, and kept as the webhook got it."""
        if not flow.request.path.startswith(RELAY_PREFIX):
            return False
        state.delivery = True
        real = self.relay.real_url(flow.request.path)
        if real is None:
            flow.response = http.Response.make(
                404, _RELAY_UNKNOWN, {"Content-Type": "application/json"}
            )
            return True
        state.notes.append(f"push relay: {flow.request.path} -> webhook")
        flow.request.url = real
        state.request = to_request(flow.request)[0]
        return True

    def _substitute(self, flow: http.HTTPFlow, state: FlowState, root: tuple[str, ...]) -> None:
        body = flow.request.get_content(strict=False) or b""
        new, count = self.relay.to_relay(body, root, own_origin(flow))
        if count:
            flow.request.content = new
            state.notes.append(NOTE_TO_RELAY)
