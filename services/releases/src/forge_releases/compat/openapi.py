"""The OpenAPI 3.1 documents of the two compat shapes (docs/compat.md), built in code next to the
handlers they describe, from the version-2 document's parts and schemas:

    GET /api/v1/repos/openapi.json   the Gitea shape   (`/api/v1/openapi.json` is the orgs API's)
    GET /api/v3/openapi.json         the GitHub shape, with /{owner}/{repo}/releases.atom
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forge_common import openapi
from forge_common.openapi import document_handler, error, json_content, path_param, query_param, ref

from ..openapi.parts import (
    AUTH_NOTE,
    DOWNLOAD_RESPONSES,
    FILE,
    NOT_MODIFIED,
    OWNER,
    POSITIVE_ID,
    REPO,
    TIME,
    document_path,
)
from ..openapi.publish_paths import RELEASE_OPTION
from ..openapi.schemas import SCHEMAS

GITEA_DOC = "/api/v1/repos/openapi.json"
GITHUB_DOC = "/api/v3/openapi.json"
GITEA = "/api/v1/repos/{owner}/{repo}"
GITHUB = "/api/v3/repos/{owner}/{repo}"
ATOM = "/{owner}/{repo}/releases.atom"

_URI = {"type": "string", "format": "uri"}


# What the middleware answers on any route (docs/http.md "Errors"), in the version-1 body.
_REQUEST_ERRORS = {
    "400": error("the request body was cut short, or a malformed JSON or multipart body"),
    "401": error("a private repository and nobody signed in, or an unknown token"),
    "403": error('the token lacks the scope (docs/accounts.md "Scopes")'),
    "408": error("the request body did not arrive in time"),
    "413": error("the request body is over the limit"),
    "429": error("too many wrong passwords for the account (basic authentication)"),
}
_READ_ERRORS = {"404": error("no such repository, release or asset (or not visible)")}
_WRITE_ERRORS = {
    "403": error("no write access (admin to delete a release), or the repository is archived"),
    "404": _READ_ERRORS["404"],
    "409": error("the tag or asset name is taken"),
    "422": error("a field is missing or invalid (named in the message)"),
}
_RELEASE_ID = path_param("release_id", POSITIVE_ID)
_ASSET_ID = path_param("asset_id", POSITIVE_ID)
_TAG = path_param("tag")
_LIST_HEADERS = {
    "X-Total-Count": {"schema": {"type": "integer"}},
    "Link": {"schema": {"type": "string"}},
}


def _op(
    op_id: str,
    summary: str,
    params: list[dict[str, Any]],
    responses: dict[str, Any],
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": op_id,
        "summary": summary,
        "description": AUTH_NOTE,
        "tags": ["releases"],
        "parameters": [OWNER, REPO, *params],
        "responses": {**_REQUEST_ERRORS, **responses},
    }
    if body is not None:
        op["requestBody"] = body
    return op


def _read(schema: dict[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    return {"200": json_content(description, schema, **extra), "304": NOT_MODIFIED, **_READ_ERRORS}


_JSON_BODY = {"required": True, "content": {"application/json": {"schema": RELEASE_OPTION}}}
_CREATE_SCHEMA = {**RELEASE_OPTION, "required": ["tag_name"]}
_CREATE_BODY = {"required": True, "content": {"application/json": {"schema": _CREATE_SCHEMA}}}
_CREATED = {"Location": {"schema": {"type": "string"}}}
_NO_CONTENT = {"204": {"description": "Deleted"}}
_NAME = query_param("name", {"type": "string"}, "the asset's file name (else the form's file name)")


@dataclass(frozen=True)
class _Shape:
    """What differs between the two shapes' release paths."""

    root: str  # GITEA or GITHUB
    prefix: str  # operationId prefix: Gitea's `repo...`, GitHub's `repos...`
    asset_word: str  # Gitea's `Attachment`, GitHub's `Asset`
    edit_word: str  # Gitea's `Edit`, GitHub's `Update`
    list_params: list[dict[str, Any]]
    upload_params: list[dict[str, Any]]
    upload_id: str
    multipart: bool
    upload_errors: dict[str, Any] = field(default_factory=dict)  # what differs from _WRITE_ERRORS


def _release_paths(shape: _Shape, release: dict[str, Any], asset: dict[str, Any]) -> dict[str, Any]:
    """The paths both shapes have, named each platform's way."""
    p, word = shape.prefix, shape.asset_word
    releases = f"{shape.root}/releases"
    one = f"{releases}/{{release_id}}"
    return {
        releases: {
            "get": _op(
                f"{p}ListReleases",
                "List releases, newest first, prereleases included",
                shape.list_params,
                _read({"type": "array", "items": release}, "Releases", headers=_LIST_HEADERS),
            ),
            "post": _op(
                f"{p}CreateRelease",
                "Create a release",
                [],
                {"201": json_content("The release", release, headers=_CREATED), **_WRITE_ERRORS},
                _CREATE_BODY,
            ),
        },
        f"{releases}/latest": {
            "get": _op(
                f"{p}GetLatestRelease",
                "The newest release that is neither a draft nor a prerelease",
                [],
                _read(release, "Release"),
            )
        },
        f"{releases}/tags/{{tag}}": {
            "get": _op(f"{p}GetReleaseByTag", "A release by tag", [_TAG], _read(release, "R"))
        },
        one: {
            "get": _op(f"{p}GetRelease", "A release by id", [_RELEASE_ID], _read(release, "R")),
            "patch": _op(
                f"{p}{shape.edit_word}Release",
                "Edit a release (the given fields)",
                [_RELEASE_ID],
                {"200": json_content("The release", release), **_WRITE_ERRORS},
                _JSON_BODY,
            ),
            "delete": _op(
                f"{p}DeleteRelease", "Delete a release", [_RELEASE_ID], _delete_responses()
            ),
        },
        f"{one}/assets": {
            "get": _op(
                f"{p}ListRelease{word}s",
                f"A release's {word.lower()}s",
                [_RELEASE_ID],
                _read({"type": "array", "items": asset}, f"{word}s"),
            ),
            "post": _op(
                shape.upload_id,
                "Upload a file (Gitea: multipart field `attachment` or a raw body; GitHub: the "
                "raw body at the release's `upload_url`)",
                [_RELEASE_ID, *shape.upload_params],
                {
                    "201": json_content(f"The {word.lower()}", asset),
                    **_WRITE_ERRORS,
                    **shape.upload_errors,
                },
                _upload_body(multipart=shape.multipart),
            ),
        },
    }


_PAGE = query_param("page", {"type": "string"}, "page number; not a positive integer → 1")
_GITEA = _Shape(
    root=GITEA,
    prefix="repo",
    asset_word="Attachment",
    edit_word="Edit",
    list_params=[
        _PAGE,
        query_param("limit", {"type": "string"}, "page size; not in 1-100 → 30"),
        query_param("draft", {"type": "string"}, "false hides drafts (admins see them)"),
        query_param("pre-release", {"type": "string"}, "false hides prereleases"),
    ],
    upload_params=[_NAME],
    upload_id="repoCreateReleaseAttachment",
    multipart=True,
)
_GITHUB = _Shape(
    root=GITHUB,
    prefix="repos",
    asset_word="Asset",
    edit_word="Update",
    list_params=[
        query_param("per_page", {"type": "string"}, "page size; not in 1-100 → 30"),
        _PAGE,
    ],
    upload_params=[
        query_param("name", {"type": "string"}, "the asset's file name (required)"),
        query_param("label", {"type": "string"}, "accepted, not stored"),
    ],
    upload_id="reposUploadReleaseAsset",
    multipart=False,
    # GitHub stores a renamed name (docs/compat.md "Asset names") and answers a taken one so
    upload_errors={
        "422": error(
            "a field is invalid, or the release already has an asset of that (renamed) name: "
            "GitHub's `Validation Failed` with `errors[0].code` `already_exists`"
        )
    },
)


def _gitea_paths() -> dict[str, Any]:
    attachment = ref("Attachment")
    one = f"{GITEA}/releases/{{release_id}}/assets/{{asset_id}}"
    return {
        **document_path(GITEA_DOC, "giteaOpenapi", _REQUEST_ERRORS),
        GITEA: {
            "get": _op("repoGet", "The repository", [], _read(ref("GiteaRepository"), "R")),
            **_admin_ops(),
        },
        f"{GITEA}/collaborators/{{collaborator}}": _collaborator_ops(),
        **_release_paths(_GITEA, ref("GiteaRelease"), attachment),
        one: {
            "get": _op(
                "repoGetReleaseAttachment",
                "One attachment",
                [_RELEASE_ID, _ASSET_ID],
                _read(attachment, "Attachment"),
            ),
            "delete": _op(
                "repoDeleteReleaseAttachment",
                "Delete an attachment",
                [_RELEASE_ID, _ASSET_ID],
                _delete_responses(),
            ),
        },
    }


# Repository administration (docs/accounts.md, compat/repo_admin.py): Gitea's EditRepoOption
# with forge's public_landing and public_releases; the answer is Gitea's full Repository.
_EDIT_REPO = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "private": {"type": "boolean"},
        "archived": {"type": "boolean"},
        "public_landing": {"type": "boolean"},
        "public_releases": {"type": "boolean"},
    },
}
_EDITED = {
    "type": "object",
    "required": [
        "id",
        "name",
        "full_name",
        "private",
        "archived",
        "public_landing",
        "public_releases",
        "permissions",
    ],
    "properties": {
        "id": {"type": "integer"},
        "full_name": {"type": "string"},
        "private": {"type": "boolean"},
        "public_landing": {"type": "boolean"},
        "public_releases": {"type": "boolean"},
    },
}
_ADMIN_ERRORS = {
    "403": error("not an administrator (an owner to delete), or the token lacks the scope"),
    "404": _READ_ERRORS["404"],
    "422": error("a field is invalid, the new name is taken, or the user does not exist"),
}


def _admin_ops() -> dict[str, Any]:
    return {
        "patch": _op(
            "repoEdit",
            "Edit the repository (administrators)",
            [],
            {"200": json_content("The repository", _EDITED), **_ADMIN_ERRORS},
            {"required": True, "content": {"application/json": {"schema": _EDIT_REPO}}},
        ),
        "delete": _op(
            "repoDelete",
            "Delete the repository with its releases and files (owners)",
            [],
            {**_NO_CONTENT, **_ADMIN_ERRORS},
        ),
    }


def _collaborator_ops() -> dict[str, Any]:
    who = [path_param("collaborator")]
    permission = {
        "type": "object",
        "properties": {"permission": {"enum": ["read", "write", "admin"]}},
    }
    return {
        "put": _op(
            "repoAddCollaborator",
            "Add a collaborator or change their permission (default write)",
            who,
            {"204": {"description": "Done"}, **_ADMIN_ERRORS},
            {"required": False, "content": {"application/json": {"schema": permission}}},
        ),
        "delete": _op(
            "repoDeleteCollaborator",
            "Remove a collaborator",
            who,
            {"204": {"description": "Done"}, **_ADMIN_ERRORS},
        ),
    }


def _delete_responses() -> dict[str, Any]:
    return {**_NO_CONTENT, **{k: v for k, v in _WRITE_ERRORS.items() if k in ("403", "404")}}


def _upload_body(*, multipart: bool) -> dict[str, Any]:
    raw = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}
    form = {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {"attachment": {"type": "string", "format": "binary"}},
            }
        }
    }
    return {"required": True, "content": {**raw, **form} if multipart else raw}


# The feed is not under /api/v3/: its errors have the version-2 body (docs/http.md "Errors").
_PAGE_ERRORS = {
    code: error(response["description"], "V2Error")
    for code, response in {**_REQUEST_ERRORS, **_READ_ERRORS}.items()
}


def _github_paths() -> dict[str, Any]:
    asset = ref("GithubAsset")
    asset_by_id = {
        "description": "The asset's JSON, or its bytes for `Accept: application/octet-stream`",
        "content": {"application/json": {"schema": asset}, **FILE["content"]},
    }
    feed = {
        "description": "Atom feed of the newest ten releases (drafts never)",
        "content": {"application/atom+xml": {"schema": {"type": "string"}}},
    }
    return {
        **document_path(GITHUB_DOC, "githubOpenapi", _REQUEST_ERRORS),
        GITHUB: {"get": _op("reposGet", "The repository", [], _read(ref("GithubRepository"), "R"))},
        # before `/releases/{release_id}`, as in the route table
        f"{GITHUB}/releases/assets/{{asset_id}}": {
            "get": _op(
                "reposGetReleaseAsset",
                "A release asset (JSON, or the file)",
                [_ASSET_ID],
                {
                    **{k: v for k, v in DOWNLOAD_RESPONSES.items() if k != "401"},
                    "200": asset_by_id,
                },
            ),
            "delete": _op(
                "reposDeleteReleaseAsset",
                "Delete a release asset",
                [_ASSET_ID],
                _delete_responses(),
            ),
        },
        **_release_paths(_GITHUB, ref("GithubRelease"), asset),
        ATOM: {
            "get": _op("releasesAtom", "GitHub's release feed", [], {**_PAGE_ERRORS, "200": feed})
        },
    }


def _with(base: dict[str, Any], **properties: Any) -> dict[str, Any]:
    """`base` (an object schema) with more required properties."""
    return {
        **base,
        "required": [*base["required"], *(p for p in properties if p not in base["required"])],
        "properties": {**base["properties"], **properties},
    }


_OWNER: dict[str, Any] = {
    "type": "object",
    "required": ["id", "login"],
    "properties": {"id": {"type": "integer"}, "login": {"type": "string"}},
}
_REPOSITORY: dict[str, Any] = {
    "type": "object",
    "required": ["id", "name", "full_name", "owner", "private", "html_url", "url"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "full_name": {"type": "string"},
        "owner": _OWNER,
        "description": {"type": "string"},
        "private": {"type": "boolean"},
        "archived": {"type": "boolean"},
        "html_url": _URI,
        "url": _URI,
        "created_at": TIME,
        "updated_at": TIME,
    },
}
_API_URLS = {"url": _URI, "assets_url": _URI, "upload_url": {"type": "string"}}
_GITEA_RELEASE = _with(SCHEMAS["Release"], **_API_URLS)
_GITHUB_ASSET = _with(
    SCHEMAS["Attachment"],
    url=_URI,
    node_id={"type": "string"},
    label={"type": "string"},
    state={"const": "uploaded"},
    content_type={"type": "string"},
    updated_at=TIME,
)
_GITHUB_RELEASE = _with(
    {
        **_GITEA_RELEASE,
        "properties": {
            **_GITEA_RELEASE["properties"],
            "assets": {"type": "array", "items": ref("GithubAsset")},
        },
    },
    node_id={"type": "string"},
)
_V1_ERROR = {
    "type": "object",
    "required": ["message"],
    "properties": {"message": {"type": "string"}, "errors": {"type": "array"}},
}


def _schemas(**more: Any) -> dict[str, Any]:
    return {"Attachment": SCHEMAS["Attachment"], "Error": _V1_ERROR, **more}


def build_gitea() -> dict[str, Any]:
    return openapi.document(
        title="forge release API, Gitea shape",
        version="1.0.0",
        description="Gitea's release API over forge releases (docs/compat.md).",
        server="/",
        schemas=_schemas(GiteaRelease=_GITEA_RELEASE, GiteaRepository=_REPOSITORY),
        paths=_gitea_paths(),
    )


def build_github() -> dict[str, Any]:
    repository = {
        **_REPOSITORY,
        "properties": {**_REPOSITORY["properties"], "node_id": {"type": "string"}},
    }
    return openapi.document(
        title="forge release API, GitHub shape",
        version="3.0.0",
        description="GitHub's (Enterprise layout) release API over forge releases "
        "(docs/compat.md).",
        server="/",
        schemas=_schemas(
            GithubRelease=_GITHUB_RELEASE,
            GithubAsset=_GITHUB_ASSET,
            GithubRepository=repository,
            V2Error=SCHEMAS["Error"],
        ),
        paths=_github_paths(),
    )


serve_gitea = document_handler(build_gitea)
serve_github = document_handler(build_github)
