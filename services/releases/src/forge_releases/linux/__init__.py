"""Linux package repositories (docs/releases.md "Linux package repositories"): a signed apt and
dnf/yum repository per repository, made from the `.deb` and `.rpm` assets of its releases."""
