"""Fake hosted services on 127.0.0.1 (OpenAI, Cohere, Tavily) for testing provider clients over real HTTP."""
