"""The RAG agent graph (issue 4): Adaptive-RAG routing, single-shot retrieval with CRAG, IRCoT, Self-RAG checks.

``graph.py`` wires the nodes; ``state.py`` holds the state; ``routing.py`` the pure edge functions;
``nodes/`` one file per step; ``classifier/`` the question-complexity router.
"""
