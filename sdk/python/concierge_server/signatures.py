"""Verifying the calls Concierge makes to your server, and signing what you send back."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from datetime import datetime
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

from .errors import HookVerificationError

#: The transcript events' types (README, Transcript events).
TRANSCRIPT_EVENT_TYPES = (
    "conversation.started",
    "turn.created",
    "turn.acknowledged",
    "turn.resolved",
    "turn.failed",
    "turn.rated",
    "turn.interrupted",
    "conversation.handoff",
    "message.created",
    "conversation.ended",
    "page.event",
    "conversation.analyzed",
)

DEFAULT_TOLERANCE_S = 300
_SECRET_PREFIX = "whsec_"
_HEX_SIGNATURE = re.compile(r"^sha256=([0-9a-f]{64})$")
_TIMESTAMP = re.compile(r"^\d{1,12}$")
#: The shortest key a secret may give (Standard Webhooks: 24 to 64 bytes); the service's give 30.
_MIN_KEY_BYTES = 24

Body = Union[bytes, bytearray, memoryview, str]
Secrets = Union[str, Sequence[str]]
HookEvent = Dict[str, Any]


def _bytes(body: Body) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


Headers = Union[Mapping[str, Any], Iterable[Tuple[bytes, bytes]]]


def _as_mapping(headers: Headers) -> Mapping[str, Any]:
    """An ASGI scope's ``headers`` (pairs of bytes) as a mapping; any mapping as it is."""
    if isinstance(headers, Mapping):
        return headers
    return {bytes(key).decode("latin-1").lower(): bytes(value).decode("latin-1") for key, value in headers}


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    """A header whatever the case of its name: WSGI, Django and plain dicts spell them differently."""
    getter = getattr(headers, "get", None)
    value = getter(name) if getter else None
    if value is None:
        for key, candidate in headers.items():
            if key.lower() == name or key.upper() == "HTTP_" + name.upper().replace("-", "_"):
                value = candidate
                break
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value


def _standard_key(secret: str) -> bytes:
    encoded = secret[len(_SECRET_PREFIX):] if secret.startswith(_SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        key = b""
    # ``whsec_`` alone, or a few characters, would make a key anyone can guess.
    if len(key) < _MIN_KEY_BYTES:
        raise HookVerificationError("invalid_secret", f"A signing secret must be whsec_ and at least {_MIN_KEY_BYTES} bytes in base64: pass the deployment's signing_secret as the service showed it")
    return key


def check_secrets(secrets: Secrets) -> list:
    """The secrets given, each checked to make a key of at least 24 bytes.

    Raises :class:`HookVerificationError` with ``no_secret`` or ``invalid_secret``.
    """
    keys = [s for s in ([secrets] if isinstance(secrets, str) else list(secrets)) if s]
    if not keys:
        raise HookVerificationError("no_secret", "No signing secret given: pass the deployment's signing_secret")
    for key in keys:
        _standard_key(key)
    return keys


def _matches_any(presented: Iterable[bytes], digest: bytes) -> bool:
    found = False
    # Every candidate is compared, so the time taken does not say which one matched.
    for candidate in presented:
        if hmac.compare_digest(candidate, digest):
            found = True
    return found


def _check_standard(body: bytes, headers: Mapping[str, Any], signatures: str, secrets: Sequence[str], tolerance: float, now: float) -> None:
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    if not msg_id or not timestamp or not _TIMESTAMP.match(timestamp):
        raise HookVerificationError("missing_signature", "webhook-id and webhook-timestamp must come with webhook-signature")
    if abs(now - int(timestamp)) > tolerance:
        raise HookVerificationError("stale_timestamp", f"webhook-timestamp is more than {tolerance:g} s from now: a replay, or a clock that is wrong")
    presented = []
    for signature in signatures.split(" "):
        if signature.startswith("v1,"):
            try:
                presented.append(base64.b64decode(signature[3:], validate=True))
            except (binascii.Error, ValueError):
                continue
    signed = msg_id.encode("utf-8") + b"." + timestamp.encode("utf-8") + b"." + body
    for secret in secrets:
        if _matches_any(presented, hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()):
            return
    raise HookVerificationError("invalid_signature", "No webhook-signature matches these bytes with the secrets given")


def _check_service_signature(body: bytes, header: str, secrets: Sequence[str]) -> None:
    match = _HEX_SIGNATURE.match(header)
    if not match:
        raise HookVerificationError("invalid_signature", "X-Service-Signature must be sha256= and 64 lowercase hex digits")
    presented = [bytes.fromhex(match.group(1))]
    for secret in secrets:
        if _matches_any(presented, hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()):
            return
    raise HookVerificationError("invalid_signature", "X-Service-Signature does not match these bytes with the secrets given")


def _parse(body: bytes) -> HookEvent:
    try:
        event = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise HookVerificationError("invalid_body", "The body is not JSON") from None
    known = isinstance(event, dict) and (
        (event.get("type") == "turn.created" and isinstance(event.get("delivery_id"), str))
        or (event.get("type") == "tool.call" and isinstance(event.get("call_id"), str))
        or (isinstance(event.get("id"), str) and isinstance(event.get("data"), dict) and event.get("type") in TRANSCRIPT_EVENT_TYPES)
    )
    if not known:
        raise HookVerificationError("invalid_body", "The body is neither a turn hook, a tool call nor a transcript event")
    return event


def verify_hook(
    raw_body: Body,
    headers: Headers,
    secrets: Secrets,
    tolerance: float = DEFAULT_TOLERANCE_S,
    now: Optional[float] = None,
    allow_service_signature_alone: bool = False,
) -> HookEvent:
    """Checks that a call to your server came from Concierge and returns what it carries.

    Pass the exact bytes received (``request.get_data()`` in Flask, ``request.body`` in Django), before
    any JSON parsing, and the headers as your framework has them (a mapping, a WSGI environ, or an
    ASGI scope's ``headers`` pairs). The Standard Webhooks headers are required, their timestamp
    within ``tolerance`` seconds. With ``allow_service_signature_alone``, a turn hook may come with
    ``X-Service-Signature`` alone (for a proxy that strips the ``webhook-*`` headers), its signed
    ``sent_at`` within ``tolerance``; a transcript event never, as its body carries no send time.
    ``secrets`` is the deployment's signing secret, or several while a rotation's grace lasts.
    Raises :class:`HookVerificationError`.
    """
    keys = check_secrets(secrets)
    now = time.time() if now is None else now
    body = _bytes(raw_body)
    headers = _as_mapping(headers)
    standard = _header(headers, "webhook-signature")
    service = _header(headers, "x-service-signature")
    if standard is not None:
        _check_standard(body, headers, standard, keys, tolerance, now)
        return _parse(body)
    if service is None or not allow_service_signature_alone:
        raise HookVerificationError("missing_signature", "webhook-id, webhook-timestamp and webhook-signature are required (the service sends them on every call): check that nothing in front of your server strips them")
    _check_service_signature(body, service, keys)
    event = _parse(body)
    if "sent_at" not in event:
        raise HookVerificationError("missing_signature", "A transcript event needs the Standard Webhooks headers: its body carries no send time")
    try:
        sent_at = datetime.fromisoformat(str(event["sent_at"]).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise HookVerificationError("invalid_body", "sent_at is not a time") from None
    if abs(now - sent_at) > tolerance:
        raise HookVerificationError("stale_timestamp", f"sent_at is more than {tolerance:g} s from now: a replay, or a clock that is wrong")
    return event


def is_turn_hook(event: HookEvent) -> bool:
    """Whether a verified call is a turn hook."""
    return "delivery_id" in event


def is_tool_call(event: HookEvent) -> bool:
    """Whether a verified call is a model agent's tool call (README, An agent without a server)."""
    return "call_id" in event


def sign_body(secret: str, body: Body) -> str:
    """``X-Service-Signature`` for the exact bytes you send to the service (a reply, or a part)."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), _bytes(body), hashlib.sha256).hexdigest()
