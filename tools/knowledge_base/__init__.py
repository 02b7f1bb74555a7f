"""The knowledge base: loaders, chunkers, the sparse encoder, the vector store and ingestion."""
