"""The operation tables, checked against the SDK's real descriptors and by hand."""

from __future__ import annotations

import re

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.types import a2a_pb2
from google.api import annotations_pb2

from recorder.protocol import (
    OPERATION_NAMES,
    OPERATIONS,
    Capability,
    Operation,
    Version,
    match_route,
    match_routes,
    operation,
    operation_by_grpc_path,
    operation_by_jsonrpc_method,
    route_for,
)
from recorder.protocol._grpc import draft_methods

DESCRIPTORS = {
    Version.V1_0: a2a_pb2.DESCRIPTOR.services_by_name["A2AService"],
    Version.V0_3: a2a_v0_3_pb2.DESCRIPTOR.services_by_name["A2AService"],
}
SAMPLE = {"tenant": "acme", "task_id": "t-1", "config_id": "c-1"}


def _row_id(op: Operation) -> str:
    return f"{op.version}-{op.name}"


ROWS = [pytest.param(op, id=_row_id(op)) for op in OPERATIONS]
# The rows the proto defines (every rpc); the others are names real agents use besides.
PROTO_ROWS = [pytest.param(op, id=_row_id(op)) for op in OPERATIONS if op.grpc_rpc]
ROUTES = [
    pytest.param(op, route, id=f"{_row_id(op)}-{route.verb} {route.template}")
    for op in OPERATIONS
    for route in op.routes
]


# ---- the table against the SDK's protobuf descriptors ----


@pytest.mark.parametrize("op", PROTO_ROWS)
def test_row_matches_descriptor(op: Operation) -> None:
    method = DESCRIPTORS[op.version].methods_by_name[op.grpc_rpc]
    assert op.grpc_path == f"/{DESCRIPTORS[op.version].full_name}/{op.grpc_rpc}"
    assert method.input_type.full_name == op.request_type
    assert method.output_type.full_name == op.response_type
    assert method.server_streaming == op.streaming


@pytest.mark.parametrize("version", list(DESCRIPTORS))
def test_every_descriptor_rpc_has_a_row(version: Version) -> None:
    rpcs = {m.name for m in DESCRIPTORS[version].methods}
    rows = {op.grpc_rpc for op in OPERATIONS if op.version is version and op.grpc_rpc}
    assert rows == rpcs


def test_rows_without_a_proto_are_the_known_extras() -> None:
    """Go's v0.3 REST ListTasks and the 0.1 dialect: no rpc, no proto type, nothing else."""
    extras = [op for op in OPERATIONS if not op.grpc_rpc]
    assert [(op.version, op.name) for op in extras if op.version is not Version.V0_1] == [
        (Version.V0_3, "ListTasks")
    ]
    assert all(op.request_type == op.response_type == "" for op in extras)
    assert all(not op.routes for op in extras if op.version is Version.V0_1)
    assert all(op.grpc_path == "" for op in extras)


def _proto_routes(op: Operation) -> set[tuple[str, str]]:
    rule = DESCRIPTORS[op.version].methods_by_name[op.grpc_rpc].GetOptions()
    http = rule.Extensions[annotations_pb2.http]
    found = set()
    for binding in (http, *http.additional_bindings):
        verb = binding.WhichOneof("pattern")
        found.add((verb.upper(), _shape(getattr(binding, verb))))
    return found


def _shape(template: str) -> str:
    return re.sub(r"\{[^}]*\}", "*", template)


@pytest.mark.parametrize(
    "op", [p for p, op in zip(ROWS, OPERATIONS, strict=True) if op.version is Version.V1_0]
)
def test_v1_routes_cover_the_proto_http_rules(op: Operation) -> None:
    ours = {(r.verb, _shape(r.template)) for r in op.routes}
    assert _proto_routes(op) <= ours


def test_v1_rows_are_the_v1_rpcs_and_methods() -> None:
    v1 = [op for op in OPERATIONS if op.version is Version.V1_0]
    assert [op.name for op in v1] == [op.jsonrpc_method for op in v1]
    assert [op.name for op in v1] == [op.grpc_rpc for op in v1]
    assert len(OPERATION_NAMES) == 11


# ---- every route of every row matches back to its row ----


@pytest.mark.parametrize(("op", "route"), ROUTES)
def test_each_route_matches_its_row(op: Operation, route: object) -> None:
    from recorder.protocol import Route

    assert isinstance(route, Route)
    wanted = {k: v for k, v in SAMPLE.items() if "{" + k + "}" in route.template}
    found = match_route(route.verb, route.expand(**wanted))
    assert found is not None
    assert (found.operation, found.route) == (op, route)
    assert dict(found.params) == wanted


@pytest.mark.parametrize("op", ROWS)
def test_lookups_by_jsonrpc_method_and_grpc_path(op: Operation) -> None:
    if op.jsonrpc_method:
        assert operation_by_jsonrpc_method(op.jsonrpc_method, op.version) is op
    if op.grpc_rpc:
        assert operation_by_grpc_path(op.grpc_path) is op
    assert operation(op.name, op.version) is op


# ---- hand-written expectations, not derived from the table ----

LITERAL_ROUTES = [
    ("POST", "/message:send", "SendMessage", Version.V1_0, {}),
    ("POST", "/acme/message:stream", "SendStreamingMessage", Version.V1_0, {"tenant": "acme"}),
    ("GET", "/tasks/abc", "GetTask", Version.V1_0, {"task_id": "abc"}),
    ("GET", "/tasks", "ListTasks", Version.V1_0, {}),
    ("GET", "/acme/tasks", "ListTasks", Version.V1_0, {"tenant": "acme"}),
    ("POST", "/tasks/abc:cancel", "CancelTask", Version.V1_0, {"task_id": "abc"}),
    ("GET", "/tasks/abc:subscribe", "SubscribeToTask", Version.V1_0, {"task_id": "abc"}),
    ("POST", "/tasks/abc:subscribe", "SubscribeToTask", Version.V1_0, {"task_id": "abc"}),
    ("POST", "/tasks/abc/pushNotificationConfigs", "CreateTaskPushNotificationConfig",
     Version.V1_0, {"task_id": "abc"}),
    ("GET", "/t1/tasks/abc/pushNotificationConfigs/c9", "GetTaskPushNotificationConfig",
     Version.V1_0, {"tenant": "t1", "task_id": "abc", "config_id": "c9"}),
    ("GET", "/tasks/abc/pushNotificationConfigs", "ListTaskPushNotificationConfigs",
     Version.V1_0, {"task_id": "abc"}),
    ("DELETE", "/tasks/abc/pushNotificationConfigs/c9", "DeleteTaskPushNotificationConfig",
     Version.V1_0, {"task_id": "abc", "config_id": "c9"}),
    ("GET", "/extendedAgentCard", "GetExtendedAgentCard", Version.V1_0, {}),
    ("POST", "/v1/message:send", "SendMessage", Version.V0_3, {}),
    ("GET", "/v1/tasks/abc", "GetTask", Version.V0_3, {"task_id": "abc"}),
    ("GET", "/v1/tasks/abc:subscribe", "SubscribeToTask", Version.V0_3, {"task_id": "abc"}),
    ("POST", "/v1/tasks/abc:subscribe", "SubscribeToTask", Version.V0_3, {"task_id": "abc"}),
    ("DELETE", "/v1/tasks/abc/pushNotificationConfigs/c9", "DeleteTaskPushNotificationConfig",
     Version.V0_3, {"task_id": "abc", "config_id": "c9"}),
    ("GET", "/v1/card", "GetExtendedAgentCard", Version.V0_3, {}),
    ("GET", "/tasks/a%2Fb", "GetTask", Version.V1_0, {"task_id": "a/b"}),
]  # fmt: skip


@pytest.mark.parametrize(("verb", "path", "name", "version", "params"), LITERAL_ROUTES)
def test_literal_routes(
    verb: str, path: str, name: str, version: Version, params: dict[str, str]
) -> None:
    found = match_route(verb, path)
    assert found is not None
    assert (found.operation.name, found.operation.version) == (name, version)
    assert dict(found.params) == params


@pytest.mark.parametrize(
    ("verb", "path"),
    [
        ("GET", "/message:send"),
        ("PUT", "/tasks/abc"),
        ("GET", "/tasks/"),
        ("GET", "/favicon.ico"),
        ("DELETE", "/tasks/abc/pushNotificationConfigs"),
    ],
)
def test_no_route(verb: str, path: str) -> None:
    assert match_route(verb, path) is None


def test_more_specific_route_first() -> None:
    # `/v1/tasks/x` is v0.3 GetTask and also v1.0 GetTask under tenant "v1".
    names = [
        (m.operation.version, m.params.get("tenant")) for m in match_routes("GET", "/v1/tasks/x")
    ]
    assert names == [(Version.V0_3, None), (Version.V1_0, "v1")]


def test_v03_list_tasks_is_gos_rest_route_only() -> None:
    # The v0.3 spec has no ListTasks; Go's v0.3 compat serves `GET /v1/tasks`, and that route
    # is more specific than v1.0 ListTasks under a tenant called "v1".
    found = [(m.operation.version, dict(m.params)) for m in match_routes("GET", "/v1/tasks")]
    assert found == [(Version.V0_3, {}), (Version.V1_0, {"tenant": "v1"})]
    row = operation("ListTasks", Version.V0_3)
    assert row is not None and (row.jsonrpc_method, row.grpc_rpc) == ("", "")
    # a2a-java's draft rpc of that name on v0.3's service is the row's alias (the next test).
    assert row.grpc_paths == ("/a2a.v1.A2AService/ListTasks",)


def test_grpc_aliases_are_the_draft_rpcs_v03s_service_lacks() -> None:
    """a2a-java 1.0.0.Alpha3 serves a draft of v1.0 as `a2a.v1.A2AService`: each of its rpcs
    that v0.3's service has not is the v0.3 row of the v1.0 rpc of that name."""
    v03 = DESCRIPTORS[Version.V0_3]
    lacking = {
        m.name
        for path, m in draft_methods().items()
        if m.service == v03.full_name and m.name not in v03.methods_by_name
    }
    aliases = {(op.name, op.version, rpc) for op in OPERATIONS for rpc in op.grpc_aliases}
    assert aliases == {(name, Version.V0_3, name) for name in lacking}
    assert lacking == {"ListTasks", "SubscribeToTask", "GetExtendedAgentCard"}
    for name in lacking:
        found = operation_by_grpc_path(f"/{v03.full_name}/{name}")
        assert found is operation(name, Version.V0_3)
        assert (
            found is not None
            and found.streaming == draft_methods()[f"/{v03.full_name}/{name}"].server_streaming
        )


@pytest.mark.parametrize(
    ("method", "name", "version"),
    [
        # A2A v0.1.0 (specification/json/a2a.json at tag v0.1.0), still served by v0.2-era agents
        ("tasks/send", "SendMessage", Version.V0_1),
        ("tasks/sendSubscribe", "SendStreamingMessage", Version.V0_1),
        ("tasks/pushNotification/set", "CreateTaskPushNotificationConfig", Version.V0_1),
        ("tasks/pushNotification/get", "GetTaskPushNotificationConfig", Version.V0_1),
        ("tasks/list", "ListTasks", Version.V0_1),  # fasta2a
        # shared with v0.3: the newest dialect's without a card
        ("tasks/get", "GetTask", Version.V0_3),
        ("tasks/cancel", "CancelTask", Version.V0_3),
        ("tasks/resubscribe", "SubscribeToTask", Version.V0_3),
        # a2a-dotnet `A2AMethods.ListTaskPushNotificationConfig` (v1.0, singular)
        ("ListTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", Version.V1_0),
    ],
)
def test_names_real_agents_use(method: str, name: str, version: Version) -> None:
    found = operation_by_jsonrpc_method(method)
    assert found is not None
    assert (found.name, found.version) == (name, version)
    assert method in found.jsonrpc_methods


def test_shared_name_takes_the_dialect_asked_for() -> None:
    v01 = operation_by_jsonrpc_method("tasks/get", Version.V0_1)
    assert v01 is not None and (v01.version, v01.grpc_rpc) == (Version.V0_1, "")
    # A dialect without that name falls back to the newest that has it.
    v1 = operation_by_jsonrpc_method("tasks/get", Version.V1_0)
    assert v1 is not None and v1.version is Version.V0_3


def test_java_list_route_with_a_trailing_slash() -> None:
    # a2a-java RestTransport: "Use trailing slash to distinguish GET from LIST".
    found = match_route("GET", "/acme/tasks/t-1/pushNotificationConfigs/")
    assert found is not None
    assert (found.operation.name, found.operation.version) == (
        "ListTaskPushNotificationConfigs",
        Version.V1_0,
    )
    assert dict(found.params) == {"tenant": "acme", "task_id": "t-1"}
    assert route_for("ListTaskPushNotificationConfigs", task_id="t") == (
        "GET",
        "/tasks/t/pushNotificationConfigs",
    )  # what we send ourselves stays the spec's form


@pytest.mark.parametrize(
    ("name", "version", "kwargs", "expected"),
    [
        ("SendMessage", Version.V1_0, {}, ("POST", "/message:send")),
        ("SendMessage", Version.V1_0, {"tenant": "acme"}, ("POST", "/acme/message:send")),
        ("SubscribeToTask", Version.V1_0, {"task_id": "t"}, ("POST", "/tasks/t:subscribe")),
        ("GetTaskPushNotificationConfig", Version.V1_0,
         {"task_id": "t", "config_id": "c/1", "tenant": "x"},
         ("GET", "/x/tasks/t/pushNotificationConfigs/c%2F1")),
        ("GetExtendedAgentCard", Version.V0_3, {}, ("GET", "/v1/card")),
        ("CancelTask", Version.V0_3, {"task_id": "t"}, ("POST", "/v1/tasks/t:cancel")),
        ("CancelTask", Version.V0_3, {"task_id": "t", "tenant": "x"}, None),
        ("ListTasks", Version.V0_3, {}, ("GET", "/v1/tasks")),
        ("ListTasks", Version.V0_1, {}, None),
    ],
)  # fmt: skip
def test_route_for(name: str, version: Version, kwargs: dict[str, str], expected: object) -> None:
    assert route_for(name, version, **kwargs) == expected


def test_route_for_missing_id_raises_key_error() -> None:
    with pytest.raises(KeyError):
        route_for("GetTask")


@pytest.mark.parametrize(
    ("name", "capability", "streaming"),
    [
        ("SendMessage", None, False),
        ("SendStreamingMessage", Capability.STREAMING, True),
        ("GetTask", None, False),
        ("ListTasks", None, False),
        ("CancelTask", None, False),
        ("SubscribeToTask", Capability.STREAMING, True),
        ("CreateTaskPushNotificationConfig", Capability.PUSH_NOTIFICATIONS, False),
        ("GetTaskPushNotificationConfig", Capability.PUSH_NOTIFICATIONS, False),
        ("ListTaskPushNotificationConfigs", Capability.PUSH_NOTIFICATIONS, False),
        ("DeleteTaskPushNotificationConfig", Capability.PUSH_NOTIFICATIONS, False),
        ("GetExtendedAgentCard", Capability.EXTENDED_AGENT_CARD, False),
    ],
)
def test_capabilities(name: str, capability: Capability | None, streaming: bool) -> None:
    rows = [op for op in OPERATIONS if op.name == name]
    assert rows
    assert {(op.capability, op.streaming) for op in rows} == {(capability, streaming)}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("message/send", "/a2a.v1.A2AService/SendMessage"),
        ("tasks/resubscribe", "/a2a.v1.A2AService/TaskSubscription"),
        ("tasks/pushNotificationConfig/list", "/a2a.v1.A2AService/ListTaskPushNotificationConfig"),
        ("agent/getAuthenticatedExtendedCard", "/a2a.v1.A2AService/GetAgentCard"),
        ("ListTaskPushNotificationConfigs",
         "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs"),
    ],
)  # fmt: skip
def test_v03_names(method: str, path: str) -> None:
    by_method = operation_by_jsonrpc_method(method)
    assert by_method is not None
    assert by_method is operation_by_grpc_path(path)


def test_public_exports() -> None:
    import recorder.protocol as protocol

    required = {
        "classify", "Interface", "interfaces_from_card", "SseFramer", "event_data", "event_type",
        "render_events", "OPERATIONS", "ERRORS", "route_for", "error_by_name", "Binding",
        "Classification", "Version", "AGENT_CARD", "PUSH_DELIVERY",
    }  # fmt: skip
    assert required <= set(protocol.__all__)
    assert len(set(protocol.__all__)) == len(protocol.__all__)
    for name in protocol.__all__:
        assert hasattr(protocol, name), name
