package models

// AuditFilterText is the rule for the audit log's free-text filters (the
// target type, a user's email): one line, no longer than an email may be.
// PostgreSQL answers NUL or invalid UTF-8 in a query parameter with an
// error of its own (a 500 once), so the filter refuses them first.
var AuditFilterText = TextRule{Max: 254}
