"""Card signatures made by a real SDK: @a2a-js/sdk 1.3.0's `generateAgentCardSignature`.

A node process signs a card with the SDK (and checks it with the SDK's own verifier); the card
goes into a capture, and `a2a-recorder lint --jwks` must verify it, reject it once edited,
and say which form a signature covers when an agent serves fields it did not sign (the py
SDK's hybrid v0.3 card does exactly that).  Skipped when the JS peer environment is not built.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recorder.capture import (
    Capture,
    Exchange,
    Request,
    Response,
    render,
)
from recorder.cli import main
from recorder.protocol import classify

REPO = Path(__file__).resolve().parents[2]
JS_ENV = Path(os.environ.get("A2A_PEERS_DIR", REPO / ".peers")) / "js-1.3.0"

SIGNER = """
import { createRequire } from 'node:module';
import path from 'node:path';
import crypto from 'node:crypto';
const require = createRequire(path.join(process.env.A2A_PEER_NODE_ENV, 'package.json'));
const sdk = require('@a2a-js/sdk');
const card = JSON.parse(process.argv[2]);
const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const sign = sdk.generateAgentCardSignature(
  privateKey, { alg: 'ES256', typ: 'JOSE', kid: 'js-key' });
const signed = await sign(card);
await sdk.verifyAgentCardSignature(async () => publicKey)(signed);
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'js-key' };
console.log(JSON.stringify({ card: signed, jwks: { keys: [jwk] } }));
"""

CARD = {
    "name": "signed agent", "description": "signed by @a2a-js/sdk", "version": "1.0.0",
    "supportedInterfaces": [{"url": "http://127.0.0.1:9900/a2a/jsonrpc",
                             "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
    "capabilities": {"streaming": True, "pushNotifications": False},
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "echo", "description": "echo", "tags": ["t"]}],
}  # fmt: skip

pytestmark = pytest.mark.skipif(
    not (JS_ENV / "node_modules" / "@a2a-js" / "sdk").is_dir() or shutil.which("node") is None,
    reason=f"the @a2a-js/sdk environment is not built at {JS_ENV} (scripts/peers/envs.py)",
)


@pytest.fixture(scope="module")
def js_signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    script = tmp_path_factory.mktemp("signer") / "sign.mjs"
    script.write_text(SIGNER, encoding="utf-8")
    done = subprocess.run(
        ["node", str(script), json.dumps(CARD)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "A2A_PEER_NODE_ENV": str(JS_ENV)},
        check=True,
    )
    signed: dict[str, Any] = json.loads(done.stdout)
    return signed


def _capture(card: dict[str, Any]) -> str:
    request = Request("GET", "/.well-known/agent-card.json", (("A2A-Version", "1.0"),))
    response = Response(
        200,
        "OK",
        (("Content-Type", "application/json"), ("ETag", 'W/"1"'), ("Cache-Control", "max-age=60")),
        json.dumps(card).encode(),
    )
    exchange = Exchange(
        1, classify(request, response), request, response, notes=("card rewritten",)
    )
    return render(Capture("2026-12-01T00:00:00.000000Z", "0.1.0", (exchange,)))


def _lint(tmp_path: Path, card: dict[str, Any], jwks: dict[str, Any]) -> tuple[int, str]:
    capture, keys = tmp_path / "card.http", tmp_path / "keys.json"
    capture.write_text(_capture(card), encoding="utf-8")
    keys.write_text(json.dumps(jwks), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["lint", str(capture), "--jwks", str(keys), "--select", "card.signature-*"]
    )
    return result.exit_code, result.stdout


def test_a_card_the_js_sdk_signed_verifies(tmp_path: Path, js_signed: dict[str, Any]) -> None:
    code, out = _lint(tmp_path, js_signed["card"], js_signed["jwks"])
    assert (code, out) == (0, "lint (A2A 1.0.1): no findings in 1 file\n")


def test_an_edited_card_does_not(tmp_path: Path, js_signed: dict[str, Any]) -> None:
    edited = {**js_signed["card"], "description": "edited after signing"}
    code, out = _lint(tmp_path, edited, js_signed["jwks"])
    assert code == 1
    assert "MUST card.signature-verifies" in out and "actual:   it does not verify" in out


def test_fields_served_beside_the_signed_card_are_named(
    tmp_path: Path, js_signed: dict[str, Any]
) -> None:
    # What the py SDK serves: the signed v1 card plus v0.3 fields the proto does not know.
    hybrid = {
        **js_signed["card"],
        "url": "http://127.0.0.1:9900/a2a/jsonrpc",
        "protocolVersion": "0.3",
    }
    code, out = _lint(tmp_path, hybrid, js_signed["jwks"])
    assert code == 1
    assert "it verifies only over the card without the fields the proto does not define" in out
