"""Watching: filesystem events -> debounced "this path may be dirty" keys."""
