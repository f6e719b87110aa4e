"""A typo in a search filter is an error that names what would have matched,
not "0 results" (query/filters.py)."""

from __future__ import annotations

import pytest

from indexd.errors import InvalidParams
from indexd.query.filters import check_filters, check_repo


def test_an_unknown_kind_or_language_names_the_closest_known_one():
    check_filters("function,class", "python,markdown")
    with pytest.raises(InvalidParams, match=r"unknown kind 'funtion' \(did you mean 'function'\?\)"):
        check_filters("funtion", None)
    with pytest.raises(InvalidParams, match=r"unknown lang 'pyhton' \(did you mean 'python'\?\)"):
        check_filters(None, "pyhton")


def test_a_repo_is_its_path_or_folder_name_and_a_typo_of_either_is_named():
    repos = ["/home/me/src/click", "/home/me/src/indexd"]
    check_repo("click", repos)
    check_repo("/home/me/src/indexd", repos)
    check_repo(None, repos)
    # `--repo clik` said only "the realm's repos: /home/me/src/click, ...": the folder
    # name a person types was never compared
    with pytest.raises(InvalidParams, match=r"unknown repo 'clik' \(did you mean 'click'\?\)"):
        check_repo("clik", repos)
    with pytest.raises(InvalidParams, match=r"unknown repo 'nothing'; the realm's repos: "
                                            r"/home/me/src/click, /home/me/src/indexd"):
        check_repo("nothing", repos)
