package telemetry_test

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// benchBatch is one hour of 8 GPUs, one user each: what an agent delivers
// after a one-hour outage (480 GPU-minutes, 480 user-minutes).
func benchBatch(nodeNo int, from time.Time, minutes int) wire.UsageBatch {
	b := storetest.UsageBatch(nodeNo, from, minutes, 8)
	for i := range b.Records {
		b.Records[i].Users = []wire.UserUsage{{User: "ada", UID: 1001, MemoryMiB: 1000, Processes: 1, Busy: true}}
	}
	return b
}

// BenchmarkUsageIngest compares, on PostgreSQL, the portal's ingestion of
// usage batches (validation, GPU and user mapping, INSERT … ON CONFLICT DO
// NOTHING into both tables, in one transaction) with the database's raw
// rate for the same rows (pgx COPY into the same two tables) in the same run.
// Run: CI=true go test -run '^$' -bench UsageIngest -benchtime 20x ./models/store/
func BenchmarkUsageIngest(b *testing.B) {
	f := newIngestBench(b, store.Postgres)
	b.Run("portal", f.portal)
	b.Run("raw_copy", func(b *testing.B) {
		conn, err := f.db.SQL.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		recs := 0
		for range b.N {
			gpuRows, userRows := f.rawRows(f.next())
			err := conn.Raw(func(dc any) error {
				pc := dc.(driver.Conn).(*stdlib.Conn).Conn()
				tx, err := pc.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback(ctx)
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"gpu_usage_minutes"}, gpuColumns, pgx.CopyFromRows(gpuRows)); err != nil {
					return err
				}
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"gpu_user_usage_minutes"}, userColumns, pgx.CopyFromRows(userRows)); err != nil {
					return err
				}
				return tx.Commit(ctx)
			})
			if err != nil {
				b.Fatal(fmt.Errorf("copy: %w", err))
			}
			recs += len(gpuRows)
		}
		b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
	})
}

// BenchmarkUsageIngestSQLite is the same ingestion on SQLite, where the
// driver itself is most of the cost; the raw baseline inserts the same rows
// with one prepared statement per table in one transaction, so a change of
// driver shows in both figures.
// Run: go test -run '^$' -bench UsageIngestSQLite -benchtime 20x ./models/store/
func BenchmarkUsageIngestSQLite(b *testing.B) {
	f := newIngestBench(b, store.SQLite)
	b.Run("portal", f.portal)
	b.Run("raw_insert", func(b *testing.B) {
		recs := 0
		for range b.N {
			gpuRows, userRows := f.rawRows(f.next())
			if err := f.sqliteInsert(gpuRows, userRows); err != nil {
				b.Fatal(fmt.Errorf("insert: %w", err))
			}
			recs += len(gpuRows)
		}
		b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
	})
}

var (
	gpuColumns  = []string{"gpu_id", "minute", "util_avg_pct", "util_max_pct", "mem_used_mib", "mem_total_mib", "samples"}
	userColumns = []string{"gpu_id", "minute", "user_name", "user_id", "uid", "memory_mib", "processes", "busy"}
)

// ingestBench is one 8-GPU node with one user, and a clock that hands
// every batch its own hour so that no row conflicts.
type ingestBench struct {
	db     *store.DB
	nodeID int64
	n      *models.Node
	user   *models.User
	minute int
	mins   int // minutes per batch: 60 after an outage, 1 in the steady state
}

func newIngestBench(b *testing.B, dialect string) *ingestBench {
	db := storetest.Open(b, dialect)
	gpus, _ := models.NewNodeGPUs("bench", 8, "NVIDIA A100-SXM4-80GB", 81920)
	node := &models.Node{Name: "bench"}
	if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ApplyInventory(ctx, node.ID, storetest.Inventory(9, 8), storetest.AgentAt0); err != nil {
		b.Fatal(err)
	}
	u := &models.User{Email: "ada@example.org", Name: "Ada"}
	if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
		b.Fatal(err)
	}
	n, err := db.Node(ctx, node.ID)
	if err != nil {
		b.Fatal(err)
	}
	return &ingestBench{db: db, nodeID: node.ID, n: n, user: u, mins: 60}
}

func (f *ingestBench) next() time.Time {
	f.minute += 60
	return storetest.AgentAt0.Add(time.Duration(f.minute) * time.Minute)
}

// portal ingests one batch per iteration through the store, and reports
// beside the rate the CPU a record cost this process and PostgreSQL's
// server processes of the test's database: on a shared machine those move
// far less with the load than the rate does.
func (f *ingestBench) portal(b *testing.B) {
	recs := 0
	server := pgServerCPU(b, f.db)
	server0, cpu0 := server(), cpuTime()
	for range b.N {
		batch := benchBatch(9, f.next(), f.mins)
		res, err := telemetry.New(f.db).IngestUsage(ctx, f.nodeID, batch, 0, storetest.AgentAt0.Add(1000*24*time.Hour))
		if err != nil || res.Inserted != len(batch.Records) {
			b.Fatalf("%+v %v", res, err)
		}
		recs += len(batch.Records)
	}
	b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(recs), "cpu-µs/record")
	if f.db.Dialect == store.Postgres {
		b.ReportMetric(float64((server()-server0).Microseconds())/float64(recs), "pg-cpu-µs/record")
	}
}

// cpuTime is the CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pgServerCPU returns a function that reads the CPU used so far by the
// PostgreSQL server processes serving db's database (0 on SQLite), from
// /proc: the server's share of what a store call costs.
func pgServerCPU(tb testing.TB, db *store.DB) func() time.Duration {
	if db.Dialect != store.Postgres {
		return func() time.Duration { return 0 }
	}
	var name string
	if err := db.SQL.QueryRow("SELECT current_database()").Scan(&name); err != nil {
		tb.Fatal(err)
	}
	return func() time.Duration {
		var ticks int64
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, c := range cmdlines {
			title, err := os.ReadFile(c)
			if err != nil || !bytes.HasPrefix(title, []byte("postgres: ")) || !bytes.Contains(title, []byte(" "+name+" ")) {
				continue
			}
			stat, err := os.ReadFile(filepath.Join(filepath.Dir(c), "stat"))
			if err != nil {
				continue
			}
			// Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				s, _ := strconv.ParseInt(f[12], 10, 64)
				ticks += u + s
			}
		}
		return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ = 100
	}
}

// rawRows is one hour of the node's rows for both tables, in the column
// order of gpuColumns and userColumns.
func (f *ingestBench) rawRows(from time.Time) (gpuRows, userRows [][]any) {
	for m := range f.mins {
		for g := range 8 {
			t := from.Add(time.Duration(m) * time.Minute)
			avg, peak := float64(10*g), float64(10*g+5)
			gpuRows = append(gpuRows, []any{f.n.GPUs[g].ID, t, avg, peak, int64(1000), int64(81920), 6})
			userRows = append(userRows, []any{f.n.GPUs[g].ID, t, "ada", f.user.ID, 1001, int64(1000), 1, true})
		}
	}
	return gpuRows, userRows
}

// sqliteInsert writes the rows in one transaction with one prepared
// statement per table.
func (f *ingestBench) sqliteInsert(gpuRows, userRows [][]any) error {
	tx, err := f.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{{"gpu_usage_minutes", gpuColumns, gpuRows}, {"gpu_user_usage_minutes", userColumns, userRows}} {
		q := "INSERT INTO " + t.table + " (" + strings.Join(t.cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(t.cols)-1) + ")"
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		for _, r := range t.rows {
			if _, err := st.ExecContext(ctx, r...); err != nil {
				st.Close()
				return err
			}
		}
		st.Close()
	}
	return tx.Commit()
}

// BenchmarkUsageIngestSteady is the steady state: every minute each node
// sends one batch of 8 records (one per GPU, one user each). The portal's
// IngestUsage beside the least any store could do with the same rows: one
// transaction with one multi-row INSERT per table.
//
//	CI=true go test -run '^$' -bench UsageIngestSteady -benchtime 2000x ./models/store/
func BenchmarkUsageIngestSteady(b *testing.B) {
	for _, dialect := range []string{store.SQLite, store.Postgres} {
		b.Run(dialect, func(b *testing.B) {
			f := newIngestBench(b, dialect)
			f.mins = 1
			b.Run("portal", f.portal)
			b.Run("multi_row_insert", func(b *testing.B) {
				recs := 0
				for range b.N {
					gpuRows, userRows := f.rawRows(f.next())
					if err := f.multiRowInsert(dialect, gpuRows, userRows); err != nil {
						b.Fatal(err)
					}
					recs += len(gpuRows)
				}
				b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
			})
		})
	}
}

// multiRowInsert writes the rows in one transaction, one INSERT per table.
func (f *ingestBench) multiRowInsert(dialect string, gpuRows, userRows [][]any) error {
	tx, err := f.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{{"gpu_usage_minutes", gpuColumns, gpuRows}, {"gpu_user_usage_minutes", userColumns, userRows}} {
		var q strings.Builder
		var args []any
		q.WriteString("INSERT INTO " + t.table + " (" + strings.Join(t.cols, ", ") + ") VALUES ")
		for i, r := range t.rows {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for j := range r {
				if j > 0 {
					q.WriteString(", ")
				}
				args = append(args, r[j])
				if dialect == store.Postgres {
					fmt.Fprintf(&q, "$%d", len(args))
				} else {
					q.WriteString("?")
				}
			}
			q.WriteString(")")
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}
