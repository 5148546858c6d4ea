"""The push addon: push deliveries, through the relay or the push proxy, and the webhooks that
push configs name.

Reverse mode, HTTP push configs: the recorder replaces each push-config `url` it sees in a
request (CreateTaskPushNotificationConfig, v1.0 flat and v0.3 nested; inline SendMessage
`configuration`, both shapes) by a URL of its own, `http://<proxy>/__a2a_recorder/push/<n>`.
The agent POSTs deliveries there; this addon points each such request at the real webhook, so
the client still gets it, and marks it a delivery for the capture.  Answers that carry a relay
URL (create, get, list) are rewritten back, so the client sees the URL it sent.  The relay
needs nothing from the agent's HTTP client.

Forward mode replaces no URL: deliveries that pass through the proxy (an agent using it as
HTTP_PROXY) are recognised by the webhook URLs seen in configs, or by `a2a_webhook_paths`.

gRPC push configs cannot be relayed (their bytes pass untouched), so their deliveries come
through the **push proxy**: a forward-proxy mode (`push_proxy_mode`) the agent uses as
HTTP_PROXY.  A flow arriving there is a delivery when its URL is a webhook seen in a push
config, its path is in `a2a_webhook_paths`, or the classifier calls it one (a POST of a
StreamResponse with `X-A2A-Notification-Token`: an inline config's stream may still be open
when its deliveries go out, so its URL is not known yet).  A delivery goes to the capture of
the upstream whose config named its webhook.  Other traffic through the push proxy is left to
the save addon, which records it only with `a2a_all`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http

from recorder._background import url_key
from recorder.protocol import PUSH_DELIVERY, parse_json
from recorder.record._flows import to_request, to_response
from recorder.record._push import (
    PUSH_CONFIG_OPERATIONS,
    RELAY_PREFIX,
    PushRelay,
    config_root,
    webhook_urls,
)
from recorder.record._state import FlowState, is_reverse, mode_spec, own_origin, state_of

_RELAY_UNKNOWN = b'{"error":"unknown a2a-recorder push relay path"}'


class PushAddon:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_push"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.relay = PushRelay()
        self.webhook_paths: tuple[str, ...] = ()  # set from the classifier's option
        # The push proxy's mode spec (`regular@127.0.0.1:8081`), and the upstream a capture
        # opened by one of its deliveries names in its header.
        self.push_proxy_mode: str | None = None
        self.push_upstream: str | None = None
        # Webhook URLs seen in push configs (`url_key`) -> the upstream whose config named them.
        self._webhooks: dict[str, str] = {}

    def configure(self, updated: set[str]) -> None:
        if "a2a_webhook_paths" in updated:  # declared (and checked) by the classifier
            self.webhook_paths = tuple(ctx.options.a2a_webhook_paths)

    # -- hooks --------------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if state is None:
            return
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
            state.notes.append("push relay: relay URL replaced by the webhook's")
            state.response = to_response(flow.response)[0]  # what the client got

    # -- shared ---------------------------------------------------------------------------------

    def learn(self, document: Any, root: tuple[str, ...], upstream: str) -> None:
        """Remember the webhook URLs a push-config request names, and whose config it is."""
        for url in webhook_urls(document, root):
            self._webhooks.setdefault(url_key(url), upstream)

    # -- request side -------------------------------------------------------------------------

    def _via_push_proxy(self, flow: http.HTTPFlow) -> bool:
        return self.push_proxy_mode is not None and mode_spec(flow) == self.push_proxy_mode

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
            state.notes.append("push relay: webhook URL replaced by the recorder's")
