package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// importCmd runs "gpubook import bookings FILE.csv".
func (c *cli) importCmd(ctx context.Context, args []string) error {
	return c.group(ctx, "import", args, []subcommand{
		{"bookings", c.importBookings},
	})
}

// importBookings imports a lab's history (a spreadsheet, TensorHive or
// LibreBooking export) in one transaction: all or nothing unless
// --skip-bad, every rejected row listed with its line and reason.
func (c *cli) importBookings(ctx context.Context, args []string) error {
	f := newFlags("import bookings", "gpubook import bookings FILE.csv [--skip-bad]",
		"Imports past and future bookings. Columns: user email, node, GPU indexes (\"0;1\"), start, end[, note];\n"+
			"times in RFC 3339 or \"YYYY-MM-DD HH:MM\" in the cluster's time zone; an optional header line.\n"+
			"All or nothing unless --skip-bad; overlaps (within the file or with bookings) are rejected, and rows\n"+
			"that start more than GPUBOOK_IMPORT_YEARS_BACK (10) years ago or end more than GPUBOOK_IMPORT_YEARS_AHEAD (2)\n"+
			"years ahead.", false)
	skip := f.Bool("skip-bad", false, "import the good rows and skip the rejected ones")
	cfg, pos, err := f.parse(c, args, 1, 1)
	if err != nil {
		return err
	}
	file, err := os.Open(pos[0])
	if err != nil {
		return fmt.Errorf("import bookings: %w", err)
	}
	defer file.Close()
	rows, bad, err := cfg.bookingLimits().ImportRules(cfg.Location, c.now()).Parse(file)
	if err != nil {
		return c.explain("import bookings", err)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: import bookings: %w", err)
	}
	defer db.Close()
	res, err := db.ImportBookings(ctx, rows, bad, *skip, c.now(), models.CLIActor)
	if err != nil {
		return c.explain("import bookings", err)
	}
	for _, r := range res.Rejects {
		fmt.Fprintf(c.stdout, "line %d: %s\n", r.Line, c.tr.Msg(r.Reason))
	}
	if !res.Written {
		return fmt.Errorf("import bookings: %d of %d rows rejected; nothing imported (--skip-bad imports the good rows)", len(res.Rejects), res.Rows)
	}
	fmt.Fprintf(c.stdout, "imported %d bookings of %d rows; %d rejected\n", res.Imported, res.Rows, len(res.Rejects))
	return c.importFrozenWeeks(ctx, db, cfg, rows, res.Rejects)
}

// importFrozenWeeks names the frozen weeks the imported rows change (their
// own hours, or the trend and fair share of the three weeks after) and
// how to recompute them: a frozen week keeps its figures until then.
func (c *cli) importFrozenWeeks(ctx context.Context, db *store.DB, cfg Config, rows []models.ImportRow, rejects []models.ImportReject) error {
	rejected := map[int]bool{}
	for _, r := range rejects {
		rejected[r.Line] = true
	}
	var spans []models.Span
	for _, r := range rows {
		if !rejected[r.Line] {
			spans = append(spans, models.Span{Start: r.Start, End: r.End})
		}
	}
	frozen, err := db.FrozenWeeks(ctx)
	if err != nil {
		return fmt.Errorf("cli: import bookings: %w", err)
	}
	var names []string
	for _, w := range models.ImportedWeeks(spans, cfg.Location) {
		if frozen[w.String()] {
			names = append(names, w.String())
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(c.stdout, "frozen weeks these bookings change, which keep their figures until recomputed: %s\n", strings.Join(names, ", "))
		for _, n := range names {
			fmt.Fprintf(c.stdout, "  gpubook report recompute --week %s\n", n)
		}
	}
	return nil
}
