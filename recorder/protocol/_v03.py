"""What changed on the wire between A2A v0.3 and v1.0, as data, for `recorder.versions`.

Operation names derive from `OPERATIONS` instead.  v0.3 has two JSON dialects, the JSON-RPC
schema and the proto-JSON of HTTP+JSON and gRPC; the `V03_PROTO_*` tables are the second's.
Sources: a2a-wire.md §2, §3, §6, §7; spec §4 and Appendix A; the shipped descriptors.
"""

from __future__ import annotations

from collections.abc import Mapping

from recorder.protocol._states import STATE_ALIASES, TASK_STATES

# Enum forms, v0.3 JSON -> v1.0 proto-JSON name (spec §4.1.3 TaskState, §4.1.5 Role).
V03_TASK_STATES: Mapping[str, str] = {
    **{row.v03: row.name for row in TASK_STATES},
    **STATE_ALIASES,
}
V03_ROLES: Mapping[str, str] = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
# Parts: v1.0 drops `kind`, and a file part's nested `file` becomes fields under new names.
V03_FILE_FIELDS: Mapping[str, str] = {
    "bytes": "raw",
    "uri": "url",
    "mimeType": "mediaType",
    "name": "filename",
}
V03_PUSH_CONFIG_PARAMS: Mapping[str, str] = {"id": "taskId", "pushNotificationConfigId": "id"}
V03_SEND_CONFIG_RENAMES: Mapping[str, str] = {
    "pushNotificationConfig": "taskPushNotificationConfig"
}
# Legacy card fields folded into `supportedInterfaces`.
V03_CARD_LEGACY_FIELDS = ("url", "preferredTransport", "additionalInterfaces", "protocolVersion")
V03_CARD_EXTENDED_FLAG = ("supportsAuthenticatedExtendedCard", "capabilities.extendedAgentCard")
# v0.3 security schemes carry a `type` (and apiKey's `in`); v1.0 wraps each in a oneof member.
V03_SECURITY_SCHEME_MEMBERS: Mapping[str, str] = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
V03_SECURITY_SCHEME_FIELDS: Mapping[str, str] = {"in": "location"}
# Header names (a2a-wire.md §3).
V03_HEADER_RENAMES: Mapping[str, str] = {"x-a2a-extensions": "a2a-extensions"}
# v1.0 HTTP+JSON answers are `application/a2a+json` (spec §11.1, v1.0.1); v0.3's were JSON.
V03_CONTENT_TYPES: Mapping[str, str] = {"application/json": "application/a2a+json"}
# The version header every v1.0 request carries (spec §3.6); a v0.3 request has none.
VERSION_HEADER = "A2A-Version"

# ---- the v0.3 proto-JSON dialect (HTTP+JSON and gRPC) -----------------------------------------

# A file part is `{"file": {"fileWithUri"|"fileWithBytes", ...}}`, a data part `{"data": {"data"}}`.
V03_PROTO_FILE_FIELDS: Mapping[str, str] = {
    "fileWithBytes": "raw",
    "fileWithUri": "url",
    "mimeType": "mediaType",
    "name": "filename",
}
# v1.0 state -> its v0.3 proto-JSON spelling, where the two differ (the double L).
V03_PROTO_STATES: Mapping[str, str] = {new: old for old, new in STATE_ALIASES.items()}
# The send configuration's push config member, as the v0.3 proto names it.
V03_PROTO_SEND_CONFIG_RENAMES: Mapping[str, str] = {
    "pushNotification": "taskPushNotificationConfig"
}
