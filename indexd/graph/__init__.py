"""Relationships layer: imports, references, calls, tests, docs, config and
co-change edges between files and symbols, kept warm in ``Graph``.

Pure modules: ``resolve``/``resolve_langs`` (import resolution), ``edges``
(facts -> edges), ``impact`` (walk + scoring), ``export``. I/O lives only in
``loader`` (store tables, manifests), ``cochange`` and ``changes`` (git).
"""

from .edges import build_edges, file_edges, name_weight
from .graph import Graph
from .loader import facts_from_parse, load_facts
from .model import Def, Edge, FileFacts, LinkFact, Ref, is_test_path

__all__ = ["Def", "Edge", "FileFacts", "Graph", "LinkFact", "Ref", "build_edges",
           "facts_from_parse", "file_edges", "is_test_path", "load_facts", "name_weight"]
