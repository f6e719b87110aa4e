"""indexd: a local, always-on code index for developers and their AI agents."""

__version__ = "0.1.0"
