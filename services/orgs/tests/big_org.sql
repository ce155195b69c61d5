-- The cost scenario (README "Cost"): organization `big` with 10,000 members (5,000 public), 1,000
-- repositories (every other one private), 100 pins over 10 groups, 20 teams; tokens for an
-- owner, a member and a stranger. Used by test_query_count.py and bench/orgs.
INSERT INTO core.accounts (kind, name, full_name)
SELECT 'user', 'bigu' || lpad(g::text, 5, '0'), 'Big User ' || g FROM generate_series(1, 10000) g;
INSERT INTO core.accounts (kind, name) VALUES ('user', 'bigstranger');
INSERT INTO core.accounts (kind, name, full_name, description, visibility)
VALUES ('org', 'big', 'Big Org', 'Many of everything', 'public');

INSERT INTO core.org_members (org_id, user_id, role, public)
SELECT o.id, u.id,
       CASE WHEN u.name = 'bigu00001' THEN 'owner' ELSE 'member' END,
       right(u.name, 1) IN ('1', '3', '5', '7', '9')
  FROM core.accounts o, core.accounts u
 WHERE o.name = 'big' AND u.name LIKE 'bigu%';

INSERT INTO core.access_tokens (user_id, name, token_sha256)
SELECT id, 'bench', sha256(convert_to(t, 'UTF8'))
  FROM (VALUES ('bigu00001', 'big-owner-token'), ('bigu00002', 'big-member-token'),
               ('bigstranger', 'big-stranger-token')) AS v(login, t)
  JOIN core.accounts a ON a.name = v.login;

INSERT INTO core.repositories (owner_id, name, description, private)
SELECT o.id, 'repo' || lpad(g::text, 4, '0'), 'Repository ' || g, g % 2 = 0
  FROM core.accounts o, generate_series(1, 1000) g WHERE o.name = 'big';

INSERT INTO core.teams (org_id, name, permission)
SELECT o.id, 'team' || g, 'read' FROM core.accounts o, generate_series(1, 20) g
 WHERE o.name = 'big';
-- numbers, not names, decide who goes where (no parsing of names that may not be ours)
INSERT INTO core.team_members (team_id, user_id)
SELECT t.id, u.id
  FROM generate_series(1, 1000) n
  JOIN core.accounts u ON u.name = 'bigu' || lpad(n::text, 5, '0')
  JOIN core.accounts o ON o.name = 'big'
  JOIN core.teams t ON t.org_id = o.id AND t.name = 'team' || (n % 20 + 1);
INSERT INTO core.team_repos (team_id, repo_id)
SELECT t.id, r.id
  FROM generate_series(1, 1000) n
  JOIN core.accounts o ON o.name = 'big'
  JOIN core.repositories r ON r.owner_id = o.id AND r.name = 'repo' || lpad(n::text, 4, '0')
  JOIN core.teams t ON t.org_id = o.id AND t.name = 'team' || (n % 40 + 1);

INSERT INTO orgs.pin_groups (org_id, name, display_order)
SELECT o.id, 'Group ' || g, g FROM core.accounts o, generate_series(1, 10) g WHERE o.name = 'big';
INSERT INTO orgs.pins (org_id, repo_id, group_id, display_order)
SELECT o.id, r.id, g.id, n
  FROM generate_series(1, 100) n
  JOIN core.accounts o ON o.name = 'big'
  JOIN core.repositories r ON r.owner_id = o.id AND r.name = 'repo' || lpad(n::text, 4, '0')
  LEFT JOIN orgs.pin_groups g ON g.org_id = o.id AND g.display_order = n % 11;
ANALYZE;
