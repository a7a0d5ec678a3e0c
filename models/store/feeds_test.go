package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestFeedTokens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		other := &models.User{Email: "bo@example.org", Name: "Bo"}
		if err := db.CreateUser(ctx, other, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		team := &models.Team{Name: "vision"}
		if err := db.CreateTeam(ctx, team, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

		own, plain, err := db.CreateFeedToken(ctx, u.ID, 0, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		if !models.ValidFeedToken(plain) || own.Hash != models.HashToken(plain) || own.TeamID != 0 {
			t.Fatalf("token %q stored as %+v: want a gpf_ token kept only as its hash", plain, own)
		}
		tok, owner, err := db.FeedOwner(ctx, plain, now)
		if err != nil || owner.ID != u.ID || tok.ID != own.ID || tok.TeamID != 0 || tok.LastUsedAt == nil || !tok.LastUsedAt.Equal(now) {
			t.Fatalf("feed owner = %+v %+v %v", tok, owner, err)
		}
		// A fetch within feedUseEvery writes nothing; a later one notes itself.
		if tok, _, _ := db.FeedOwner(ctx, plain, now.Add(5*time.Minute)); !tok.LastUsedAt.Equal(now) {
			t.Errorf("last used after 5 min = %v, want %v", tok.LastUsedAt, now)
		}
		if tok, _, _ := db.FeedOwner(ctx, plain, now.Add(20*time.Minute)); !tok.LastUsedAt.Equal(now.Add(20 * time.Minute)) {
			t.Errorf("last used after 20 min = %v", tok.LastUsedAt)
		}

		// A new address for the same feed revokes the old one.
		_, plain2, err := db.CreateFeedToken(ctx, u.ID, 0, now.Add(time.Hour), models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.FeedOwner(ctx, plain, now); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("replaced token: %v, want ENOTFOUND", err)
		}
		if _, o, err := db.FeedOwner(ctx, plain2, now); err != nil || o.ID != u.ID {
			t.Errorf("new token: %v %v", o, err)
		}
		teamTok, teamPlain, err := db.CreateFeedToken(ctx, u.ID, team.ID, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		if tok, _, err := db.FeedOwner(ctx, teamPlain, now); err != nil || tok.TeamID != team.ID || tok.TeamName != "vision" {
			t.Errorf("team feed owner = %+v %v", tok, err)
		}
		list, err := db.FeedTokens(ctx, u.ID)
		if err != nil || len(list) != 2 || list[0].TeamID != 0 || list[1].TeamID != team.ID || list[1].TeamName != "vision" || list[1].ID != teamTok.ID {
			t.Fatalf("feed tokens = %+v %v; want the own feed, then the team's", list, err)
		}

		// The database keeps one active token per feed, whatever writes.
		err = db.Gorm.Exec("INSERT INTO feed_tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)",
			u.ID, models.HashToken("gpf_second"), now).Error
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unique") {
			t.Errorf("a second active token for the own feed: %v, want the unique index's refusal", err)
		}

		if err := db.RevokeFeedToken(ctx, other.ID, teamTok.ID, now, models.CLIActor); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("revoke of another user's token: %v, want ENOTFOUND", err)
		}
		if err := db.RevokeFeedToken(ctx, u.ID, teamTok.ID, now, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeFeedToken(ctx, u.ID, teamTok.ID, now, models.CLIActor); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("revoke twice: %v", err)
		}
		if _, _, err := db.FeedOwner(ctx, teamPlain, now); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("revoked token: %v", err)
		}
		if list, _ := db.FeedTokens(ctx, u.ID); len(list) != 1 || list[0].TeamID != 0 {
			t.Errorf("feed tokens after revoke = %+v", list)
		}
		events, _ := db.AuditEvents(ctx, models.AuditFilter{})
		counts := map[string]int{}
		for _, e := range events {
			counts[e.Action]++
		}
		if counts[models.AuditFeedCreate] != 3 || counts[models.AuditFeedRevoke] != 1 {
			t.Errorf("audit: %d creates, %d revokes; want 3 and 1", counts[models.AuditFeedCreate], counts[models.AuditFeedRevoke])
		}
	})
}

func TestFeedEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ada, node := fixture(t, db, 2)
		bo := &models.User{Email: "bo@example.org", Name: "Bo"}
		cy := &models.User{Email: "cy@example.org", Name: "Cy"}
		for _, u := range []*models.User{bo, cy} {
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		team := &models.Team{Name: "nlp"}
		if err := db.CreateTeam(ctx, team, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		for _, m := range []models.Membership{{TeamID: team.ID, UserID: ada.ID, Role: models.RoleLead}, {TeamID: team.ID, UserID: bo.ID, Role: models.RoleMember}} {
			m.Source = models.SourceManual
			if err := db.SetMembership(ctx, &m, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		book := func(u *models.User, gpu int, start time.Time, at time.Time) *models.Booking {
			t.Helper()
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[gpu].ID}, StartsAt: start, EndsAt: start.Add(2 * time.Hour)},
				models.DefaultBookingLimits, at, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		old := book(ada, 0, now.Add(-40*24*time.Hour), now.Add(-41*24*time.Hour))
		recent := book(ada, 0, now.Add(-2*24*time.Hour), now.Add(-3*24*time.Hour))
		soon := book(ada, 0, now.Add(time.Hour), now)
		gone := book(ada, 1, now.Add(5*time.Hour), now)
		bos := book(bo, 1, now.Add(time.Hour), now)
		cys := book(cy, 0, now.Add(5*time.Hour), now)
		if _, err := db.ExtendBooking(ctx, soon.ID, ada, soon.EndsAt.Add(time.Hour), models.DefaultBookingLimits, now); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpdateBookingNote(ctx, soon.ID, ada, "a note is no new sequence", models.DefaultBookingLimits, now); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CancelBooking(ctx, gone.ID, ada, now); err != nil {
			t.Fatal(err)
		}
		from := now.Add(-models.FeedPast)
		ids := func(evs []models.FeedEvent) (out []int64) {
			for _, e := range evs {
				out = append(out, e.ID)
			}
			return out
		}
		mine, err := db.FeedEvents(ctx, models.FeedFilter{UserID: ada.ID, From: from})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(mine), []int64{recent.ID, soon.ID, gone.ID}; !equalIDs(got, want) {
			t.Fatalf("own feed = %v, want %v (not %d, ended 40 days ago)", got, want, old.ID)
		}
		seqs := map[int64]int{}
		for _, e := range mine {
			seqs[e.ID] = e.Sequence
		}
		if seqs[recent.ID] != 0 || seqs[soon.ID] != 1 || seqs[gone.ID] != 1 {
			t.Errorf("sequences = %v; want 0 untouched, 1 after one extend (the note does not count), 1 after the cancel", seqs)
		}
		if mine[2].Status != models.StatusCancelled || len(mine[1].GPUIDs) != 1 || mine[1].NodeName != "gpu01" || mine[1].Note != "a note is no new sequence" {
			t.Errorf("events = %+v", mine)
		}
		teamEvents, err := db.FeedEvents(ctx, models.FeedFilter{TeamID: team.ID, From: from})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(teamEvents), []int64{recent.ID, soon.ID, bos.ID, gone.ID}; !equalIDs(got, want) {
			t.Errorf("team feed = %v, want %v (Cy's %d is not the team's)", got, want, cys.ID)
		}
	})
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
