"""Turn an OpenAI client failure into the one-line cause a ProviderUnavailable carries."""

from __future__ import annotations

import json

import openai


def describe_openai_failure(
    exc: BaseException, *, timeout_setting: str, timeout_s: float | None, max_retries: int
) -> str | None:
    """A one-line cause for an OpenAI client failure, or None if ``exc`` is not one."""
    retries = f"after {max_retries} retries"
    if isinstance(exc, openai.APITimeoutError):
        return f"no reply within {timeout_s} s ({timeout_setting}) {retries}"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect ({exc.__cause__ or exc}) {retries}"
    if isinstance(exc, openai.AuthenticationError):
        return "the API key was rejected (HTTP 401): check OPENAI_API_KEY"
    if isinstance(exc, openai.RateLimitError):
        return f"rate limited (HTTP 429) {retries}"
    if isinstance(exc, openai.APIStatusError):
        # The client retries only these statuses; saying "after retries" for a 400 would mislead.
        retried = exc.status_code in (408, 409) or exc.status_code >= 500
        return f"HTTP {exc.status_code}{' ' + retries if retried else ''}: {exc.message}"
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
        return f"malformed response body ({exc})"
    if isinstance(exc, ValueError) and "Unexpected response type" in str(exc):
        # langchain-openai's message when the body is not JSON at all (e.g. an HTML page)
        return f"malformed response body ({exc})"
    if isinstance(exc, TypeError) and "null value for `choices`" in str(exc):
        return f"malformed response body ({exc})"
    return None
