"""Bounded retries for hosted providers (Cohere rerank, Tavily search), run by tenacity.

Each provider classifies its client's exceptions into ``Transient`` (retry: 429, 5xx, timeouts,
connection errors) or ``Permanent`` (do not retry: bad key, bad request, malformed reply). After the
last attempt, or on a permanent failure, the caller gets one ``ProviderUnavailable`` naming the
provider and the reason, so the graph can degrade instead of crashing. tenacity runs the loop; what is
ours is the classification and the wait: the server's Retry-After when it sent one, else exponential
backoff, never more than the configured cap.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from core.errors import ProviderUnavailable

log = logging.getLogger(__name__)

T = TypeVar("T")

# The first backoff wait when the service gives no Retry-After; doubles each attempt.
BASE_BACKOFF_S = 0.5


@dataclass(frozen=True)
class Transient:
    """A failure worth retrying; ``retry_after_s`` is the server's Retry-After, when it sent one."""

    reason: str
    retry_after_s: float | None = None


@dataclass(frozen=True)
class Permanent:
    """A failure that another attempt would repeat."""

    reason: str


Classifier = Callable[[Exception], Transient | Permanent | None]


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    max_wait_s: float

    def wait_before_retry(self, retry_index: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based): Retry-After if given, else
        exponential backoff; never more than ``max_wait_s``."""
        wanted = retry_after_s if retry_after_s is not None else BASE_BACKOFF_S * 2**retry_index
        return max(0.0, min(wanted, self.max_wait_s))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def call_with_retries(provider: str, call: Callable[[], T], classify: Classifier, policy: RetryPolicy) -> T:
    """Run ``call`` at most ``policy.max_retries + 1`` times.

    Returns its first successful result. Raises ``ProviderUnavailable(provider, reason)`` on a permanent
    failure or when every attempt failed transiently. Exceptions ``classify`` does not recognise (it
    returns None) propagate unchanged: they are bugs, not outages.
    """
    attempts = policy.max_retries + 1

    def transient(state: RetryCallState) -> Transient:
        verdict = classify(_failure(state))
        assert isinstance(verdict, Transient)  # only transient failures are retried
        return verdict

    def wait(state: RetryCallState) -> float:
        return policy.wait_before_retry(state.attempt_number - 1, transient(state).retry_after_s)

    def announce(state: RetryCallState) -> None:
        seconds = state.next_action.sleep if state.next_action else 0.0
        log.info("%s: %s; retry %d/%d in %.2fs", provider, transient(state).reason,
                 state.attempt_number, policy.max_retries, seconds)  # fmt: skip

    retrying = Retrying(
        stop=stop_after_attempt(attempts),
        retry=retry_if_exception(lambda exc: isinstance(exc, Exception) and isinstance(classify(exc), Transient)),
        wait=wait,
        before_sleep=announce,
        reraise=True,
    )
    try:
        return retrying(call)
    except Exception as exc:
        verdict = classify(exc)
        if verdict is None:
            raise
        if isinstance(verdict, Permanent):
            raise ProviderUnavailable(provider, verdict.reason) from exc
        plural = "s" if attempts > 1 else ""
        raise ProviderUnavailable(provider, f"{verdict.reason} (after {attempts} attempt{plural})") from exc


def _failure(state: RetryCallState) -> Exception:
    exc = state.outcome.exception() if state.outcome else None
    assert isinstance(exc, Exception)
    return exc
