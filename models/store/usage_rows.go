package store

import "time"

// The usage tables' rows, shared by the store's reports and the
// telemetry half (models/store/telemetry) that writes them.

// UsageRow is a row of gpu_usage_minutes: one GPU in one minute, as an
// agent reported it, with the stamps the reports read (usage_stamps.go).
type UsageRow struct {
	GPUID       int64     `gorm:"column:gpu_id;primaryKey;autoIncrement:false"`
	Minute      time.Time `gorm:"column:minute;primaryKey"`
	UtilAvgPct  *float64  `gorm:"column:util_avg_pct"`
	UtilMaxPct  *float64  `gorm:"column:util_max_pct"`
	MemUsedMiB  int64     `gorm:"column:mem_used_mib"`
	MemTotalMiB int64     `gorm:"column:mem_total_mib"`
	Samples     int       `gorm:"column:samples"`
	// Stamps for the reports (usage_stamps.go).
	BookingID    *int64 `gorm:"column:booking_id"`
	BookerMemMiB int64  `gorm:"column:booker_mem_mib"`
	TopMemMiB    int64  `gorm:"column:top_mem_mib"`
	UnixMinute   int64  `gorm:"column:unix_minute"`
}

// TableName is the table GORM reads and writes.
func (UsageRow) TableName() string { return "gpu_usage_minutes" }

// UserUsageRow is a row of gpu_user_usage_minutes: one unix user's share
// of one GPU in one minute.
type UserUsageRow struct {
	GPUID     int64     `gorm:"column:gpu_id;primaryKey;autoIncrement:false"`
	Minute    time.Time `gorm:"column:minute;primaryKey"`
	UserName  string    `gorm:"column:user_name;primaryKey"`
	UserID    *int64    `gorm:"column:user_id"`
	UID       int       `gorm:"column:uid"`
	MemoryMiB int64     `gorm:"column:memory_mib"`
	Processes int       `gorm:"column:processes"`
	Busy      bool      `gorm:"column:busy"`
	Booked    bool      `gorm:"column:booked"` // stamp: this user was the booker
	Container string    `gorm:"column:container"`
}

// TableName is the table GORM reads and writes.
func (UserUsageRow) TableName() string { return "gpu_user_usage_minutes" }
