"""The bounded retry loop shared by the hosted providers."""

from __future__ import annotations

import email.utils
import time

import pytest

from core.errors import ProviderUnavailable
from tools._hosted_retry import Permanent, RetryPolicy, Transient, call_with_retries, parse_retry_after


class Flaky(Exception):
    pass


def classify(exc: Exception) -> Transient | Permanent | None:
    if isinstance(exc, Flaky):
        return Transient(str(exc), retry_after_s=None)
    if isinstance(exc, KeyError):
        return Permanent("bad key")
    return None


def failing_then(result: str, failures: list[Exception]):
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return result

    return call, calls


def test_transient_failures_are_retried_until_success():
    call, calls = failing_then("ok", [Flaky("HTTP 503"), Flaky("HTTP 503")])
    assert call_with_retries("svc", call, classify, RetryPolicy(max_retries=2, max_wait_s=0.0)) == "ok"
    assert len(calls) == 3


def test_the_attempt_count_is_bounded():
    call, calls = failing_then("never", [Flaky("HTTP 503")] * 10)
    with pytest.raises(ProviderUnavailable, match=r"svc unavailable: HTTP 503 \(after 2 attempts\)"):
        call_with_retries("svc", call, classify, RetryPolicy(max_retries=1, max_wait_s=0.0))
    assert len(calls) == 2


def test_permanent_failures_are_not_retried():
    call, calls = failing_then("never", [KeyError("k")])
    with pytest.raises(ProviderUnavailable, match="bad key"):
        call_with_retries("svc", call, classify, RetryPolicy(max_retries=5, max_wait_s=0.0))
    assert len(calls) == 1


def test_unclassified_exceptions_propagate_as_bugs():
    call, _ = failing_then("never", [ZeroDivisionError()])
    with pytest.raises(ZeroDivisionError):
        call_with_retries("svc", call, classify, RetryPolicy(max_retries=5, max_wait_s=0.0))


def test_backoff_doubles_prefers_retry_after_and_is_capped():
    policy = RetryPolicy(max_retries=5, max_wait_s=3.0)
    assert [policy.wait_before_retry(i, None) for i in range(4)] == [0.5, 1.0, 2.0, 3.0]
    assert policy.wait_before_retry(0, 2.5) == 2.5
    assert policy.wait_before_retry(0, 600.0) == 3.0


def test_retry_after_reads_seconds_and_http_dates():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    in_ten_s = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8.0 <= (parse_retry_after(in_ten_s) or 0.0) <= 10.5
