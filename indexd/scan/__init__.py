"""Scan stage: which files to index (listing) and their text (reader).

Pure functions plus filesystem reads; no store, no threads.
"""

from .listing import Listing, RepoRules, is_ignored, list_files
from .reader import Skip, Source, read_source, stat_key
from .secrets import secret_content_reason, secret_name_reason

__all__ = ["Listing", "RepoRules", "Skip", "Source", "is_ignored", "list_files",
           "read_source", "secret_content_reason", "secret_name_reason", "stat_key"]
