"""The release console (docs/console.md): pages where a signed-in publisher does in a browser what
the publishing API and `forge release` do, through the same functions (publish/writes.py,
publish/input.py, publish/handlers.uploaded_asset, the update-key and Tauri-key queries).

Each handler resolves the repository as the API does (404 to whoever may not see it, 401 to an
anonymous visitor, 403 to whoever may see it but not act), then checks the form's origin and CSRF
token, then acts, then answers 303 to a page (or the form again with the error next to its field).
"""
