"""Update keys (docs/access.md "Update keys"): read-only credentials for one repository's releases,
carried in a URL (`?key=...`) by updaters that cannot send headers, and the short-lived signed URLs
handed out to the requests they authorise.

| module | what |
|---|---|
| signed_urls.py | the HMAC signer; `handed_out_url`, the hook every handed-out URL goes through |
| grant.py | the access step: a key or a signature on a request → read access to one repository |
| queries.py | SQL of `releases.update_keys` |
| handlers.py | create, list and revoke keys (repository admins) |
"""
