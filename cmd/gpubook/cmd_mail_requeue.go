package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gpubook/gpubook/models"
)

// mailRequeue runs "gpubook mail requeue ID|--all-unconfirmed": it puts
// unconfirmed mail back in the queue. An unconfirmed message was inside
// its SMTP transaction when its sender stopped, so the recipient may have
// it already; the operator decides that a duplicate beats a lost email.
func (c *cli) mailRequeue(ctx context.Context, args []string) error {
	f := newFlags("mail requeue", "gpubook mail requeue ID... | --all-unconfirmed",
		"Queues unconfirmed mail again: the sender stopped during its SMTP transaction, so the recipient\nmay already have it and may get it twice. Each re-queue is written to the audit log.", false)
	all := f.Bool("all-unconfirmed", false, "re-queue every unconfirmed message")
	cfg, pos, err := f.parse(c, args, 0, 1000)
	if err != nil {
		return err
	}
	if *all == (len(pos) > 0) {
		f.printUsage(c.stderr)
		return fmt.Errorf("mail requeue: give message IDs or --all-unconfirmed, not both or neither")
	}
	ids := make([]int64, 0, len(pos))
	for _, p := range pos {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("mail requeue: %q is not a message ID (see gpubook mail status)", p)
		}
		ids = append(ids, id)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("mail requeue: %w", err)
	}
	defer db.Close()
	n, err := db.RequeueUnconfirmed(ctx, models.Actor{Label: "cli"}, ids)
	if err != nil {
		return c.explain("mail requeue", err)
	}
	fmt.Fprintf(c.stdout, "queued %d unconfirmed message(s) again; a recipient may get a duplicate\n", n)
	return nil
}
