package main

// The checked floors replay the two statements gpubook runs for a booking
// ahead on PostgreSQL, in PostgreSQL's $n parameters: the policy read that
// locks the user's row and the GPUs' rows (models/store/policy_read.go,
// policyReadSQL with its locks; $1–$4 the user, $5 the GPUs as an array),
// and the insert of the booking, its GPU rows and its audit event, which
// also probes for usage stored in its range (bookings_create.go,
// newBookingPG). The store keeps its statements to itself, so they are
// copied here; should gpubook's change, these must follow (bindParams
// refuses a script whose parameters no longer match).

const checkedPolicySQL = `WITH me AS (SELECT id, name, email, is_admin FROM users WHERE id = $1 FOR NO KEY UPDATE)
SELECT 'l' AS kind, scope_id AS ref, 0 AS ref2, scope AS text1, rule AS text2, period AS text3, value AS num, FALSE AS flag, updated_at AS at
	FROM policy_limits
	WHERE scope = 'global' OR (scope = 'team' AND scope_id IN (SELECT team_id FROM memberships WHERE user_id = $2))
		OR (scope = 'user' AND scope_id = $3)
UNION ALL SELECT 's', 0, 0, key, value, '', 0, FALSE, updated_at FROM policy_settings
UNION ALL SELECT 'm', team_id, 0, model, '', '', 0, FALSE, CAST(NULL AS TIMESTAMPTZ) FROM policy_model_teams
UNION ALL SELECT 'u', id, 0, name, email, '', 0, is_admin, CAST(NULL AS TIMESTAMPTZ) FROM me
UNION ALL SELECT 't', m.team_id, 0, t.name, '', '', 0, FALSE, CAST(NULL AS TIMESTAMPTZ)
	FROM memberships m JOIN teams t ON t.id = m.team_id WHERE m.user_id = $4
UNION ALL SELECT 'g', g.id, g.node_id, g.model, n.name, g.uuid, g.idx, g.in_service, CAST(NULL AS TIMESTAMPTZ)
	FROM (SELECT id, node_id, model, uuid, idx, in_service FROM gpus WHERE id = ANY(CAST($5 AS bigint[])) ORDER BY id FOR NO KEY UPDATE) g JOIN nodes n ON n.id = g.node_id`

const checkedInsertSQL = `WITH b AS (
	INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, 'standard', 'confirmed', $6, $7) RETURNING id
), g AS (
	INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking)
	SELECT b.id, x.gpu_id, $8, $9, TRUE FROM b, unnest(CAST($10 AS bigint[])) AS x(gpu_id)
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT $11, $12, $13, $14, $15, CAST(b.id AS text), $16, $17 FROM b
)
SELECT id, EXISTS (SELECT 1 FROM gpu_usage_minutes WHERE gpu_id = ANY(CAST($18 AS bigint[])) AND minute >= $19 AND minute < $20) FROM b`
