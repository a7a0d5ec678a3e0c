package reports_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestReportScheduleTwoProcesses: two gpubook processes on one database
// run the weekly job as serve wires it (WeeklyPeriod, Monday 08:00). Both
// start after the due moment, so both try to catch up at once; the period
// claim lets one run it, and the SMTP server gets one email per user.
func TestReportScheduleTwoProcesses(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			url := storetest.MigratedURL(t, dialect)
			dbs := [2]*store.DB{storetest.OpenURL(t, url), storetest.OpenURL(t, url)}
			deliveryData(t, dbs[0])
			srv := smtptest.Start(t, smtptest.Options{})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for _, db := range dbs {
				m, err := mail.New(mail.Settings{Host: "127.0.0.1", Port: srv.Port, From: "gpubook@example.org", TLS: mail.TLSNone, Timeout: time.Second}, nil)
				must(t, err)
				r, err := jobs.New(jobs.Config{Store: db, Clock: clockwork.NewRealClock(), Logger: quietLog(), PeriodCheck: 20 * time.Millisecond})
				must(t, err)
				o, err := mail.NewOutbox(mail.OutboxConfig{Store: db, Sender: m, Logger: quietLog(), Owner: r.Owner()})
				must(t, err)
				must(t, r.RegisterEverywhere("outbox", 50*time.Millisecond, o.Deliver))
				s := models.DefaultReportRules.Schedule
				must(t, r.RegisterPeriodic("weekly-reports", jobs.WeeklyPeriod(shanghai, s.Weekday, s.Hour, s.Minute), reportRun(db).Job))
				wg.Add(1)
				go func() { defer wg.Done(); r.Run(ctx) }()
			}
			srv.Wait(2, 10*time.Second)
			time.Sleep(500 * time.Millisecond) // time for a duplicate to show up, if there were one
			cancel()
			wg.Wait()
			oneEach(t, srv.Messages())
			due := models.DefaultReportRules.Schedule.DueWeek(time.Now(), shanghai)
			var n int64
			dbs[0].Gorm.Table("outbox").Where("dedup_key LIKE ?", "report:"+due.String()+":user:%").Count(&n)
			if n != 2 {
				t.Errorf("%d outbox rows for %s, want 2", n, due)
			}
		})
	}
}
