"""Who is calling: the API key in the request maps to ACL groups (``settings.server.api_keys``).

The key comes from ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``, never from the body. With no
keys configured every caller is anonymous and reads as the group ``public``; once keys are
configured, a request without a key is refused (401) unless ``server.allow_anonymous`` is on (then
it is anonymous, 'public'), and an unknown key is always refused (401).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from fastapi import HTTPException, Request, status
from pydantic import BaseModel

from core.settings import Settings

ANONYMOUS_GROUPS = ("public",)


class Caller(BaseModel):
    """An authenticated (or anonymous) caller: its ACL groups and a stable, non-secret owner id."""

    owner: str
    groups: list[str]

    @property
    def anonymous(self) -> bool:
        return self.owner == "anonymous"


class CallerRejected(Exception):
    """The request presents a malformed or unknown key, or none where one is required."""


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The API key of a request's headers: ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``."""
    authorization = headers.get("authorization")
    if authorization:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise CallerRejected("Authorization header must be 'Bearer <API key>'")
        return credentials.strip()
    key = headers.get("x-api-key")
    return key.strip() if key is not None else None


def owner_id(key: str) -> str:
    """A short fingerprint of a key: names its threads without storing the key itself."""
    return "key-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def identify(key: str | None, settings: Settings) -> Caller:
    """The caller presenting ``key`` (None: no key); ``CallerRejected`` for a key that is not configured,
    or for no key where the server serves no anonymous callers."""
    if key is None:
        if settings.server.api_keys and not settings.server.allow_anonymous:
            raise CallerRejected(
                "an API key is required (Authorization: Bearer KEY or X-API-Key); "
                "this server does not serve anonymous callers (server.allow_anonymous)"
            )
        return Caller(owner="anonymous", groups=list(ANONYMOUS_GROUPS))
    for known_key, groups in settings.server.api_keys.items():
        if hmac.compare_digest(known_key.encode("utf-8"), key.encode("utf-8")):
            return Caller(owner=owner_id(known_key), groups=list(groups) or list(ANONYMOUS_GROUPS))
    raise CallerRejected("unknown API key")


def resolve_caller(request: Request, settings: Settings) -> Caller:
    """The caller of ``request``; raises 401 for a malformed or unknown key."""
    try:
        return identify(presented_key(request.headers), settings)
    except CallerRejected as exc:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, str(exc), headers={"WWW-Authenticate": "Bearer"}
        ) from None
