package store_test

import (
	"slices"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestSetUnixLoginRefusesAssumed: a name another user goes by without a
// login of their own (their email's local part) is refused to an admin
// too, naming that user; a user keeps a name they own even when it is
// someone else's local part; once that user's login is set the name is free.
func TestSetUnixLoginRefusesAssumed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		anna := &models.User{Email: "anna.schmidt@example.org", Name: "Anna"}
		bob := &models.User{Email: "bob@example.org", Name: "Bob"}
		for _, u := range []*models.User{anna, bob} {
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range []models.UnixIdentity{
			{Name: "anna.schmidt", Source: models.UnixSourceAdmin},
			{Name: "bob", Extra: []string{"anna.schmidt"}, Source: models.UnixSourceAdmin},
			{Name: "anna.schmidt", Source: models.UnixSourceSSO},
		} {
			err := db.SetUnixLogin(ctx, bob.ID, x, models.CLIActor)
			if e := models.AsError(err); e.Code != models.ECONFLICT || e.Msg.Key != "err.unix_name_assumed" || e.Msg.Data["Email"] != "anna.schmidt@example.org" {
				t.Errorf("bob takes %+v: %v, want err.unix_name_assumed naming anna", x, err)
			}
		}
		// Her own assumed name is hers to make explicit.
		if err := db.SetUnixLogin(ctx, anna.ID, models.UnixIdentity{Name: "anna.schmidt", Source: models.UnixSourceSSO}, models.CLIActor); err != nil {
			t.Errorf("anna sets her own: %v", err)
		}
		if err := db.SetUnixLogin(ctx, anna.ID, models.UnixIdentity{Name: "aschmidt", Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetUnixLogin(ctx, bob.ID, models.UnixIdentity{Name: "bob", Extra: []string{"anna.schmidt"}, Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
			t.Errorf("freed name: %v", err)
		}
		// A later user whose local part bob already owns does not take it
		// from him, and bob keeps it when his extras change.
		late := &models.User{Email: "bob@other.example", Name: "Other Bob"}
		if err := db.CreateUser(ctx, late, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetUnixLogin(ctx, bob.ID, models.UnixIdentity{Name: "bob", Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
			t.Errorf("bob keeps his own name: %v", err)
		}
	})
}

// TestTeamNamesIgnoreCaseMigration: migration 00025 keeps the oldest of
// teams whose names differ only in case and gives the others their id, so
// that its unique index on lower(name) can be built; after it the
// database refuses "VISION" beside "Vision" even past the store's check.
func TestTeamNamesIgnoreCaseMigration(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for {
			v, err := db.MigrateDownOne(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if v == 25 {
				break
			}
		}
		for _, name := range []string{"Vision", "vision", "NLP", "VISION"} {
			if err := db.Gorm.Exec("INSERT INTO teams (name, created_at) VALUES (?, CURRENT_TIMESTAMP)", name).Error; err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.MigrateUp(ctx); err != nil {
			t.Fatal(err)
		}
		teams, err := db.Teams(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tm := range teams {
			got = append(got, tm.Name)
		}
		if want := []string{"NLP", "Vision", "VISION (4)", "vision (2)"}; !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("teams = %q, want %q", got, want)
		}
		err = db.Gorm.Exec("INSERT INTO teams (name, created_at) VALUES ('nlp', CURRENT_TIMESTAMP)").Error
		if err == nil {
			t.Error("the database took nlp beside NLP")
		}
		if err := db.CreateTeam(ctx, &models.Team{Name: "nLp"}, models.CLIActor); models.AsError(err).Msg.Key != "err.team_name_taken" {
			t.Errorf("CreateTeam nLp: %v, want err.team_name_taken", err)
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
