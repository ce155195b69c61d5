"""Reading the audit log over the version-2 API (docs/audit.md), and its retention."""
