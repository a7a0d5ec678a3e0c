package store

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// trendCacheSize bounds the trend weeks kept: the three before the week
// in progress and before the week just ended, and room for a recompute.
const trendCacheSize = 12

// trendCache keeps the trend weeks of frozen snapshots, decoded once. At
// 512 GPUs each snapshot is 2.4 MB of JSON; a view of the week in
// progress read and decoded three of them (97 ms of SQL, and the decoding)
// every time. A snapshot is kept under its version in the database, so
// that a recompute on any replica is seen at once: on PostgreSQL the row's
// xmin (a new one for every write of the row), read without its data; on
// SQLite, one process, a hash of the data read.
type trendCache struct {
	mu    sync.Mutex
	weeks map[trendKey]*models.TrendWeek
	order []trendKey // oldest first
}

// trendKey is one version of one week's snapshot.
type trendKey struct {
	week, stamp string
	version     int
	frozenAt    int64
}

func (c *trendCache) get(k trendKey) (*models.TrendWeek, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.weeks[k]
	return t, ok
}

func (c *trendCache) put(k trendKey, t *models.TrendWeek) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.weeks[k]; ok {
		return
	}
	if c.weeks == nil {
		c.weeks = map[trendKey]*models.TrendWeek{}
	}
	if len(c.order) >= trendCacheSize {
		delete(c.weeks, c.order[0])
		c.order = c.order[1:]
	}
	c.weeks[k], c.order = t, append(c.order, k)
}

// trendRow is a snapshot's row with its stamp (trendCache); Data is only
// read for the weeks the cache lacks (PostgreSQL) or always (SQLite).
type trendRow struct {
	Week     string    `gorm:"column:week"`
	Version  int       `gorm:"column:version"`
	Data     string    `gorm:"column:data"`
	FrozenAt time.Time `gorm:"column:frozen_at"`
	FrozenBy string    `gorm:"column:frozen_by"`
	Stamp    string    `gorm:"column:stamp"`
}

func (r trendRow) key() trendKey {
	return trendKey{week: r.Week, stamp: r.Stamp, version: r.Version, frozenAt: r.FrozenAt.UnixNano()}
}

func (r trendRow) model() models.FrozenWeek {
	return reportWeekRow{Week: r.Week, Version: r.Version, Data: r.Data, FrozenAt: r.FrozenAt, FrozenBy: r.FrozenBy}.model()
}

// trendWeeks returns the trend weeks of the snapshots of the weeks named,
// by name, from c or else decoded (and kept in c). A snapshot that cannot
// be read is logged and left out: that week is computed from the usage.
func trendWeeks(g *gorm.DB, c *trendCache, pg bool, names map[string]models.Week) (map[string]*models.TrendWeek, error) {
	keys := make([]string, 0, len(names))
	for n := range names {
		keys = append(keys, n)
	}
	out := map[string]*models.TrendWeek{}
	if pg {
		var stamps []trendRow
		err := g.Raw("SELECT week, version, frozen_at, frozen_by, CAST(xmin AS TEXT) AS stamp FROM report_weeks WHERE week IN ?", keys).
			Scan(&stamps).Error
		if err != nil {
			return nil, fmt.Errorf("store: frozen trend: %w", err)
		}
		keys = keys[:0]
		for _, r := range stamps {
			if t, ok := c.get(r.key()); ok {
				out[r.Week] = t
			} else {
				keys = append(keys, r.Week)
			}
		}
		if len(keys) == 0 {
			return out, nil
		}
	}
	sel := "*, '' AS stamp"
	if pg {
		sel = "*, CAST(xmin AS TEXT) AS stamp"
	}
	var rows []trendRow
	if err := g.Table("report_weeks").Select(sel).Where("week IN ?", keys).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: frozen trend: %w", err)
	}
	for _, r := range rows {
		if !pg {
			r.Stamp = fmt.Sprintf("%x", sha256.Sum256([]byte(r.Data)))
		}
		k := r.key()
		if t, ok := c.get(k); ok {
			out[r.Week] = t
			continue
		}
		d, err := r.model().Thaw(names[r.Week])
		if err != nil {
			slog.Warn("report: trend week computed from the usage: its snapshot cannot be read", "week", r.Week, "err", err)
			continue
		}
		t := d.TrendWeek()
		c.put(k, t)
		out[r.Week] = t
	}
	return out, nil
}
