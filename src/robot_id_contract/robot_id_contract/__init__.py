"""The identification graph's contract: what every node and the runner agree on (topics.py, stamps.py, processes.py,
parameters.py, period_index.py, taken_messages.py, node_process.py)."""
