"""The read path: HyMem's Algorithm 1 as a pure step generator (`scheduler`), executed against
the store and the model roles by `Reader`, with per-ask budgets and background trace writes."""
