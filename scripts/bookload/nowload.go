package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// "Book now + release" is what a user at a shell does most: one GPU from
// now, used, then given back. Each client owns one GPU (so at most as
// many clients as GPUs) and books it from now for an hour, then releases
// it; released in its first second, the booking is cancelled whole, the
// same statements as a later release. The floor does the same database
// work with no HTTP and no gpubook code: the token's user, the three
// inserts of a booking from now; the token's user again, then the release
// (the booking cancelled, its GPU row freed, its audit event).

const nowNote = "now floor"

// nowPairs runs book-now + release pairs from clients clients for d,
// client c on GPU c as user c.
func (t *target) nowPairs(ctx context.Context, clients int, d time.Duration) result {
	hc := loadClient(clients)
	return driveEach(clients, d, func(c int) error {
		return bookNowRelease(ctx, hc, t.url, t.tokens[c%len(t.tokens)], t.gpuIDs[c])
	})
}

// barePairs is the bare HTTP server's figure for a pair: two requests.
func (b *ceiling) barePairs(ctx context.Context, t *target, clients int, d time.Duration) result {
	hc := loadClient(clients)
	return driveEach(clients, d, func(c int) error {
		if err := post(ctx, hc, b.url, t.tokens[c%len(t.tokens)], t.body(c)); err != nil {
			return err
		}
		return post(ctx, hc, b.url, t.tokens[c%len(t.tokens)], t.body(c))
	})
}

// driveEach is drive with a fixed identity per client: client c calls
// op(c) one call after another until d has passed.
func driveEach(clients int, d time.Duration, op func(c int) error) result {
	var mu sync.Mutex
	res := result{}
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				err := op(c)
				lat := time.Since(t0)
				mu.Lock()
				res.lat = append(res.lat, lat)
				if err != nil {
					res.errors++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	return res
}

// bookNowRelease is one pair on GPU g as the user of token.
func bookNowRelease(ctx context.Context, hc *http.Client, base, token string, g int64) error {
	now := time.Now().UTC().Truncate(time.Second)
	body := fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s","note":"now"}`, g, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	id, err := apiCall(ctx, hc, base+"/api/v1/bookings", token, body, http.StatusCreated)
	if err != nil {
		return err
	}
	_, err = apiCall(ctx, hc, fmt.Sprintf("%s/api/v1/bookings/%d/release", base, id), token, "", http.StatusOK)
	return err
}

// apiCall posts body and returns the answer's id; any other status than
// want is a failure.
func apiCall(ctx context.Context, hc *http.Client, url, token, body string, want int) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != want {
		return 0, fmt.Errorf("status %d: %s", res.StatusCode, raw)
	}
	var v struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.ID, nil
}

// nowFloor measures the floor of a pair at clients clients for d, then
// deletes its rows.
func nowFloor(ctx context.Context, dialect string, db *store.DB, dbURL string, t *target, clients int, d time.Duration) (result, error) {
	var res result
	var err error
	if dialect == store.Postgres {
		res, err = pgNowFloor(ctx, dbURL, t, clients, d)
	} else {
		res = sqliteNowFloor(ctx, db, t, clients, d)
	}
	if err != nil {
		return res, err
	}
	return res, deleteFloorRows(ctx, db, nowNote)
}

// pgNowFloor runs the pair as pgbench statements, prepared: the token, the
// booking's one insert statement (its id kept with \gset), the token
// again, the release's one statement. Client c books GPU c.
func pgNowFloor(ctx context.Context, dbURL string, t *target, clients int, d time.Duration) (result, error) {
	if err := t.pgbenchReady(clients); err != nil {
		return result{}, err
	}
	token := fmt.Sprintf(sqlfloor.TokenUserSQL, "'"+models.HashToken(t.tokens[0])+"'")
	script := fmt.Sprintf(`\set gpu %d + :client_id
\set uid %d + :client_id %% %d
%s;
WITH b AS (
	INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
	VALUES (:uid, %d, date_trunc('second', now()), date_trunc('second', now()) + interval '1 hour', '%s', 'standard', 'confirmed', now(), now()) RETURNING id
), g AS (
	INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking)
	SELECT b.id, :gpu, date_trunc('second', now()), date_trunc('second', now()) + interval '1 hour', TRUE FROM b
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT now(), :uid, 'load', '%s', 'booking', CAST(b.id AS text), '%s', '127.0.0.1' FROM b
)
SELECT id AS bid FROM b \gset
%s;
WITH b AS (
	UPDATE bookings SET status = 'cancelled', released_at = now(), updated_at = now() WHERE id = :bid RETURNING id
), g AS (
	UPDATE booking_gpus SET blocking = FALSE WHERE booking_id = :bid
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT now(), :uid, 'load', '%s', 'booking', CAST(b.id AS text), '%s', '127.0.0.1' FROM b
)
SELECT id FROM b;
`, t.gpuIDs[0], t.users[0], len(t.users), token, t.nodeID, nowNote, models.AuditBookingCreate, nowNote,
		token, models.AuditBookingRelease, nowNote)
	return runPgbench(ctx, dbURL, script, clients, d, "-M", "prepared")
}

// sqliteNowFloor is the same work on SQLite, on the store's own pool
// (sqlfloor): the token query, BEGIN IMMEDIATE, the three inserts, COMMIT;
// the token query, BEGIN IMMEDIATE, the two updates and the audit insert,
// COMMIT.
func sqliteNowFloor(ctx context.Context, db *store.DB, t *target, clients int, d time.Duration) result {
	conn := sqlfloor.New(db)
	hash := models.HashToken(t.tokens[0])
	return driveEach(clients, d, func(c int) error {
		return conn.BookNowAndRelease(ctx, sqlfloor.Pair{TokenHash: hash, UserID: t.users[c%len(t.users)], NodeID: t.nodeID,
			GPU: t.gpuIDs[c], Note: nowNote})
	})
}

// measureNow prints the book-now + release rows of one database.
func measureNow(ctx context.Context, d string, o options, db *store.DB, dbURL string, t *target, bare *ceiling, hf *httpFloor, out io.Writer) error {
	for _, c := range o.clients {
		if c > len(t.gpuIDs) {
			return fmt.Errorf("book now + release: at most %d clients (one GPU each)", len(t.gpuIDs))
		}
		res := t.nowPairs(ctx, c, o.maxTime/3)
		ceil := bare.barePairs(ctx, t, c, o.maxTime/3)
		floor, err := nowFloor(ctx, d, db, dbURL, t, c, o.maxTime/3)
		if err != nil {
			return err
		}
		httpFloor, err := hf.pairs(ctx, db, t, c, o.maxTime/3)
		if err != nil {
			return err
		}
		if err := callsFailed(c, map[string]result{"bare HTTP": ceil, "SQL floor": floor, "HTTP floor": httpFloor}); err != nil {
			return err
		}
		bound := 1 / (1/ceil.perSecond() + 1/floor.perSecond())
		fmt.Fprintf(out, "| %s | %d | %.0f | %.1f | %.1f | %d | %.0f | %.0f | %.0f | %.2f | %.0f | %.2f |\n", d, c, res.perSecond(),
			ms(res.quantile(0.5)), ms(res.quantile(0.99)), res.errors, ceil.perSecond(), floor.perSecond(), bound, res.perSecond()/bound,
			httpFloor.perSecond(), res.perSecond()/httpFloor.perSecond())
	}
	return nil
}
