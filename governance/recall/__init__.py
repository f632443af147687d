"""The read path for a turn (docs/architecture.md, "The read path"): one module per stage — eligible, recall
(vector, search, fuse), adjudicate, rank, pack, reinforce — and the packet. Strategies are the same
pipeline with stages switched off (strategies.py)."""

from governance.recall.packet import assemble_context, recall_memories
from governance.recall.strategies import STRATEGIES

__all__ = ["STRATEGIES", "assemble_context", "recall_memories"]
