package mail_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// The helper replica reads its database and SMTP server from these.
const (
	helperDBEnv   = "GPUBOOK_TEST_OUTBOX_REPLICA_DB"
	helperSMTPEnv = "GPUBOOK_TEST_OUTBOX_REPLICA_SMTP"
)

// TestOutboxReplicaProcess is not a test: TestKillReplicaMidBatch runs the
// test binary again with this test alone as a replica process, which
// claims a batch, sends until the SMTP server stalls and is then killed.
func TestOutboxReplicaProcess(t *testing.T) {
	url := os.Getenv(helperDBEnv)
	if url == "" {
		t.Skip("a helper process of TestKillReplicaMidBatch")
	}
	port, _ := strconv.Atoi(os.Getenv(helperSMTPEnv))
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.New(mail.Settings{Host: "127.0.0.1", Port: port, From: "gpubook@example.org", TLS: mail.TLSNone, Timeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := mail.NewOutbox(mail.OutboxConfig{Store: db, Sender: m, Logger: quiet(), Owner: "replica-to-kill",
		SendLease: 5 * time.Second, SendMargin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o.DeliverOnce(ctx) // stalls on the SMTP server until the parent kills this process
	t.Fatal("the round returned; the SMTP server should have stalled it")
}

// TestKillReplicaMidBatch: a replica process claims 50 messages, sends 9,
// stalls inside the 10th's SMTP transaction and is killed with SIGKILL.
// After its lease another replica delivers the 40 it never attempted; the
// 10th alone is unconfirmed. Every message arrives exactly once, or is
// explicitly unconfirmed because its transaction had started.
func TestKillReplicaMidBatch(t *testing.T) {
	url := storetest.MigratedURL(t, store.Postgres)
	db := storetest.OpenURL(t, url)
	enqueue(t, db, 50, time.Now().Add(-time.Minute))
	stalling := smtptest.Start(t, smtptest.Options{HangAt: 10, HangAfterData: 30 * time.Second})
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutboxReplicaProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperDBEnv+"="+url, helperSMTPEnv+"="+strconv.Itoa(stalling.Port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got := len(stalling.Wait(10, 20*time.Second)); got != 10 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the replica sent %d messages before the stall, want 10", got)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code runs
		t.Fatal(err)
	}
	cmd.Wait()

	// Another replica, once the dead one's 5-second lease is over.
	healthy := smtptest.Start(t, smtptest.Options{})
	clock := clockwork.NewFakeClockAt(time.Now().Add(time.Minute))
	r := newOutbox(t, db, newMailer(t, healthy.Port, nil), clock, nil)
	if got := deliver(t, r); got.Recovered != 41 || got.Sent != 40 {
		t.Errorf("round after the kill: %+v, want 41 recovered (40 queued again, 1 unconfirmed) and 40 sent", got)
	}
	if got := deliver(t, r); got.Claimed != 0 {
		t.Errorf("a later round claimed %+v", got)
	}
	arrived := map[string]int{}
	for _, msg := range append(stalling.Messages(), healthy.Messages()...) {
		p, err := smtptest.Parse(msg.Data)
		if err != nil {
			t.Fatal(err)
		}
		arrived[p.Header.Get("Message-Id")]++
	}
	for i := range 50 {
		key := fmt.Sprintf("test:%03d", i)
		n := arrived["<"+models.MessageID(key)+">"]
		m, err := db.OutboxMessageByKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 9: // in its SMTP transaction when the replica died
			if m.Status != models.OutboxUnconfirmed || m.AttemptStartedAt == nil || n != 1 {
				t.Errorf("%s: %s, attempt started %v, arrived %d times; want unconfirmed, started, once", key, m.Status, m.AttemptStartedAt, n)
			}
		case m.Status != models.OutboxSent || n != 1:
			t.Errorf("%s: %s, arrived %d times; want sent, once", key, m.Status, n)
		}
	}
}
