"""gitea-js administers forge through nginx (docs/accounts.md): a site admin creates users, a
user makes tokens with their password, an organization, a repository, a team with a member and
the repository, and a collaborator; a read:repository token is refused a publish in Gitea's
words."""

from __future__ import annotations

from ...conftest import Stack
from ..conftest import RunNode

ADMIN_TOKEN = "root-admin-token"
WORLD = {"users": [{"name": "root", "admin": True, "tokens": [ADMIN_TOKEN]}]}


def test_gitea_js_sets_up_a_team_and_a_scoped_token_cannot_publish(
    stack: Stack, run_node: RunNode
) -> None:
    out = run_node("apis/gitea_admin.mjs", stack.base_url, ADMIN_TOKEN)
    assert out["version"] == "1.23.0"
    assert [out["carol"], out["dave"], out["erin"]] == ["carol", "dave", "erin"]
    assert out["tokenLength"] == 40
    assert out["me"] == "carol"
    assert out["org"] == "carolco"
    assert out["repo"] == "carolco/desktop"
    assert out["ownRepo"] == "carol/notes"
    assert out["team"] == ["release", "write"]
    assert out["teams"] == ["release"]
    assert out["edited"] == "The app"
    assert out["davePublish"] == {"status": 201}
    # a collaborator of a private organization's repository who is no member of it cannot see
    # the organization (docs/access.md "Authentication rules" 1): 404, not 403
    assert out["erinPublish"]["status"] == 404
    assert out["readerPublish"] == {
        "status": 403,
        "message": "token does not have at least one of required scope(s): [write:repository]",
    }
    assert out["readerRead"] == {"status": 200}
    assert out["tokens"] == ["setup", "reader"]
    assert out["deleteToken"] == {"status": 204}
    assert out["removeMember"] == {"status": 204}
    # no longer a member of the private organization: the repository does not exist for dave
    assert out["daveAfter"]["status"] == 404
    assert out["deleteRepo"] == {"status": 204}
    assert out["editedUser"] == "Erin E."
    assert out["deleteUser"] == {"status": 204}
