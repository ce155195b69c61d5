"""The OpenAPI 3.1 document of the release API, served at /api/v2/openapi.json (handler.py): data
in release_api.yaml, with the update feeds' paths from their records (feeds/registry.py;
document.py puts them together). Tests validate it with openapi-spec-validator, hold every
response they receive to it and check it names every route."""
