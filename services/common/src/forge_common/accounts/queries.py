"""The accounts domain's SQL (the core schema's accounts, repositories, teams, members,
collaborators, tokens, sessions and sign-in counts), named here so the modules beside it hold
the rules and this file the statements, as every service's `queries.py` does.

A statement whose column list depends on the call (an insert or an update of the columns given)
is made by a function here from column names the calling module fixes, never from input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..names import is_account_name
from .models import Account, Repository

if TYPE_CHECKING:
    from ..db import Queryable

ACCOUNT_COLUMNS = (
    "id, kind, name, full_name, email, description, website, location, visibility, is_admin, "
    "created_at"
)
REPO_COLUMNS = (
    "id, owner_id, name, description, private, public_landing, public_releases, archived, "
    "created_at, updated_at"
)
TEAM_COLUMNS = "id, org_id, name, description, permission, includes_all_repositories"
# (names of columns and statements, not secrets: S105)
TOKEN_COLUMNS = "id, name, scopes, token_last_eight, created_at, last_used_at"  # noqa: S105


def _sets(columns: Iterable[str]) -> str:
    """`a = $2, b = $3, ...`: $1 is the row's id."""
    return ", ".join(f"{column} = ${i}" for i, column in enumerate(columns, start=2))


# --- accounts (users and organizations) ---

ACCOUNT_BY_NAME = f"SELECT {ACCOUNT_COLUMNS} FROM core.accounts WHERE lower(name) = lower($1)"

REPOSITORY_BY_NAME = (
    f"SELECT {REPO_COLUMNS} FROM core.repositories WHERE owner_id = $1 AND lower(name) = lower($2)"
)


async def account_by_name(db: Queryable, name: str) -> Account | None:
    """The account of that name, any case; None for a name no account can have, which
    PostgreSQL's `lower()` could otherwise fold onto one (`vİct` onto `vict`, names.py)."""
    if not is_account_name(name):
        return None
    row = await db.fetchrow(ACCOUNT_BY_NAME, name)
    return Account(**dict(row)) if row else None


async def repository_by_name(db: Queryable, owner_id: int, name: str) -> Repository | None:
    row = await db.fetchrow(REPOSITORY_BY_NAME, owner_id, name)
    return Repository(**dict(row)) if row else None


USER_EMAIL_TAKEN = (
    "SELECT EXISTS (SELECT 1 FROM core.accounts WHERE kind = 'user' AND lower(email) = lower($1))"
)

USER_NAME_BY_EMAIL = (
    "SELECT name FROM core.accounts WHERE kind = 'user' AND lower(email) = lower($1)"
)

USER_NAME_BY_ID = "SELECT name FROM core.accounts WHERE kind = 'user' AND id = $1"

ACCOUNT_NAME_BY_ID = "SELECT name FROM core.accounts WHERE id = $1"


def insert_account_sql(columns: Iterable[str]) -> str:
    """An account of `kind`, `name` ($1, $2) and the given columns ($3...)."""
    names = ["kind", "name", *columns]
    places = ", ".join(f"${i}" for i in range(1, len(names) + 1))
    return f"INSERT INTO core.accounts ({', '.join(names)}) VALUES ({places})"


def update_account_sql(columns: Iterable[str]) -> str:
    return f"UPDATE core.accounts SET {_sets(columns)} WHERE id = $1"


SET_PASSWORD = (
    "UPDATE core.accounts SET password_hash = $2, must_change_password = $3 WHERE id = $1"  # noqa: S105
)

LIST_USERS = """SELECT id, name, email, is_admin, must_change_password, created_at
             FROM core.accounts WHERE kind = 'user' AND (is_admin OR NOT $1) ORDER BY id"""

LOCK_ACCOUNTS = "SELECT id FROM core.accounts WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE"

OWNS_REPOSITORIES = "SELECT EXISTS (SELECT 1 FROM core.repositories WHERE owner_id = $1)"

ORGS_OWNED = "SELECT org_id FROM core.org_members WHERE user_id = $1 AND role = 'owner'"

# an organization `$1` is the only owner of (one is enough for the refusal)
SOLE_OWNED_ORG = """SELECT o.name FROM core.org_members m JOIN core.accounts o ON o.id = m.org_id
            WHERE m.user_id = $1 AND m.role = 'owner'
              AND NOT EXISTS (SELECT 1 FROM core.org_members x
                               WHERE x.org_id = m.org_id AND x.role = 'owner'
                                 AND x.user_id <> $1)
            LIMIT 1"""

DELETE_ACCOUNT = "DELETE FROM core.accounts WHERE id = $1"

# --- organization members ---

INSERT_OWNER = "INSERT INTO core.org_members (org_id, user_id, role) VALUES ($1, $2, 'owner')"

INSERT_MEMBER = """INSERT INTO core.org_members (org_id, user_id) VALUES ($1, $2)
           ON CONFLICT DO NOTHING RETURNING true"""

MEMBER_ROLE_FOR_UPDATE = (
    "SELECT role FROM core.org_members WHERE org_id = $1 AND user_id = $2 FOR UPDATE"
)

OWNER_COUNT = "SELECT count(*) FROM core.org_members WHERE org_id = $1 AND role = 'owner'"

DELETE_MEMBER_TEAMS = """DELETE FROM core.team_members tm USING core.teams t
            WHERE t.id = tm.team_id AND t.org_id = $1 AND tm.user_id = $2"""

DELETE_MEMBER = "DELETE FROM core.org_members WHERE org_id = $1 AND user_id = $2"

# --- repositories and collaborators ---

INSERT_REPOSITORY = """INSERT INTO core.repositories (owner_id, name, description, private)
                   VALUES ($1, $2, $3, $4)"""


def update_repository_sql(columns: Iterable[str]) -> str:
    return f"UPDATE core.repositories SET {_sets(columns)}, updated_at = now() WHERE id = $1"


DELETE_REPOSITORY = "DELETE FROM core.repositories WHERE id = $1"

# the permission before the upsert (NULL: a new collaborator)
SET_COLLABORATOR = """INSERT INTO core.collaborators (repo_id, user_id, permission) VALUES ($1, $2, $3)
           ON CONFLICT (repo_id, user_id) DO UPDATE SET permission = EXCLUDED.permission
           RETURNING (SELECT permission FROM core.collaborators
                       WHERE repo_id = $1 AND user_id = $2)"""  # noqa: E501

DELETE_COLLABORATOR = (
    "DELETE FROM core.collaborators WHERE repo_id = $1 AND user_id = $2 RETURNING true"
)

# --- teams ---

TEAMS_OF = f"SELECT {TEAM_COLUMNS} FROM core.teams WHERE org_id = $1 ORDER BY lower(name), id"

TEAM_WITH_ORG_NAME = """SELECT t.id, t.org_id, t.name, t.description, t.permission,
                  t.includes_all_repositories, o.name AS org_name
             FROM core.teams t JOIN core.accounts o ON o.id = t.org_id WHERE t.id = $1"""

INSERT_TEAM = f"""INSERT INTO core.teams
                        (org_id, name, description, permission, includes_all_repositories)
                    VALUES ($1, $2, $3, $4, $5) RETURNING {TEAM_COLUMNS}"""

# every repository of the organization, for a team that includes all (later ones: the trigger)
INSERT_TEAM_ALL_REPOS = """INSERT INTO core.team_repos (team_id, repo_id)
                       SELECT $1, id FROM core.repositories WHERE owner_id = $2"""

INSERT_TEAM_MEMBER = """INSERT INTO core.team_members (team_id, user_id) VALUES ($1, $2)
           ON CONFLICT DO NOTHING RETURNING true"""

DELETE_TEAM_MEMBER = (
    "DELETE FROM core.team_members WHERE team_id = $1 AND user_id = $2 RETURNING true"
)

IS_TEAM_MEMBER = (
    "SELECT EXISTS (SELECT 1 FROM core.team_members WHERE team_id = $1 AND user_id = $2)"
)

INSERT_TEAM_REPO = """INSERT INTO core.team_repos (team_id, repo_id) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING RETURNING true"""

DELETE_TEAM_REPO = "DELETE FROM core.team_repos WHERE team_id = $1 AND repo_id = $2 RETURNING true"

# --- access tokens ---

INSERT_TOKEN = f"""INSERT INTO core.access_tokens (user_id, name, token_sha256, scopes, token_last_eight)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT DO NOTHING
            RETURNING {TOKEN_COLUMNS}"""  # noqa: E501

TOKENS_OF = f"SELECT {TOKEN_COLUMNS} FROM core.access_tokens WHERE user_id = $1 ORDER BY id"

DELETE_TOKEN_BY_ID = (
    "DELETE FROM core.access_tokens WHERE user_id = $1 AND id = $2 RETURNING id, name"  # noqa: S105
)

DELETE_TOKEN_BY_NAME = (
    "DELETE FROM core.access_tokens WHERE user_id = $1 AND lower(name) = lower($2) "  # noqa: S105
    "RETURNING id, name"
)

# --- browser sessions ---

# a new session; lapsed sessions of every user go on the way
START_SESSION = """WITH lapsed AS (
               DELETE FROM core.sessions
                WHERE last_seen_at < now() - $3::float8 * interval '1 second'
                   OR created_at < now() - $4::float8 * interval '1 second')
           INSERT INTO core.sessions (id_sha256, user_id) VALUES ($1, $2)"""

FIND_SESSION = """
WITH found AS (
    SELECT id, user_id, last_seen_at
      FROM core.sessions
     WHERE id_sha256 = $1
       AND last_seen_at > now() - $2::float8 * interval '1 second'
       AND created_at > now() - $3::float8 * interval '1 second'
), touched AS (
    UPDATE core.sessions SET last_seen_at = now()
     WHERE id IN (SELECT id FROM found
                   WHERE last_seen_at < now() - $4::float8 * interval '1 second')
)
SELECT f.id, a.id AS user_id, a.name, a.is_admin, a.must_change_password
  FROM found f JOIN core.accounts a ON a.id = f.user_id
"""

END_SESSION = "DELETE FROM core.sessions WHERE id_sha256 = $1"

END_OTHER_SESSIONS = "DELETE FROM core.sessions WHERE user_id = $1 AND id IS DISTINCT FROM $2"

# --- sign-in counts (sign_in_throttle.py) ---

COUNT_ATTEMPT = """
INSERT INTO core.sign_in_attempts AS a (key, attempts) VALUES ($1, 1)
ON CONFLICT (key) DO UPDATE SET
    attempts = CASE WHEN a.window_start < now() - $2::float8 * interval '1 second'
                     AND (a.blocked_until IS NULL OR a.blocked_until < now())
                    THEN 1 ELSE a.attempts + 1 END,
    window_start = CASE WHEN a.window_start < now() - $2::float8 * interval '1 second'
                         AND (a.blocked_until IS NULL OR a.blocked_until < now())
                        THEN now() ELSE a.window_start END
RETURNING attempts, blocked_until, now() AS at
"""

BLOCK = """
UPDATE core.sign_in_attempts
   SET blocked_until = greatest(blocked_until, now() + $2::float8 * interval '1 second')
 WHERE key = $1
RETURNING blocked_until, now() AS at
"""

# A known address is a row whose `blocked_until` is when it stops being known: the sweep below
# then keeps it exactly that long, with no table of its own.
IS_KNOWN = """SELECT EXISTS (SELECT 1 FROM core.sign_in_attempts
                               WHERE key = $1 AND blocked_until > now())"""

FORGET_ATTEMPTS = "DELETE FROM core.sign_in_attempts WHERE key = $1"

UNCOUNT_ATTEMPT = """UPDATE core.sign_in_attempts SET attempts = greatest(attempts - 1, 0)
                WHERE key = $1"""

MARK_KNOWN = """INSERT INTO core.sign_in_attempts (key, attempts, blocked_until)
           VALUES ($1, 0, now() + $2::float8 * interval '1 second')
           ON CONFLICT (key) DO UPDATE SET blocked_until = excluded.blocked_until"""

SWEEP_ATTEMPTS = """DELETE FROM core.sign_in_attempts
            WHERE window_start < now() - $1::float8 * interval '1 second'
              AND (blocked_until IS NULL OR blocked_until < now())"""
