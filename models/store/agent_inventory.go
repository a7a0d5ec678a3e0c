package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// parkedIndex moves a node's GPU indices out of the way while an inventory
// reassigns them, so that UNIQUE (node_id, idx) never sees two GPUs on one
// index in the middle of the transaction.
const parkedIndex = 100000

// ApplyInventory makes the node's GPUs match what its agent reports: a
// known UUID is updated, a hand-registered placeholder (GPU-manual-…) at the
// same index takes the real UUID, anything else is added. A GPU the agent
// no longer reports is marked out of service and never deleted: bookings
// and usage refer to it. A UUID that belongs to another node refuses the
// whole report (403, nothing written). A GPU's MIG instances are applied
// after its row (agent_inventory_mig.go).
func (db *DB) ApplyInventory(ctx context.Context, nodeID int64, inv wire.Inventory, now time.Time) (models.InventoryResult, error) {
	var res models.InventoryResult
	if err := models.AgentError(inv.Validate()); err != nil {
		return res, err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var all []gpuRow
		if err := tx.Where("node_id = ?", nodeID).Order("idx").Find(&all).Error; err != nil {
			return err
		}
		if err := refuseForeign(tx, nodeID, inv.GPUs); err != nil {
			return err
		}
		mine, instances := splitInstances(all)
		plan := planInventory(mine, inv.GPUs)
		res = plan.result
		// An agent sends its inventory at every start and sync of its GPUs:
		// the same GPUs write nothing, so every replica's kept read of the
		// inventory (inventory.go) stays.
		if plan.changes(mine) {
			// Only whole GPUs move: an instance keeps its index for good.
			if err := tx.Model(&gpuRow{}).Where("node_id = ? AND parent_id IS NULL", nodeID).Update("idx", gorm.Expr("idx + ?", parkedIndex)).Error; err != nil {
				return err
			}
			if err := plan.apply(tx, nodeID, utc(now)); err != nil {
				return err
			}
		}
		if err := applyInstances(tx, nodeID, mine, instances, inv.GPUs, now); err != nil {
			return err
		}
		t := utc(now)
		if err := tx.Model(&agentNodeRow{}).Where("node_id = ?", nodeID).Updates(map[string]any{"inventory_at": t,
			"agent_version": clip(inv.AgentVersion, 100), "driver_version": clip(inv.DriverVersion, 100), "updated_at": t}).Error; err != nil {
			return err
		}
		return audit(tx, models.Actor{Label: "agent"}, auditInventory, "node", nodeID, res)
	})
	if err != nil {
		return models.InventoryResult{}, mapErr(err, "GPU")
	}
	return res, nil
}

// refuseForeign fails when any reported UUID (a GPU's or an instance's) is
// already another node's.
func refuseForeign(tx *gorm.DB, nodeID int64, gpus []wire.GPU) error {
	if len(gpus) == 0 {
		return nil
	}
	uuids := make([]string, 0, len(gpus))
	for _, g := range gpus {
		uuids = append(uuids, g.UUID)
		for _, m := range g.Instances {
			uuids = append(uuids, m.UUID)
		}
	}
	var foreign []string
	if err := tx.Model(&gpuRow{}).Where("uuid IN ? AND node_id <> ?", uuids, nodeID).Order("uuid").Pluck("uuid", &foreign).Error; err != nil {
		return err
	}
	if len(foreign) > 0 {
		return models.ErrForeignGPU(foreign[0])
	}
	return nil
}

type inventoryPlan struct {
	updates []gpuRow // existing rows with their new values
	inserts []gpuRow
	missing []gpuRow // not reported: parked above the reported indices
	result  models.InventoryResult
}

// planInventory matches reported GPUs to the node's rows.
func planInventory(mine []gpuRow, reported []wire.GPU) inventoryPlan {
	var p inventoryPlan
	byUUID := map[string]int{}
	placeholder := map[int]int{}
	for i, g := range mine {
		byUUID[g.UUID] = i
		if strings.HasPrefix(g.UUID, "GPU-manual-") {
			placeholder[g.Index] = i
		}
	}
	used := make([]bool, len(mine))
	top := -1
	for _, g := range reported {
		top = max(top, g.Index)
		i, ok := byUUID[g.UUID]
		if !ok {
			if j, ph := placeholder[g.Index]; ph && !used[j] {
				i, ok = j, true
				p.result.Replaced++
			}
		} else {
			p.result.Updated++
		}
		row := gpuRow{UUID: g.UUID, Index: g.Index, Model: clip(strings.TrimSpace(g.Model), 100), MemoryMiB: g.MemoryMiB, MIG: g.MIG,
			MIGSlices: parentSlices(g), InService: true}
		if !ok {
			p.inserts = append(p.inserts, row)
			p.result.Added++
			continue
		}
		used[i] = true
		old := mine[i]
		row.ID = old.ID
		row.InService, row.OutOfServiceReason = old.InService, old.OutOfServiceReason
		if !old.InService && old.OutOfServiceReason == models.NotReportedReason {
			row.InService, row.OutOfServiceReason = true, "" // it came back
		}
		p.updates = append(p.updates, row)
	}
	for i, g := range mine {
		if !used[i] {
			top++
			g.Index = top
			p.missing = append(p.missing, g)
			p.result.Missing++
		}
	}
	sort.Slice(p.inserts, func(i, j int) bool { return p.inserts[i].Index < p.inserts[j].Index })
	return p
}

// changes tells whether applying p would change any of mine (the node's
// whole GPUs as read).
func (p inventoryPlan) changes(mine []gpuRow) bool {
	if len(p.inserts) > 0 {
		return true
	}
	was := make(map[int64]gpuRow, len(mine))
	for _, g := range mine {
		was[g.ID] = g
	}
	for _, g := range p.updates {
		o := was[g.ID]
		if g.UUID != o.UUID || g.Index != o.Index || g.Model != o.Model || g.MemoryMiB != o.MemoryMiB || g.MIG != o.MIG ||
			g.MIGSlices != o.MIGSlices || g.InService != o.InService || g.OutOfServiceReason != o.OutOfServiceReason {
			return true
		}
	}
	for _, g := range p.missing {
		if o := was[g.ID]; g.Index != o.Index || o.InService {
			return true
		}
	}
	return false
}

func (p inventoryPlan) apply(tx *gorm.DB, nodeID int64, now time.Time) error {
	for _, g := range p.updates {
		if err := tx.Model(&gpuRow{}).Where("id = ?", g.ID).Updates(map[string]any{"uuid": g.UUID, "idx": g.Index,
			"model": g.Model, "memory_mib": g.MemoryMiB, "mig": g.MIG, "mig_slices": g.MIGSlices, "in_service": g.InService,
			"out_of_service_reason": g.OutOfServiceReason, "updated_at": now}).Error; err != nil {
			return fmt.Errorf("store: inventory update: %w", err)
		}
	}
	for _, g := range p.missing {
		up := map[string]any{"idx": g.Index, "updated_at": now}
		if g.InService {
			up["in_service"], up["out_of_service_reason"] = false, models.NotReportedReason
		}
		if err := tx.Model(&gpuRow{}).Where("id = ?", g.ID).Updates(up).Error; err != nil {
			return fmt.Errorf("store: inventory missing: %w", err)
		}
	}
	for _, g := range p.inserts {
		g.NodeID, g.CreatedAt, g.UpdatedAt = nodeID, now, now
		if err := tx.Omit("node_name").Create(&g).Error; err != nil {
			return fmt.Errorf("store: inventory add: %w", err)
		}
	}
	return nil
}

// AgentSchedule returns the node's confirmed bookings that overlap the
// schedule window at now, and its ETag. Agents ask every 30 s and nearly
// always get 304, so the schedule comes from one indexed query (node, its
// GPUs, their booking_gpus in the window, the bookings, their owners) and
// the ETag is the hash of what the agent would receive: any change the
// agent must see (a booking created, cancelled, released, extended or
// moved, a login changed, a booking entering or leaving the window as time
// passes) changes it, and nothing else does.
func (db *DB) AgentSchedule(ctx context.Context, nodeID int64, now time.Time) (wire.Schedule, string, error) {
	from, until := models.ScheduleWindow(now)
	rows, err := queryAll(db.raw(ctx), agentScheduleSQL, scanScheduleRow,
		utc(until), utc(from), models.StatusConfirmed, utc(until), utc(from), nodeID)
	if err != nil {
		return wire.Schedule{}, "", fmt.Errorf("store: agent schedule: %w", err)
	}
	if len(rows) == 0 {
		return wire.Schedule{}, "", mapErr(gorm.ErrRecordNotFound, "node")
	}
	logins, err := db.scheduleLogins(ctx, rows)
	if err != nil {
		return wire.Schedule{}, "", err
	}
	out := wire.Schedule{Node: rows[0].NodeName, GeneratedAt: utc(now), From: from, Until: until, Bookings: []wire.Booking{}}
	var last int64 // the booking of the previous row: rows come by booking, then GPU
	for _, r := range rows {
		if r.BookingID == nil {
			continue // a GPU with no booking in the window
		}
		id := *r.BookingID
		if id == last {
			if n := len(out.Bookings); n > 0 && out.Bookings[n-1].ID == id {
				out.Bookings[n-1].GPUUUIDs = appendUUID(out.Bookings[n-1].GPUUUIDs, r.UUID)
			}
			continue
		}
		last = id
		// The node learns logins only, never e-mail addresses. A booking
		// whose owner has no login of their own is left out: its GPUs then
		// count as unbooked rather than opening someone else's login.
		login := logins[*r.UserID]
		if login == "" {
			slog.WarnContext(ctx, "booking left out of the agent schedule: its user has no unix login of their own", "booking", id, "user", *r.UserID)
			continue
		}
		out.Bookings = append(out.Bookings, wire.Booking{ID: id, User: login, StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC(),
			Kind: r.Kind, GPUUUIDs: appendUUID([]string{}, r.UUID)})
	}
	return out, models.ScheduleETag(out.Bookings), nil
}

// scheduleRow is one (GPU, booking) pair of a node's schedule; the booking
// columns are NULL for a GPU with no booking in the window, so that a node
// with none still answers with its name in the same query.
type scheduleRow struct {
	NodeName     string
	UUID         *string
	BookingID    *int64
	UserID       *int64
	StartsAt     time.Time
	EndsAt       time.Time
	Kind         string
	Email        string
	Unix         *string
	AssumedName  string
	AssumedTaken int
}

// scanScheduleRow reads scheduleSQL's columns by hand: every node asks
// twice a minute, and GORM's Raw and reflective Scan around the query
// were about 7 % of the portal's CPU under a fleet's agents (pprof at
// 32,000 GPUs). A GPU without a booking reads its booking columns as
// NULL, kept as zero values.
func scanScheduleRow(rows *sql.Rows) (r scheduleRow, err error) {
	var starts, ends sql.Null[time.Time]
	var kind, email, assumed sql.NullString
	err = rows.Scan(&r.NodeName, &r.UUID, &r.BookingID, &r.UserID, &starts, &ends, &kind, &email, &r.Unix, &assumed, &r.AssumedTaken)
	r.StartsAt, r.EndsAt, r.Kind, r.Email, r.AssumedName = starts.V, ends.V, kind.String, email.String, assumed.String
	return r, err
}

// agentScheduleSQL is scheduleSQL in both dialects, made once.
var agentScheduleSQL = rawSQL{sqlite: scheduleSQL(SQLite), postgres: DollarParams(scheduleSQL(Postgres))}

// scheduleSQL reads a node's schedule rows. The window is applied to
// booking_gpus (indexed by GPU and start) and to bookings (the range the
// agent receives; the store keeps both equal). assumed_name is the email's
// local part, computed in SQL so that the unix_names check for an assumed
// login runs in the same statement.
func scheduleSQL(dialect string) string {
	local := "CASE WHEN instr(u.email, '@') > 0 THEN substr(u.email, 1, instr(u.email, '@') - 1) ELSE u.email END"
	if dialect == Postgres {
		local = "split_part(u.email, '@', 1)"
	}
	return `SELECT n.name AS node_name, g.uuid, b.id AS booking_id, b.user_id, b.starts_at, b.ends_at, b.kind,
	u.email, u.unix_name, ` + local + ` AS assumed_name,
	CASE WHEN (u.unix_name IS NULL OR u.unix_name = '') AND EXISTS (SELECT 1 FROM unix_names x WHERE x.name = ` + local + `) THEN 1 ELSE 0 END AS assumed_taken
FROM nodes n
LEFT JOIN gpus g ON g.node_id = n.id
LEFT JOIN booking_gpus bg ON bg.gpu_id = g.id AND bg.starts_at < ? AND bg.ends_at > ?
LEFT JOIN bookings b ON b.id = bg.booking_id AND b.node_id = n.id AND b.status = ? AND b.starts_at < ? AND b.ends_at > ?
LEFT JOIN users u ON u.id = b.user_id
WHERE n.id = ?
ORDER BY b.starts_at, b.id, g.id`
}

// scheduleLogins is unixLogins for the owners of the schedule rows, read
// from the rows themselves. Only an owner whose stored email is not in
// normal form (the SQL local part differs from models.UnixName) costs the
// general look-up.
func (db *DB) scheduleLogins(ctx context.Context, rows []scheduleRow) (map[int64]string, error) {
	out := map[int64]string{}
	var odd []int64
	for _, r := range rows {
		if r.UserID == nil {
			continue
		}
		switch {
		case r.Unix != nil && *r.Unix != "":
			out[*r.UserID] = *r.Unix
		case models.UnixName(r.Email) != r.AssumedName:
			odd = append(odd, *r.UserID)
		case r.AssumedTaken == 0:
			out[*r.UserID] = r.AssumedName
		default:
			out[*r.UserID] = "" // extras need a primary, so the owner is someone else
		}
	}
	if len(odd) == 0 {
		return out, nil
	}
	more, err := db.unixLogins(ctx, odd)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, more)
	return out, nil
}

// appendUUID adds a GPU's UUID to a booking's list when it is one the agent
// can use (a placeholder is not).
func appendUUID(list []string, uuid *string) []string {
	if uuid != nil && wire.ValidGPUUUID(*uuid) {
		return append(list, *uuid)
	}
	return list
}
