"""Graph export: edges (and the nodes they touch) as JSON, Graphviz dot or GraphML."""

from __future__ import annotations

import json
from xml.sax.saxutils import quoteattr

from .model import Edge, node_label


def _nodes(edges: list[Edge]) -> dict[str, dict]:
    nodes: dict[str, dict] = {}
    for e in edges:
        for repo, path, sym in ((e.src_repo, e.src_path, e.src_symbol),
                                (e.dst_repo, e.dst_path, e.dst_symbol)):
            nid = node_label(repo, path, sym)
            nodes.setdefault(nid, {"id": nid, "realm": e.realm, "repo": repo, "path": path,
                                   "symbol": sym})
    return nodes


def _edge_json(e: Edge) -> dict:
    return {"kind": e.kind, "from": node_label(e.src_repo, e.src_path, e.src_symbol),
            "to": node_label(e.dst_repo, e.dst_path, e.dst_symbol), "line": e.line,
            "how": e.how, "weight": e.weight, "realm": e.realm,
            **({"support": e.support} if e.support else {})}


def export(edges: list[Edge], fmt: str = "json") -> str:
    edges = sorted(edges, key=lambda e: (e.realm, e.src_repo, e.src_path, e.src_symbol or "",
                                         e.kind, e.dst_repo, e.dst_path, e.dst_symbol or "", e.line))
    nodes = _nodes(edges)
    if fmt == "json":
        return json.dumps({"nodes": list(nodes.values()),
                           "edges": [_edge_json(e) for e in edges]}, indent=1)
    if fmt == "dot":
        lines = ["digraph indexd {", "  rankdir=LR;"]
        lines += [f"  {json.dumps(n)};" for n in nodes]
        for e in edges:
            a = json.dumps(node_label(e.src_repo, e.src_path, e.src_symbol))
            b = json.dumps(node_label(e.dst_repo, e.dst_path, e.dst_symbol))
            lines.append(f"  {a} -> {b} [label={json.dumps(e.kind)}, how={json.dumps(e.how)}];")
        return "\n".join(lines + ["}"]) + "\n"
    if fmt == "graphml":
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
               '  <key id="kind" for="edge" attr.name="kind" attr.type="string"/>',
               '  <key id="how" for="edge" attr.name="how" attr.type="string"/>',
               '  <key id="weight" for="edge" attr.name="weight" attr.type="double"/>',
               '  <graph id="indexd" edgedefault="directed">']
        out += [f"    <node id={quoteattr(n)}/>" for n in nodes]
        for e in edges:
            a = quoteattr(node_label(e.src_repo, e.src_path, e.src_symbol))
            b = quoteattr(node_label(e.dst_repo, e.dst_path, e.dst_symbol))
            out.append(f'    <edge source={a} target={b}><data key="kind">{e.kind}</data>'
                       f'<data key="how">{e.how}</data><data key="weight">{e.weight}</data></edge>')
        return "\n".join(out + ["  </graph>", "</graphml>"]) + "\n"
    raise ValueError(f"unknown export format {fmt!r}; use json, dot or graphml")
