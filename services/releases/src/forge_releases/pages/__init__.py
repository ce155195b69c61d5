"""The releases service's pages: repository, releases, release and download (docs/pages.md)."""
