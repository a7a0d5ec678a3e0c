package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models/store"
)

// Under Run, a migrated PostgreSQL test database is emptied and handed to
// a later test of the same process instead of being dropped and copied
// anew: a copy and its drop cost the server about 80 ms of CPU per test
// (the WAL-logged copy of a 10 MB template, the drop, three connections);
// checking and emptying one about half of that (the server's CPU during
// the models/store tests fell from 17.8 to 14.2 s; docs/performance.md).
//
// A database is used again only when nothing distinguishes it from a fresh
// copy but rows: its schema fingerprint (every relation, column, default,
// index, constraint, trigger and function of the public schema, the
// sequences' settings, the applied migrations, the database's settings,
// the other schemas and extensions) equals that of a fresh copy, it holds
// no prepared transaction, no other session is connected once the test's
// are ended, and it grew by less than recycleGrowth. Anything else (a
// test that migrated down, created day partitions, analysed a table or
// loaded a large data set) is dropped as before. Emptying deletes every
// row with triggers off (their work is undone with the rows) and restarts
// every sequence, so ids start at 1 again as in a fresh copy. A test that
// opened its database with Open lends the check and the emptying a
// connection of its own pool (its session reset with DISCARD ALL): a new
// connection costs the server a process of its own and its first reads of
// the catalogs, which on a small virtual machine came to about a third of
// the store tests' server processes (270 → 178 a run, 13.6–17.1 → 12.5–14.6
// s of their CPU; docs/performance.md).

// recycleGrowth is how much larger than a fresh copy a database may have
// grown and still be emptied row by row (deleting costs per row; a copy
// costs the same for any size).
const recycleGrowth = 4 << 20

// fingerprintSQL describes a database's schema and settings in one text,
// from the catalogs' own columns (expressions as their stored node trees:
// deparsing them took twice as long), then the size of its tables and its
// prepared transactions. A copy of the template keeps the template's oids,
// so they are part of it. Columns are cast to text: name || "char" is
// ambiguous.
const fingerprintSQL = `SELECT md5(concat_ws('|',
 (SELECT string_agg(c.relname::text || ':' || c.relkind::text, ',' ORDER BY c.relname)
    FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace),
 (SELECT string_agg(c.relname::text || '.' || a.attname::text || ':' || a.atttypid::text || ':' || a.atttypmod::text
      || ':' || a.attnotnull::text || ':' || a.attisdropped::text, ',' ORDER BY c.relname, a.attnum)
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0),
 (SELECT string_agg(d.adrelid::text || ':' || d.adnum::text || ':' || md5(d.adbin::text), ',' ORDER BY d.adrelid, d.adnum)
    FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid WHERE c.relnamespace = 'public'::regnamespace),
 (SELECT string_agg(i.indexrelid::text || ':' || i.indrelid::text || ':' || i.indkey::text || ':' || i.indclass::text
      || ':' || i.indisunique::text || ':' || md5(coalesce(i.indpred::text, '') || coalesce(i.indexprs::text, '')), ',' ORDER BY i.indexrelid)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = 'public'::regnamespace),
 (SELECT string_agg(oid::text || ':' || conname::text || ':' || contype::text || ':' || conrelid::text || ':' || confrelid::text
      || ':' || coalesce(conkey::text, '') || ':' || coalesce(confkey::text, '') || ':' || md5(coalesce(conbin::text, '')), ',' ORDER BY oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace),
 (SELECT string_agg(t.oid::text || ':' || t.tgname::text || ':' || t.tgenabled::text, ',' ORDER BY t.oid)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'public'::regnamespace),
 (SELECT string_agg(p.oid::text || ':' || p.proname::text || ':' || md5(p.prosrc), ',' ORDER BY p.oid)
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace),
 (SELECT string_agg(s.seqrelid::text || ':' || s.seqstart::text || ':' || s.seqincrement::text || ':' || s.seqmin::text
      || ':' || s.seqmax::text || ':' || s.seqcycle::text, ',' ORDER BY s.seqrelid)
    FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = 'public'::regnamespace),
 (SELECT string_agg(id::text || ':' || version_id::text || ':' || is_applied::text, ',' ORDER BY id) FROM goose_db_version),
 (SELECT string_agg(array_to_string(setconfig, ';'), ',' ORDER BY setrole)
    FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())),
 (SELECT string_agg(nspname::text, ',' ORDER BY nspname) FROM pg_namespace),
 (SELECT string_agg(extname::text || ':' || extversion, ',' ORDER BY extname) FROM pg_extension),
 (SELECT count(*) FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid
    WHERE c.relnamespace = 'public'::regnamespace)::text
)),
 (SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'),
 (SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database())`

// emptySQL builds the statements that empty a database like the fresh
// copy described by conn's database: a DELETE of every table but the
// migrations' own (a partitioned one with its partitions) and a restart
// of every sequence but the migrations' own, with triggers (foreign keys'
// among them) off.
func emptySQL(ctx context.Context, conn *sql.Conn) (string, error) {
	var tables, seqs string
	err := conn.QueryRowContext(ctx, `SELECT
 coalesce((SELECT string_agg(format('DELETE FROM %I;', relname), ' ' ORDER BY relname) FROM pg_class
    WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition
      AND relname <> 'goose_db_version'), ''),
 coalesce((SELECT string_agg(s.seqrelid::text, ',' ORDER BY s.seqrelid) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
    WHERE c.relnamespace = 'public'::regnamespace AND NOT EXISTS (SELECT 1 FROM pg_depend d
      WHERE d.objid = c.oid AND d.refobjid = 'goose_db_version'::regclass)), '')`).Scan(&tables, &seqs)
	if err != nil {
		return "", err
	}
	// setval(seq, start, false) leaves a sequence as created; ALTER SEQUENCE
	// … RESTART would give each a new file.
	restart := ""
	if seqs != "" {
		restart = "SELECT count(setval(seqrelid, seqstart, false)) FROM pg_sequence WHERE seqrelid IN (" + seqs + ");"
	}
	return "BEGIN; SET LOCAL session_replication_role = replica; " + tables + " " + restart + " COMMIT;", nil
}

// snapshot is what fingerprintSQL reads.
type snapshot struct {
	fingerprint string
	size        int64
	prepared    int
}

func readSnapshot(ctx context.Context, conn *sql.Conn) (snapshot, error) {
	var s snapshot
	err := conn.QueryRowContext(ctx, fingerprintSQL).Scan(&s.fingerprint, &s.size, &s.prepared)
	return s, err
}

// recycler is Run's pool of emptied databases (their names), with what a
// fresh copy looks like (learned from the first copy the process makes)
// and one connection to the server's postgres database for the renames;
// admin is nil until a fresh copy has been read.
type recycler struct {
	fresh snapshot
	empty string // emptySQL of a fresh copy
	free  []string
	admin *sql.DB
}

// takeRecycled returns the name of an emptied database of an earlier
// test, if there is one.
func takeRecycled() (string, bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	r := &run.recycle
	if !run.active || len(r.free) == 0 {
		return "", false
	}
	name := r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	return name, true
}

// learnFresh reads a fresh copy's snapshot once per process, before any
// test has touched it.
func learnFresh(ctx context.Context, url string) error {
	run.mu.Lock()
	known := run.recycle.admin != nil
	run.mu.Unlock()
	if known {
		return nil
	}
	var s snapshot
	var empty string
	err := onConn(ctx, url, func(conn *sql.Conn) (err error) {
		if s, err = readSnapshot(ctx, conn); err == nil {
			empty, err = emptySQL(ctx, conn)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("storetest: fingerprint: %w", err)
	}
	admin, err := sql.Open("pgx", AdminURL())
	if err != nil {
		return err
	}
	admin.SetMaxOpenConns(1)
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.recycle.admin != nil {
		admin.Close()
		return nil
	}
	run.recycle = recycler{fresh: s, empty: empty, admin: admin}
	return nil
}

// onConn runs fn on one connection to the database at url.
func onConn(ctx context.Context, url string, fn func(*sql.Conn) error) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(conn)
}

// errNotRecyclable: the database differs from a fresh copy by more than
// its rows; it is dropped.
var errNotRecyclable = errors.New("not like a fresh copy")

// recycle empties the database name when it is like a fresh copy but for
// its rows, renames it (a session the test left behind that connects
// again then finds no database, as after a drop) and puts it in the pool.
// On an error the caller drops it. With db (the test's own handle on the
// database, or nil), it works on a connection of db's pool, whose session
// already knows the catalogs (a new connection costs the server a process
// and its first reads of them), and closes db before the rename.
func recycle(name string, db *store.DB) error {
	if db != nil {
		defer db.Close()
	}
	run.mu.Lock()
	active, r := run.active, run.recycle
	run.mu.Unlock()
	if !active || r.admin == nil {
		return errNotRecyclable
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	empty := func(conn *sql.Conn) error {
		if err := endOtherSessions(ctx, conn); err != nil {
			return err
		}
		s, err := readSnapshot(ctx, conn)
		if err != nil {
			return err
		}
		if s.fingerprint != r.fresh.fingerprint || s.prepared != 0 || s.size > r.fresh.size+recycleGrowth {
			return errNotRecyclable
		}
		_, err = conn.ExecContext(ctx, r.empty)
		return err
	}
	if err := onOwnConn(ctx, db, empty); errors.Is(err, errNoOwnConn) {
		err = onConn(ctx, replaceDBName(AdminURL(), name), empty)
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if db != nil {
		db.Close() // its sessions end first: the rename fails while one is left (after 5 s of waiting)
	}
	// A session that connected again meanwhile makes the rename fail.
	renamed := randomName("gpubook_test")
	if _, err := r.admin.ExecContext(ctx, "ALTER DATABASE "+name+" RENAME TO "+renamed); err != nil {
		return err
	}
	run.mu.Lock()
	if run.active {
		run.recycle.free = append(run.recycle.free, renamed)
		run.mu.Unlock()
		return nil
	}
	run.mu.Unlock()
	return dropper(AdminURL(), renamed)() // the tests have ended meanwhile
}

// errNoOwnConn: the test's handle has no connection to lend (none given,
// or the test closed it).
var errNoOwnConn = errors.New("no connection of the test's own")

// onOwnConn runs fn on a connection of db's pool, its session state reset
// first (DISCARD ALL: a test may have changed the search path, a timeout,
// its role), or answers errNoOwnConn.
func onOwnConn(ctx context.Context, db *store.DB, fn func(*sql.Conn) error) error {
	if db == nil {
		return errNoOwnConn
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return errNoOwnConn
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "DISCARD ALL"); err != nil {
		return errors.Join(errNoOwnConn, err)
	}
	return fn(conn)
}

// endOtherSessions ends every other session on conn's database (as DROP
// DATABASE … WITH (FORCE) would) and waits until they are gone: a
// session a test left open must not write into the next test's data.
func endOtherSessions(ctx context.Context, conn *sql.Conn) error {
	const others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
	if _, err := conn.ExecContext(ctx, "SELECT pg_terminate_backend(pid) "+others); err != nil {
		return err
	}
	for {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) "+others).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// endRecycling returns the pooled databases' drops and closes the admin
// connection; Run calls it once the tests have ended.
func endRecycling() []func() error {
	run.mu.Lock()
	defer run.mu.Unlock()
	var drops []func() error
	for _, name := range run.recycle.free {
		drops = append(drops, dropper(AdminURL(), name))
	}
	run.recycle.free = nil
	if run.recycle.admin != nil {
		run.recycle.admin.Close()
	}
	return drops
}
