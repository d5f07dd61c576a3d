"""Usage and cost: every call to an embedding model, a summariser or a reranker metered,
budgets that stop priced calls (docs/usage.md)."""
