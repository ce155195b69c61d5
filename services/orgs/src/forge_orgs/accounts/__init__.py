"""Browser sign-in and the signed-in user's settings pages (docs/accounts.md): `/user/login`,
`/user/logout`, `/user/settings/...`, served by the orgs service, the owner of account pages."""
