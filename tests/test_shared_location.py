"""Naming a repo's shard in a team shared index: the same repo on two machines, one name."""

from __future__ import annotations

import pytest

from indexd.shared_index.location import SharedIndexError, connect, repo_identity, shard_name
from testlib import GitRepo


@pytest.mark.parametrize("url", ["git@github.com:Team/App.git", "https://github.com/team/app",
                                 "ssh://git@github.com/team/app.git", "https://github.com/team/app/"])
def test_clones_by_any_url_of_one_repo_share_a_shard(tmp_path, url):
    repo = GitRepo(tmp_path / "somewhere-else")
    repo.write("a.py", "x = 1\n")
    repo.commit()
    repo.repo.remotes.create("origin", url)
    assert repo_identity(str(repo.path)) == "github.com/team/app"
    assert shard_name("github.com/team/app").startswith("github_com_team_app_")


def test_a_folder_without_origin_is_named_by_its_folder(tmp_path):
    (tmp_path / "notes").mkdir()
    assert repo_identity(str(tmp_path / "notes")) == "notes"
    assert shard_name("notes") != shard_name("Notes ")   # distinct identities, distinct shards


def test_a_missing_local_index_is_a_clear_error(tmp_path):
    with pytest.raises(SharedIndexError, match="nothing was published there"):
        connect(str(tmp_path / "nowhere"))
