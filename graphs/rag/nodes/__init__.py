"""One module per graph step. Each node is ``fn(state, config, *, resources) -> update`` decorated with
``@records_step`` so it leaves a step entry (what it decided, how long it took) in the state."""
