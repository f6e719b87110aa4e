"""Owners: who wrote the lines of a file or symbol, from git blame (pygit2).

``blame.py`` blames one file (HEAD, bounded history, the working tree laid
over it), ``tally.py`` counts authors in a line range, ``index.py`` caches
blames by blob id and warms them on its own thread as HEAD moves.
"""

from .index import Owners

__all__ = ["Owners"]
