package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// The checked floor is the SQL floor plus the reads a correct booking
// cannot skip either: the policy read that locks the user's row (so that
// two bookings of one user cannot both pass a quota) and the GPUs' rows (so
// that writers of one GPU queue instead of deadlocking), as gpubook's own
// texts (checked_sql.go), replayed by pgbench in three round trips — the
// token's look-up; BEGIN with the policy read; the insert with COMMIT —
// where gpubook waits for each statement, BEGIN and COMMIT included. No
// HTTP, no Go, no gpubook code runs: what gpubook adds above it is its
// own cost. PostgreSQL only (SQLite's statements cost no round trip).

const checkedNote = "checked floor"

// checkedStart is where the checked floor's bookings begin: clear of the
// HTTP load and of the plain floor's.
func (t *target) checkedStart() time.Time { return t.start.AddDate(3, 0, 0) }

// pgCheckedFloor runs the checked floor at clients clients for d, then
// deletes its rows. Client c books GPU c, hour k of its own for its k-th
// booking, as user c (mod the load's users), as the plain floor does.
func pgCheckedFloor(ctx context.Context, db *store.DB, dbURL string, t *target, clients int, d time.Duration) (result, error) {
	if err := t.pgbenchReady(clients); err != nil {
		return result{}, err
	}
	res, err := runPgbench(ctx, dbURL, checkedScript(t), clients, d, "-M", "prepared", "-D", "k=0")
	if err != nil {
		return res, err
	}
	return res, deleteFloorRows(ctx, db, checkedNote)
}

// checkedScript is the pgbench script of the checked floor. gpubook's
// parameters become pgbench's variables and expressions: the user, the
// GPU (an array of one), the hour's bounds, now() for the clocks; the
// booking is ahead, so the usage probe's range is empty, as gpubook's is.
func checkedScript(t *target) string {
	policy, insert := checkedPolicySQL, checkedInsertSQL
	start := t.checkedStart().Format(time.RFC3339)
	from := fmt.Sprintf("timestamptz '%s' + :k * interval '1 hour'", start)
	to := fmt.Sprintf("timestamptz '%s' + (:k + 1) * interval '1 hour'", start)
	gpus := "ARRAY[:gpu]"
	note := "'" + checkedNote + "'"
	policy = bindParams(policy, ":uid", ":uid", ":uid", ":uid", gpus)
	insert = bindParams(insert,
		":uid", strconv.FormatInt(t.nodeID, 10), from, to, note, "now()", "now()", // the booking
		from, to, gpus, // its GPU rows
		"now()", ":uid", "'load'", "'"+models.AuditBookingCreate+"'", "'booking'", note, "'127.0.0.1'", // its audit event
		gpus, from, from) // the usage probe, over an empty range
	token := fmt.Sprintf(sqlfloor.TokenUserSQL, "'"+models.HashToken(t.tokens[0])+"'")
	return fmt.Sprintf(`\set k :k + 1
\set gpu %d + :client_id
\set uid %d + :client_id %% %d
%s;
\startpipeline
BEGIN;
%s;
\endpipeline
\startpipeline
%s;
COMMIT;
\endpipeline
`, t.gpuIDs[0], t.users[0], len(t.users), token, policy, insert)
}

var dollarParam = regexp.MustCompile(`\$([0-9]+)`)

// bindParams writes args[n-1] in place of each $n of q. It panics unless
// q's parameters are exactly $1…$len(args): gpubook's statement changed,
// and the script must follow it.
func bindParams(q string, args ...string) string {
	most := 0
	out := dollarParam.ReplaceAllStringFunc(q, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		if n < 1 || n > len(args) {
			panic(fmt.Sprintf("checked floor: the statement has %s, %d arguments given", p, len(args)))
		}
		most = max(most, n)
		return args[n-1]
	})
	if most != len(args) {
		panic(fmt.Sprintf("checked floor: the statement's parameters end at $%d, %d arguments given", most, len(args)))
	}
	return out
}
