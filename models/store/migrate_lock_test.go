package store_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

const migrateHelperEnv = "GPUBOOK_TEST_MIGRATE_REPLICA_DB"

// TestMigrateReplicaProcess is not a test: TestReplicasMigrateAtOnce runs
// the test binary again with this test alone, as one replica starting up.
func TestMigrateReplicaProcess(t *testing.T) {
	t.Parallel()
	url := os.Getenv(migrateHelperEnv)
	if url == "" {
		t.Skip("a helper process of TestReplicasMigrateAtOnce")
	}
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReplicasMigrateAtOnce: three replica processes start together on an
// empty PostgreSQL database; all of them come up, and the schema is
// complete. Without the migration lock two of them ran the same CREATE
// EXTENSION and one failed on a duplicate key.
func TestReplicasMigrateAtOnce(t *testing.T) {
	t.Parallel()
	for round := range 3 { // three databases side by side, each raced by three replicas
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			t.Parallel()
			replicasMigrate(t, round)
		})
	}
}

func replicasMigrate(t *testing.T, round int) {
	url := storetest.URL(t, store.Postgres)
	cmds := make([]*exec.Cmd, 3)
	outs := make([]*bytes.Buffer, 3)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestMigrateReplicaProcess$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), migrateHelperEnv+"="+url)
		outs[i] = new(bytes.Buffer)
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("round %d: replica %d failed to migrate: %v\n%s", round, i, err, outs[i])
		}
	}
	db := storetest.OpenURL(t, url)
	if n, err := db.Pending(ctx); err != nil || n != 0 {
		t.Errorf("round %d: %d migrations pending afterwards (%v)", round, n, err)
	}
}
