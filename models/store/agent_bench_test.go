package store_test

import (
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// benchBatch is one hour of 8 GPUs, one user each: what an agent delivers
// after a one-hour outage (480 GPU-minutes, 480 user-minutes).
func benchBatch(nodeNo int, from time.Time) models.AgentUsageBatch {
	b := usageBatch(nodeNo, from, 60, 8)
	for i := range b.Records {
		b.Records[i].Users = []models.AgentUserUsage{{User: "ada", UID: 1001, MemoryMiB: 1000, Processes: 1, Busy: true}}
	}
	return b
}

// BenchmarkUsageIngest compares, on PostgreSQL, the portal's ingestion of
// usage batches (validation, GPU and user mapping, INSERT … ON CONFLICT DO
// NOTHING into both tables, in one transaction) with the database's raw
// rate for the same rows (pgx COPY into the same two tables) in the same run.
// Run: CI=true go test -run '^$' -bench UsageIngest -benchtime 20x ./models/store/
func BenchmarkUsageIngest(b *testing.B) {
	db := storetest.Open(b, store.Postgres)
	gpus, _ := models.NewNodeGPUs("bench", 8, "NVIDIA A100-SXM4-80GB", 81920)
	node := &models.Node{Name: "bench"}
	if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ApplyInventory(ctx, node.ID, inventory(9, 8), at0); err != nil {
		b.Fatal(err)
	}
	u := &models.User{Email: "ada@example.org", Name: "Ada"}
	if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
		b.Fatal(err)
	}
	n, _ := db.Node(ctx, node.ID)
	minute := 0
	next := func() time.Time { minute += 60; return at0.Add(time.Duration(minute) * time.Minute) }
	b.Run("portal", func(b *testing.B) {
		recs := 0
		for range b.N {
			batch := benchBatch(9, next())
			res, err := db.IngestUsage(ctx, node.ID, batch, 0, at0.Add(1000*24*time.Hour))
			if err != nil || res.Inserted != len(batch.Records) {
				b.Fatalf("%+v %v", res, err)
			}
			recs += len(batch.Records)
		}
		b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("raw_copy", func(b *testing.B) {
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		recs := 0
		for range b.N {
			from := next()
			var gpuRows, userRows [][]any
			for m := range 60 {
				for g := range 8 {
					t := from.Add(time.Duration(m) * time.Minute)
					avg, peak := float64(10*g), float64(10*g+5)
					gpuRows = append(gpuRows, []any{n.GPUs[g].ID, t, avg, peak, int64(1000), int64(81920), 6})
					userRows = append(userRows, []any{n.GPUs[g].ID, t, "ada", u.ID, 1001, int64(1000), 1, true})
				}
			}
			err := conn.Raw(func(dc any) error {
				pc := dc.(driver.Conn).(*stdlib.Conn).Conn()
				tx, err := pc.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback(ctx)
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"gpu_usage_minutes"}, []string{"gpu_id", "minute", "util_avg_pct", "util_max_pct", "mem_used_mib", "mem_total_mib", "samples"}, pgx.CopyFromRows(gpuRows)); err != nil {
					return err
				}
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"gpu_user_usage_minutes"}, []string{"gpu_id", "minute", "user_name", "user_id", "uid", "memory_mib", "processes", "busy"}, pgx.CopyFromRows(userRows)); err != nil {
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
