"""The lint rules, as data: what each rule asks, how strongly, where the spec says it.

One `Rule` row per requirement, in report order; the engine knows no rule by name.  v1.0 rules
do not judge a v0.3 exchange, whose agent could not know them, except where a rule holds in
both.  Each summary is our wording of the spec text.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from recorder.lint import _bodychecks as body
from recorder.lint import _cardchecks as card
from recorder.lint import _checks as wire
from recorder.lint._view import ExchangeView, Session, Violation
from recorder.protocol import BOTH_SPECS, Binding, Severity, SpecVersion, Version

Check = Callable[[ExchangeView, Session, SpecVersion], Iterable[Violation]]

GUIDE = "guide"  # a rule from the takeaways of the A2A guide (its HTTP+JSON section), not the spec


@dataclass(frozen=True, slots=True)
class Level:
    """How strongly, and where, one spec version states a rule."""

    severity: Severity
    section: str


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    summary: str
    check: Check = field(repr=False)
    levels: Mapping[SpecVersion, Level]
    bindings: frozenset[Binding] | None = None  # None: any binding
    speaks: frozenset[Version] = frozenset({Version.V1_0})
    source: str = "spec"
    answer: bool = False  # judges the binding's answer, not an HTTP auth challenge (RFC 9110)

    def level(self, spec: SpecVersion) -> Level | None:
        return self.levels.get(spec)

    def citation(self, spec: SpecVersion) -> str:
        """Where the rule is written: `A2A 1.0.1 §11.1`, or the guide's section."""
        level = self.levels.get(spec)
        section = level.section if level else "?"
        return f"guide: {section}" if self.source == GUIDE else f"A2A {spec.value} {section}"

    def applies(self, view: ExchangeView, spec: SpecVersion) -> bool:
        if spec not in self.levels or view.speaks not in self.speaks:
            return False
        if self.answer and view.auth_challenge:  # the HTTP layer's, not the binding's
            return False
        return self.bindings is None or view.binding in self.bindings


def _all(severity: Severity, section: str) -> Mapping[SpecVersion, Level]:
    return {spec: Level(severity, section) for spec in BOTH_SPECS}


def _only(spec: SpecVersion, severity: Severity, section: str) -> Mapping[SpecVersion, Level]:
    return {spec: Level(severity, section)}


MUST, SHOULD = Severity.MUST, Severity.SHOULD
_V1_0_1 = SpecVersion.V1_0_1
_JR, _HJ, _GR, _HTTP = Binding.JSONRPC, Binding.HTTP_JSON, Binding.GRPC, Binding.HTTP
_BOTH_VERSIONS = frozenset({Version.V1_0, Version.V0_3})
_JSON_BINDINGS = frozenset({_JR, _HJ, _HTTP})

RULES: tuple[Rule, ...] = (
    # ---- content types ----
    Rule("content-type.request",
         "Request bodies are typed: JSON-RPC application/json; HTTP+JSON and push deliveries "
         "application/a2a+json (v1.0.0: application/json).",
         wire.request_media_type, _all(SHOULD, "§9.1, §11.1, §4.3.3"), _JSON_BINDINGS),
    Rule("content-type.response",
         "Response bodies are typed as request bodies are, errors included; streams are "
         "text/event-stream.",
         wire.response_media_type, _all(SHOULD, "§9.1, §11.1, §9.4.2, §11.7"),
         frozenset({_JR, _HJ}), answer=True),
    # ---- versions ----
    Rule("version.header",
         "A v1.0 client sends A2A-Version on every request (only 0.3 clients may omit it).",
         wire.version_sent, _all(MUST, "§3.6.1")),
    Rule("version.format", "A2A-Version is Major.Minor, without a patch number.",
         wire.version_form, _all(MUST, "§14.2.1, §3.6"), speaks=_BOTH_VERSIONS),
    Rule("version.names",
         "A request is processed in the version it asks for, so its names are that version's.",
         wire.version_names, _all(MUST, "§3.6.2"), speaks=_BOTH_VERSIONS),
    Rule("version.unsupported",
         "A version the interface does not declare (an empty one means 0.3) is answered with "
         "VersionNotSupportedError; a declared one is served.",
         wire.version_unsupported, _all(MUST, "§3.6.2"), speaks=_BOTH_VERSIONS),
    Rule("card.declares-binding", "The agent card declares every binding the agent serves.",
         wire.declares_binding, _all(MUST, "§5.2"), speaks=_BOTH_VERSIONS),
    # ---- JSON-RPC ----
    Rule("jsonrpc.request",
         'A JSON-RPC request is a JSON-RPC 2.0 object: "jsonrpc": "2.0", an id, object params.',
         wire.jsonrpc_request, _all(MUST, "§9.3"), frozenset({_JR}), _BOTH_VERSIONS),
    Rule("jsonrpc.response",
         "Every JSON-RPC response, and every event of a JSON-RPC stream, is a JSON-RPC 2.0 "
         "response with the request's id and one of result or error.",
         wire.jsonrpc_response, _all(MUST, "§9.3, §9.4.2"), frozenset({_JR}), _BOTH_VERSIONS,
         answer=True),
    # ---- errors ----
    Rule("error.jsonrpc",
         "A JSON-RPC error has an integer code, a message, and data as an array of objects "
         "each with @type.",
         wire.jsonrpc_error, _all(MUST, "§9.5, §3.3.2"), frozenset({_JR}), answer=True),
    Rule("error.http-json",
         "An HTTP+JSON error is a google.rpc.Status under `error`: code equal to the HTTP "
         "status, a message, details as objects with @type.",
         wire.http_json_error, _all(MUST, "§11.6, §3.3.2"), frozenset({_HJ}), answer=True),
    Rule("error.grpc",
         "A gRPC error has a message, and grpc-status-details-bin is a google.rpc.Status with "
         "the same code.",
         wire.grpc_error, _all(MUST, "§10.6, §3.3.2"), frozenset({_GR})),
    Rule("error.errorinfo",
         "An A2A error over HTTP+JSON or gRPC carries a google.rpc.ErrorInfo with the error's "
         "reason and domain a2a-protocol.org.",
         wire.error_info, _all(MUST, "§11.6, §10.6"), frozenset({_HJ, _GR}), answer=True),
    Rule("error.jsonrpc-errorinfo",
         "An A2A error over JSON-RPC carries a google.rpc.ErrorInfo in data (v1.0.0: MUST; "
         "v1.0.1: SHOULD), with the reason its code names.",
         wire.error_info,
         {SpecVersion.V1_0_0: Level(MUST, "§9.5"), SpecVersion.V1_0_1: Level(SHOULD, "§9.5")},
         frozenset({_JR}), answer=True),
    Rule("error.mapping",
         "An A2A error uses its HTTP status and gRPC status from the mapping table of the spec "
         "version (v1.0.0 and v1.0.1 differ for five errors).",
         wire.error_mapping, _all(MUST, "§5.4"), frozenset({_HJ, _GR}), answer=True),
    # ---- names, enums, fields ----
    Rule("names.enums",
         "Enum values are written as the enum's names for the version spoken (v1.0 "
         "TASK_STATE_COMPLETED, ROLE_USER; v0.3 JSON-RPC completed, user).",
         body.enums, _all(MUST, "§5.5"), speaks=_BOTH_VERSIONS),
    Rule("names.camel-case",
         "JSON field names and query parameters are the camelCase JSON names.",
         body.camel_case, _all(MUST, "§5.5, §11.5")),
    Rule("names.legacy",
         "A v1.0 exchange uses only v1.0 names: no v0.3 fields such as kind, final or the "
         "card's url and preferredTransport.",
         body.legacy_names, _all(SHOULD, "Appendix A.2")),
    Rule("fields.required",
         "Task, Message, the StreamResponse variants and the agent card (and what they hold) "
         "set every REQUIRED field; required lists are not empty.",
         body.required, _all(MUST, "§5.7")),
    Rule("fields.oneof",
         "A oneof holds at most one member; a StreamResponse or SendMessageResponse exactly one.",
         body.oneof, _all(MUST, "§3.2.3, §4.3.3, §5.7")),
    # ---- streams ----
    Rule("stream.first-event",
         "A stream begins with a Task or a Message; a SubscribeToTask stream with the Task.",
         body.first_event, _all(MUST, "§3.1.2, §3.1.6")),
    Rule("stream.message-only", "A stream that begins with a Message holds nothing else.",
         body.message_only, _all(MUST, "§3.1.2")),
    Rule("stream.after-terminal",
         "A task stream closes at a terminal state (one final Task snapshot may follow).",
         body.after_terminal, _all(MUST, "§3.1.2, §3.1.6, §11.7")),
    Rule("stream.early-close",
         "A task stream stays open until a terminal or interrupted state.",
         body.early_close, _all(SHOULD, "§11.7")),
    # ---- the agent card ----
    Rule("card.interface-url",
         "Each supportedInterfaces entry gives a usable URL (absolute; host:port for gRPC).",
         card.interface_url, _all(MUST, "§8.3.1"), frozenset({_HTTP})),
    Rule("card.binding-name", "A custom protocolBinding is a URI.",
         card.binding_name, _only(_V1_0_1, SHOULD, "§5.8"), frozenset({_HTTP})),
    Rule("card.protocol-version", "An interface's protocolVersion is Major.Minor, no patch.",
         card.protocol_version, _all(SHOULD, "§3.6"), frozenset({_HTTP})),
    Rule("card.cache-control", "The card is served with Cache-Control and a max-age.",
         card.cache_control, _all(SHOULD, "§8.6.1"), frozenset({_HTTP})),
    Rule("card.etag", "The card is served with an ETag.",
         card.etag, _all(SHOULD, "§8.6.1"), frozenset({_HTTP})),
    Rule("card.signature-header",
         "A card signature's protected header is base64url JSON with alg and kid.",
         card.signature_header, _all(MUST, "§8.4.2"), frozenset({_HTTP})),
    Rule("card.signature-typ", "A card signature's protected header says typ JOSE.",
         card.signature_typ, _all(SHOULD, "§8.4.2"), frozenset({_HTTP})),
    Rule("card.signature-verifies",
         "A signature verifies over the card canonicalized as the spec says (given its key).",
         card.signature_verifies, _all(MUST, "§8.4.1, §8.4.3"), frozenset({_HTTP})),
    # ---- push deliveries and tenants ----
    Rule("push.authentication",
         "A push delivery carries Authorization: <scheme> <credentials> as its config's "
         "authentication asked.",
         card.push_authentication, _all(MUST, "§4.3.3, §13.2"), frozenset({_HTTP})),
    Rule("tenant.interface",
         "A request carries exactly the tenant of the interface it uses, and none when the "
         "interface sets none.",
         card.tenant, _only(_V1_0_1, MUST, "§8.3.2")),
    # ---- the guide's takeaways ----
    Rule("guide.subscribe-verb",
         "Clients subscribe with POST; servers accept GET and POST on :subscribe.",
         card.subscribe_verb, _all(SHOULD, "HTTP+JSON, Routes from the proto"),
         frozenset({_HJ}), source=GUIDE),
)  # fmt: skip

RULE_IDS: tuple[str, ...] = tuple(rule.id for rule in RULES)


def select_rules(select: Sequence[str] = (), skip: Sequence[str] = ()) -> tuple[Rule, ...]:
    """The rules `select` names (all when empty) minus those `skip` names, in table order; a
    pattern is an id, a group (`error`) or a glob, and one that names no rule a ValueError."""
    chosen = _matching(select) if select else set(RULE_IDS)
    chosen -= _matching(skip)
    return tuple(r for r in RULES if r.id in chosen)


def _matching(patterns: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for pattern in patterns:
        hits = {
            rid
            for rid in RULE_IDS
            if rid == pattern or rid.startswith(pattern + ".") or fnmatch.fnmatchcase(rid, pattern)
        }
        if not hits:
            raise ValueError(f"no lint rule matches {pattern!r}; rules: {', '.join(RULE_IDS)}")
        found |= hits
    return found
