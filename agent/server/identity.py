"""Who is calling: the API key in the request maps to ACL groups (``settings.server.api_keys``).

The key comes from ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``, never from the body. With no
keys configured every caller is anonymous and reads as the group ``public``; once keys are
configured, a request without a key is refused (401) unless ``server.allow_anonymous`` is on (then
it is anonymous, 'public'), and an unknown key is always refused (401).
"""

from __future__ import annotations

import hashlib
import hmac

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


def _presented_key(request: Request) -> str | None:
    authorization = request.headers.get("authorization")
    if authorization:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Authorization header must be 'Bearer <API key>'",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return credentials.strip()
    key = request.headers.get("x-api-key")
    return key.strip() if key is not None else None


def owner_id(key: str) -> str:
    """A short fingerprint of a key: names its threads without storing the key itself."""
    return "key-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def resolve_caller(request: Request, settings: Settings) -> Caller:
    """The caller of ``request``; raises 401 for a key that is not configured."""
    key = _presented_key(request)
    if key is None:
        if settings.server.api_keys and not settings.server.allow_anonymous:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "an API key is required (Authorization: Bearer KEY or X-API-Key); "
                "this server does not serve anonymous callers (server.allow_anonymous)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return Caller(owner="anonymous", groups=list(ANONYMOUS_GROUPS))
    for known_key, groups in settings.server.api_keys.items():
        if hmac.compare_digest(known_key.encode("utf-8"), key.encode("utf-8")):
            return Caller(owner=owner_id(known_key), groups=list(groups) or list(ANONYMOUS_GROUPS))
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED, "unknown API key", headers={"WWW-Authenticate": "Bearer"}
    )
