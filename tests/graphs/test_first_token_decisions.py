"""Yes/no decisions read from the first reply token's probabilities (``graphs/rag/nodes/_llm.py``)."""

from __future__ import annotations

import math

import pytest
from langchain_core.messages import AIMessage

from graphs.rag.nodes._llm import first_token_alternatives, probability_of_opening


def test_the_local_models_alternatives_are_read_as_probabilities() -> None:
    reply = AIMessage(
        "NOT",
        response_metadata={
            "first_token_logprobs": [
                {"token": "NOT", "logprob": math.log(0.6)},
                {"token": "The", "logprob": math.log(0.3)},
            ]
        },
    )

    assert first_token_alternatives(reply) == [("NOT", pytest.approx(0.6)), ("The", pytest.approx(0.3))]


def test_openais_logprobs_are_read_the_same_way() -> None:
    reply = AIMessage(
        "yes",
        response_metadata={
            "logprobs": {
                "content": [
                    {
                        "token": "yes",
                        "logprob": math.log(0.9),
                        "top_logprobs": [
                            {"token": "yes", "logprob": math.log(0.9)},
                            {"token": "no", "logprob": math.log(0.1)},
                        ],
                    },
                    {"token": ".", "logprob": -0.01, "top_logprobs": []},
                ]
            }
        },
    )

    assert first_token_alternatives(reply) == [("yes", pytest.approx(0.9)), ("no", pytest.approx(0.1))]


def test_a_model_that_reports_no_logprobs_gives_none() -> None:
    assert first_token_alternatives(AIMessage("yes")) is None
    assert first_token_alternatives(AIMessage("yes", response_metadata={"logprobs": {"content": []}})) is None


def test_the_opening_probability_adds_every_token_that_starts_the_word() -> None:
    alternatives = [("NOT", 0.3), (" NOT", 0.1), ("N", 0.05), ("Northwind", 0.2), ("Not", 0.05), ("2", 0.1)]

    # "NOT", " NOT", "N" and "Not" can open NOT_FOUND; "Northwind" cannot.
    assert probability_of_opening(alternatives, ("NOT_FOUND",)) == pytest.approx(0.5)
    assert probability_of_opening(alternatives, ("yes",)) == 0.0
    assert probability_of_opening([(" ", 0.9)], ("yes",)) == 0.0  # whitespace opens nothing
