"""The agent's LangGraph state graphs: nodes, routing functions and their wiring."""
