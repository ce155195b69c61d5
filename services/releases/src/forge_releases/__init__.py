"""The releases service: the version-2 release API, the update check, downloads and publishing."""
