"""The publishing API (the write side): create, edit and delete releases, upload and delete assets.

handlers.py parses and renders; writes.py runs each change in one transaction with its event
(events.py) and then drops the repository from the release cache; queries.py holds the SQL,
input.py and names.py the validation, uploads.py the streaming of a file into storage.
"""
