"""Visitors' tokens for the widget."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional

MAX_TTL_S = 86_400
_MAX_CTX_BYTES = 4096
_MAX_TEXT = 256


def _segment(value: Any) -> str:
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def mint_user_token(
    deployment_id: str,
    secret: str,
    sub: str,
    name: Optional[str] = None,
    ctx: Optional[Mapping[str, Any]] = None,
    ttl: int = 3600,
    now: Optional[float] = None,
) -> str:
    """A user token for the widget: an HS256 JWT for one deployment and one visitor.

    ``sub`` is your stable id for the visitor (1 to 256 characters), ``name`` what they are called,
    ``ctx`` an object your hook sees with each turn (at most 4 KiB as JSON), ``ttl`` its lifetime in
    seconds (1 to 86,400). Anything outside the service's limits raises ``ValueError`` here.
    """
    if not isinstance(deployment_id, str) or not deployment_id:
        raise ValueError("deployment_id is required")
    if not isinstance(secret, str) or not secret:
        raise ValueError("secret is required: the deployment's signing_secret")
    if not isinstance(sub, str) or not 1 <= len(sub) <= _MAX_TEXT:
        raise ValueError("sub must be 1 to 256 characters")
    if name is not None and (not isinstance(name, str) or len(name) > _MAX_TEXT):
        raise ValueError("name must be a string of at most 256 characters")
    if ctx is not None and (not isinstance(ctx, Mapping) or len(json.dumps(dict(ctx), separators=(",", ":"), ensure_ascii=False).encode("utf-8")) > _MAX_CTX_BYTES):
        raise ValueError("ctx must be an object of at most 4 KiB as JSON")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= MAX_TTL_S:
        raise ValueError("ttl must be a whole number of seconds from 1 to 86400")
    iat = int(time.time() if now is None else now)
    claims: dict = {"aud": deployment_id, "sub": sub, "iat": iat, "exp": iat + ttl}
    if name is not None:
        claims["name"] = name
    if ctx is not None:
        claims["ctx"] = dict(ctx)
    unsigned = _segment({"alg": "HS256", "typ": "JWT"}) + "." + _segment(claims)
    signature = hmac.new(secret.encode("utf-8"), unsigned.encode("ascii"), hashlib.sha256).digest()
    return unsigned + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode("ascii")
