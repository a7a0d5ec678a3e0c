package models

import (
	"context"
	"time"
)

// The interfaces below are what handlers and commands consume; models/store
// implements them on GORM for PostgreSQL and SQLite. Every method takes ctx
// first, returns ENOTFOUND (never nil, nil) for a missing row and ECONFLICT
// for a uniqueness or overlap violation.

// UserStore reads and writes users.
type UserStore interface {
	User(ctx context.Context, id int64) (*User, error)
	UserByEmail(ctx context.Context, email string) (*User, error)
	Users(ctx context.Context) ([]User, error)
	CountUsers(ctx context.Context) (int64, error)
	CreateUser(ctx context.Context, u *User, by Actor) error
	UpdateUser(ctx context.Context, u *User, by Actor) error
	SetAdmin(ctx context.Context, userID int64, admin bool, by Actor) error
	UnixIdentity(ctx context.Context, userID int64) (UnixIdentity, error)
	SetUnixLogin(ctx context.Context, userID int64, x UnixIdentity, by Actor) error
	// MapUnixName makes name one of the user's extra logins and moves the
	// stored use of it that belonged to nobody to them (the cluster page).
	MapUnixName(ctx context.Context, name string, userID int64, by Actor) (int64, error)
}

// TeamStore reads and writes teams and memberships.
type TeamStore interface {
	Team(ctx context.Context, id int64) (*Team, error)
	Teams(ctx context.Context) ([]Team, error)
	CreateTeam(ctx context.Context, t *Team, by Actor) error
	Members(ctx context.Context, teamID int64) ([]Membership, error)
	MembershipsOf(ctx context.Context, userID int64) ([]Membership, error)
	AllMemberships(ctx context.Context) ([]Membership, error)
	SetMembership(ctx context.Context, m *Membership, by Actor) error
	RemoveMembership(ctx context.Context, teamID, userID int64, by Actor) error
	SetTeamShareWeight(ctx context.Context, id int64, w float64, by Actor) error
	SetTeamWholeBookings(ctx context.Context, id int64, on bool, by Actor) error
}

// NodeStore reads and writes nodes and their GPUs.
type NodeStore interface {
	Node(ctx context.Context, id int64) (*Node, error)
	Nodes(ctx context.Context) ([]Node, error) // with GPUs, ordered by name and index
	CreateNode(ctx context.Context, n *Node, gpus []GPU, by Actor) error
	RenameNode(ctx context.Context, id int64, name string, by Actor) error
	GPU(ctx context.Context, id int64) (*GPU, error)
	GPUs(ctx context.Context) ([]GPU, error)
	// GPUsByID returns the GPUs of ids that exist, by ID.
	GPUsByID(ctx context.Context, ids []int64) (map[int64]GPU, error)
	SetGPUService(ctx context.Context, id int64, inService bool, reason string, by Actor) error
}

// BookingStore reads and writes bookings. CreateBooking validates the
// request and checks for conflicts in the same transaction as the insert.
type BookingStore interface {
	Booking(ctx context.Context, id int64) (*Booking, error)
	Bookings(ctx context.Context, f BookingFilter) ([]Booking, error)
	CreateBooking(ctx context.Context, req NewBooking, lim BookingLimits, now time.Time, by Actor) (*Booking, error)
	// The changes below ask the rules in booking_rules.go at now, write the
	// booking and its audit event in one transaction, and return the booking
	// as committed. ExtendBooking's ECONFLICT carries Msg.Data["FreeUntil"].
	CancelBooking(ctx context.Context, id int64, actor *User, now time.Time) (*Booking, error)
	ReleaseBooking(ctx context.Context, id int64, actor *User, now time.Time) (*Booking, error)
	ExtendBooking(ctx context.Context, id int64, actor *User, newEnd time.Time, lim BookingLimits, now time.Time) (*Booking, error)
	UpdateBookingNote(ctx context.Context, id int64, actor *User, note string, lim BookingLimits, now time.Time) (*Booking, error)
	FindSlots(ctx context.Context, q SlotQuery, lim BookingLimits, now time.Time) ([]Slot, error)
}

// TokenStore reads and writes personal API tokens.
type TokenStore interface {
	CreateToken(ctx context.Context, userID int64, name string, now time.Time, by Actor) (tok *APIToken, plain string, err error)
	Tokens(ctx context.Context, userID int64) ([]APIToken, error) // userID 0: all
	RevokeToken(ctx context.Context, id int64, now time.Time, by Actor) error
	UserByToken(ctx context.Context, plain string, now time.Time) (*User, error)
}

// AuditStore reads the audit log; writes happen inside the other stores'
// transactions so that a change and its record land together.
type AuditStore interface {
	AuditEvents(ctx context.Context, f AuditFilter) ([]AuditEvent, error)
	RecordAudit(ctx context.Context, e AuditEvent) error
	// AuditNames looks up the names of the things audit sentences name.
	AuditNames(ctx context.Context, ids map[string][]int64) (AuditNames, error)
}

// Clock returns the current time; tests pass a fixed one.
type Clock func() time.Time

// SSOStore keeps the group mappings and signs people in from ID tokens.
type SSOStore interface {
	GroupMappings(ctx context.Context) ([]GroupMapping, error)
	CreateGroupMapping(ctx context.Context, g *GroupMapping, by Actor) error
	DeleteGroupMapping(ctx context.Context, id int64, by Actor) error
	SignInSSO(ctx context.Context, id SSOIdentity, rules GroupRules, now time.Time, ip string) (*User, error)
}

// ReportStore reads one week's figures for every user (computed in the
// database) and the weekly email preferences.
type ReportStore interface {
	ReportWeek(ctx context.Context, w Week, asOf time.Time, rules ReportRules) (*WeekData, error)
	WeekReader
	RecomputeWeek(ctx context.Context, w Week, now time.Time, rules ReportRules, by Actor, diff WeekDiff) (before, after *WeekData, changes []FigureChange, err error)
	ReportEmail(ctx context.Context, userID int64) (bool, error)
	SetReportEmail(ctx context.Context, userID int64, on bool) error
	ReportEmailOptOuts(ctx context.Context) (map[int64]bool, error)
}
