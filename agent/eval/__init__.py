"""Evaluation of ragpilot's parts on public benchmarks: retrieval (``retrieval.py``), answers (later)."""
