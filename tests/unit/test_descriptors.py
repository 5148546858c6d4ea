"""The shipped descriptor set: a faithful copy of a2a-sdk 1.3.0's, in a pool of its own.

- the set equals what `scripts/descriptors` would write from the installed a2a-sdk 1.3.0;
- the codec's private pool and a2a-sdk's default pool live side by side, whichever is
  imported first, and with a2a-sdk 0.3.26 (whose own `a2a.proto` is the v0.3 file);
- decoding with our pool gives the same proto-JSON as a2a-sdk's own classes, for every gRPC
  message in the corpus of real captures.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.types import a2a_pb2
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from recorder.capture import read_capture
from recorder.protocol import Binding
from recorder.protocol._grpc import (
    DESCRIPTOR_FILES,
    a2a_pool,
    decode_as,
    descriptor_manifest,
    descriptor_source,
    encode_message,
    message_class,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "recorder" / "protocol" / "descriptors"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader(
        "descriptors_script", str(ROOT / "scripts" / "descriptors")
    )
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _files(data: bytes) -> dict[str, bytes]:
    """File name -> that file's exact serialized bytes in the set."""
    raw = _script().split_set(data)
    names = [f.name for f in descriptor_pb2.FileDescriptorSet.FromString(data).file]
    return dict(zip(names, raw, strict=True))


def test_the_a2a_files_are_a2a_sdk_1_3_0s_own_bytes() -> None:
    script = _script()
    assert importlib.metadata.version("a2a-sdk") == "1.3.0"
    fresh, manifest = script.collect()
    shipped = _files((SHIPPED / "a2a.binpb").read_bytes())
    assert list(shipped) == list(_files(fresh))  # the same files, in the same order
    assert shipped["a2a.proto"] == a2a_pb2.DESCRIPTOR.serialized_pb
    assert shipped["a2a_v0_3.proto"] == a2a_v0_3_pb2.DESCRIPTOR.serialized_pb
    assert json.loads((SHIPPED / "a2a.json").read_text())["source"] == manifest["source"]


def test_every_file_equals_the_installed_one_when_the_providers_are_the_same() -> None:
    """The google.* files come from protobuf and googleapis-common-protos, not from a2a-sdk.

    Byte-for-byte when the installed versions are those the manifest names; a newer
    googleapis-common-protos may add options, which `scripts/descriptors` would pick up.
    """
    script = _script()
    fresh, manifest = script.collect()
    if manifest != descriptor_manifest():
        pytest.skip(
            "installed protobuf / googleapis-common-protos differ from the manifest's: "
            "run scripts/descriptors to refresh"
        )
    assert (SHIPPED / "a2a.binpb").read_bytes() == fresh
    assert (SHIPPED / "a2a.json").read_text() == script.manifest_text(manifest)


def test_the_pool_is_private_and_holds_both_services() -> None:
    assert a2a_pool() is not descriptor_pool.Default()
    services = {
        s.full_name
        for name in DESCRIPTOR_FILES
        for s in a2a_pool().FindFileByName(name).services_by_name.values()
    }
    assert services == {"lf.a2a.v1.A2AService", "a2a.v1.A2AService"}
    cls = message_class("lf.a2a.v1.Task")
    assert cls is not None and cls is not a2a_pb2.Task
    assert "a2a-sdk 1.3.0" in descriptor_source()


# --- same proto-JSON as the SDK ----------------------------------------------------------------

SDK_MODULES = (a2a_pb2, a2a_v0_3_pb2)


def _sdk_class(type_name: str) -> Any:
    descriptor = descriptor_pool.Default().FindMessageTypeByName(type_name)
    return message_factory.GetMessageClass(descriptor)


def _corpus_messages() -> list[tuple[str, str]]:
    """(type name, proto-JSON) of every decoded gRPC message in the corpus (both SDK lines)."""
    found: dict[tuple[str, str], None] = {}
    for path in sorted((ROOT / "captures").glob("*/grpc/*.http")):
        for exchange in read_capture(path).exchanges:
            if exchange.classification.binding is not Binding.GRPC:
                continue
            sides = [exchange.request, *([exchange.response] if exchange.response else [])]
            for side in sides:
                for m in side.messages:
                    if m.json is not None and m.type_name is not None:
                        found[(m.type_name, m.json)] = None
    return list(found)


CORPUS = _corpus_messages()


def test_the_corpus_has_messages_of_both_versions() -> None:
    names = {name for name, _ in CORPUS}
    assert any(n.startswith("lf.a2a.v1.") for n in names)
    assert any(n.startswith("a2a.v1.") for n in names)
    assert len(CORPUS) > 50


@pytest.mark.parametrize(
    ("type_name", "text"), CORPUS, ids=[f"{i}-{name}" for i, (name, _) in enumerate(CORPUS)]
)
def test_our_codec_and_the_sdk_agree_on_real_messages(type_name: str, text: str) -> None:
    sdk_message = json_format.Parse(text, _sdk_class(type_name)())
    ours = encode_message(type_name, text)
    assert ours == sdk_message.SerializeToString()
    decoded = decode_as(type_name, sdk_message.SerializeToString())
    assert decoded is not None
    assert json.loads(decoded[1]) == json_format.MessageToDict(sdk_message)


# --- import order and other SDK versions, each in a fresh interpreter -------------------------

PROBE = """
import json, sys
def ours():
    from recorder.protocol._grpc import decode_as, encode_message
    data = encode_message("lf.a2a.v1.Task", TASK)
    old = encode_message("a2a.v1.Task", OLD_TASK)
    return decode_as("lf.a2a.v1.Task", data)[1], decode_as("a2a.v1.Task", old)[1], data, old
def sdk():
    from google.protobuf import descriptor_pool, json_format
    {sdk_imports}
    return descriptor_pool.Default().FindFileByName("a2a.proto").package
TASK = ('{{"id":"t","status":{{"state":"TASK_STATE_COMPLETED",'
        '"timestamp":"2024-01-01T00:00:00Z"}},"metadata":{{"k":[1,"x"]}}}}')
OLD_TASK = '{{"id":"t","contextId":"c","status":{{"state":"TASK_STATE_WORKING"}}}}'
if sys.argv[1] == "ours-first":
    first = ours(); package = sdk(); second = ours()
else:
    package = sdk(); first = ours(); second = ours()
print(json.dumps({{"package": package, "same": first == second,
                  "task": json.loads(first[0]), "old": json.loads(first[1])}}))
"""

V1_IMPORTS = (
    "import a2a.client; from a2a.types import a2a_pb2; from a2a.compat.v0_3 import a2a_v0_3_pb2"
)
V03_IMPORTS = "import a2a.client; from a2a.grpc import a2a_pb2"


def _probe(python: Path | str, order: str, sdk_imports: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [str(python), "-c", PROBE.format(sdk_imports=sdk_imports), order],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


EXPECTED_TASK = {
    "id": "t",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2024-01-01T00:00:00Z"},
    "metadata": {"k": [1.0, "x"]},
}


@pytest.mark.parametrize("order", ["ours-first", "sdk-first"])
def test_either_import_order_works_with_a2a_sdk_1_3_0(order: str) -> None:
    result = _probe(sys.executable, order, V1_IMPORTS)
    assert result["package"] == "lf.a2a.v1"  # the SDK's own file, untouched in its pool
    assert result["same"]
    assert result["task"] == EXPECTED_TASK
    assert result["old"]["status"] == {"state": "TASK_STATE_WORKING"}


def _peer_python(version: str) -> Path:
    peers = Path(os.environ.get("A2A_PEERS_DIR", ROOT / ".peers"))
    python = peers / f"py-{version}" / "bin" / "python"
    if not python.exists():
        pytest.skip(f"{python} is not built (scripts/peers/envs.py)")
    return python


@pytest.mark.parametrize("order", ["ours-first", "sdk-first"])
def test_a2a_sdk_0_3_registers_its_own_a2a_proto_beside_ours(order: str) -> None:
    """a2a-sdk 0.3.26 calls its v0.3 file `a2a.proto` too: both must load, in either order."""
    result = _probe(_peer_python("0.3.26"), order, V03_IMPORTS)
    assert result["package"] == "a2a.v1"
    assert result["same"]
    assert result["task"] == EXPECTED_TASK
