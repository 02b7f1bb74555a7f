"""Provider interfaces and factories for the models ragpilot talks to (embedder, chat model).

Rerankers and web search are tools and live under ``tools/``; the sparse encoder belongs to the
knowledge base. Each capability has a ``base.py`` (the interface) and a ``factory.py`` (the choice by
settings); adding a provider is adding a file.
"""
