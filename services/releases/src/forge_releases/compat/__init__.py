"""The same releases in the shapes of Gitea's (`/api/v1`) and GitHub's (`/api/v3`, the GitHub
Enterprise layout) release APIs, so tools written for those work by changing one base URL
(docs/compat.md). The queries, access rules and writes are the version-2 API's own."""
