"""Issue 11: calling a value annotated as a class, ``Type[X]``, builds an X. click's
``shell_complete`` runs ``comp_cls = get_completion_class(shell)`` (``->
t.Optional[t.Type[ShellComplete]]``), ``comp = comp_cls(...)``, ``comp.complete()``:
``ShellComplete.complete`` was reached by no trusted edge, and the completion tests
that break on it were not predicted. ``comp.m()`` is then an ``inferred`` call of X's
``m``, from a ``-> Type[X]`` function or a parameter ``cls: Type[X]``; a value of
unknown kind, or of ``List[Type[X]]``, builds nothing known."""

from __future__ import annotations

import pytest
from graph_helpers import build, hows_to, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/shells.py": (
        "import typing as t\n\n\n"
        "class Shell:\n    def complete(self):\n        return []\n\n\n"
        "_shells: t.Dict[str, t.Type[Shell]] = {}\n\n\n"
        "def shell_class(name) -> t.Optional[t.Type[Shell]]:\n"
        "    return _shells.get(name)\n\n\n"
        "def listed() -> t.List[t.Type[Shell]]:\n    return list(_shells.values())\n\n\n"
        "def by_call(name):\n    cls = shell_class(name)\n    if cls is None:\n"
        "        return 1\n    comp = cls()\n    return comp.complete()\n\n\n"
        "def by_parameter(cls: \"type[Shell]\"):\n    return cls().complete()\n\n\n"
        "def by_parameter_bound(cls: t.Type[Shell]):\n    comp = cls()\n"
        "    return comp.complete()\n\n\n"
        "def by_list():\n    cls = listed()\n    comp = cls()\n    return comp.complete()\n\n\n"
        "def by_unknown(cls):\n    comp = cls()\n    return comp.complete()\n"),
}
SHELLS = "pkg/shells.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("typevalued"), FILES))


def completes(graph, symbol) -> set[str]:
    return hows_to(graph, SHELLS, symbol, "Shell.complete")


@pytest.mark.parametrize("symbol", ["by_call", "by_parameter", "by_parameter_bound"])
def test_calling_a_type_valued_name_builds_an_instance_of_the_class(graph, symbol):
    assert completes(graph, symbol) == {"inferred"}


@pytest.mark.parametrize("symbol", ["by_list", "by_unknown"])
def test_a_value_of_unknown_or_container_type_builds_nothing_known(graph, symbol):
    assert "inferred" not in completes(graph, symbol)
