"""What the graph calls: hybrid search, rerank, context expansion, web search, and the knowledge base."""
