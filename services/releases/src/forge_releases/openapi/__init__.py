"""The OpenAPI 3.1 document of the release API, built in code (document.py and the path modules
it assembles) and served at /api/v2/openapi.json (handler.py). Tests hold every response they
receive to it and check it names every route."""
