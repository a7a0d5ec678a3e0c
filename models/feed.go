package models

import (
	"context"
	"time"
)

// FeedTokenPrefix starts every calendar feed token: unlike a personal API
// token (gpb_) it grants nothing but reading one feed.
const FeedTokenPrefix = "gpf_"

// feedTokenLen is the prefix and 52 base32 characters (256 random bits).
const feedTokenLen = len(FeedTokenPrefix) + 52

// Audit actions of feed tokens.
const (
	AuditFeedCreate = "feed.create"
	AuditFeedRevoke = "feed.revoke"
)

// FeedPast is how far back a feed reaches: bookings that ended (or were
// cancelled) longer ago drop out of it; every later one is in it.
const FeedPast = 30 * 24 * time.Hour

// FeedToken is the secret in the URL of a private calendar feed: the
// owner's own bookings (TeamID 0) or a team's bookings (its leads', or an
// admin's). Only its hash is stored; an owner has at most one active token
// per feed.
type FeedToken struct {
	ID         int64
	UserID     int64
	TeamID     int64 // 0: the owner's own bookings
	TeamName   string
	Hash       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// NewFeedSecret returns a fresh feed token (shown to its owner once) and its hash.
func NewFeedSecret() (plain, hash string, err error) {
	return newSecret(FeedTokenPrefix)
}

// ValidFeedToken reports whether s has the shape of a feed token, so that
// a malformed one is refused without a database lookup.
func ValidFeedToken(s string) bool {
	if len(s) != feedTokenLen || s[:len(FeedTokenPrefix)] != FeedTokenPrefix {
		return false
	}
	for _, r := range s[len(FeedTokenPrefix):] {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// CanFeedTeam reports whether u may have team teamID's feed: the rule of
// the team's usage page, its leads and admins. It is asked when the token
// is made and again at every fetch, so a lead who steps down loses the feed.
func CanFeedTeam(u *User, teamID int64, mine []Membership) bool {
	return CanSeeTeamUsage(u, teamID, mine)
}

// FeedFilter selects a feed's bookings: one user's or the members of one
// team, ending after From, cancelled ones included.
type FeedFilter struct {
	UserID int64
	TeamID int64
	From   time.Time
}

// FeedEvent is one booking as a calendar event. Sequence counts the
// changes to its time or status (extend, release, cancel, pre-emption,
// service), as iCalendar's SEQUENCE wants.
type FeedEvent struct {
	Booking
	Sequence int
}

// FeedStore keeps feed tokens and reads what a feed shows.
type FeedStore interface {
	// CreateFeedToken makes a new token for the user's feed (teamID 0: their
	// own) and revokes the one it replaces, in one transaction.
	CreateFeedToken(ctx context.Context, userID, teamID int64, now time.Time, by Actor) (tok *FeedToken, plain string, err error)
	// FeedTokens lists a user's active feed tokens, their own feed first.
	FeedTokens(ctx context.Context, userID int64) ([]FeedToken, error)
	// RevokeFeedToken revokes one of the user's active tokens; any other id is ENOTFOUND.
	RevokeFeedToken(ctx context.Context, userID, id int64, now time.Time, by Actor) error
	// FeedOwner returns an active token and its owner (ENOTFOUND for an
	// unknown or revoked one) and notes the fetch now and then.
	FeedOwner(ctx context.Context, plain string, now time.Time) (*FeedToken, *User, error)
	FeedEvents(ctx context.Context, f FeedFilter) ([]FeedEvent, error)
}
