package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// unixNameRow is one explicit login name: its primary key makes a name
// belong to one user only, whether it is their primary or an extra one.
type unixNameRow struct {
	Name      string `gorm:"column:name;primaryKey"`
	UserID    int64  `gorm:"column:user_id"`
	IsPrimary bool   `gorm:"column:is_primary"`
}

func (unixNameRow) TableName() string { return "unix_names" }

// UnixIdentity returns the user's login as set (primary, extras, source);
// Name is empty while it is only assumed from the email.
func (db *DB) UnixIdentity(ctx context.Context, userID int64) (models.UnixIdentity, error) {
	u, err := db.User(ctx, userID)
	if err != nil {
		return models.UnixIdentity{}, err
	}
	var rows []unixNameRow
	if err := db.Gorm.WithContext(ctx).Where("user_id = ? AND NOT is_primary", userID).Order("name").Find(&rows).Error; err != nil {
		return models.UnixIdentity{}, fmt.Errorf("store: unix identity: %w", err)
	}
	x := models.UnixIdentity{Name: u.Unix, Source: u.UnixSource, Extra: []string{}}
	for _, r := range rows {
		x.Extra = append(x.Extra, r.Name)
	}
	return x, nil
}

// SetUnixLogin replaces the user's login names with x (an empty x.Name goes
// back to the assumed one), refusing a name another user owns, and
// records the change in the audit log.
func (db *DB) SetUnixLogin(ctx context.Context, userID int64, x models.UnixIdentity, by models.Actor) error {
	if err := x.Validate(); err != nil {
		return err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return setUnixLogin(tx, userID, x, by)
	})
	return mapErr(err, "user")
}

// setUnixLogin is SetUnixLogin inside tx, for the SSO sign-in too. x is
// validated. Nothing is written or audited when nothing changes, so that
// each sign-in does not add an entry.
func setUnixLogin(tx *gorm.DB, userID int64, x models.UnixIdentity, by models.Actor) error {
	var u userRow
	if err := tx.Select("id, unix_name, unix_source").Take(&u, "id = ?", userID).Error; err != nil {
		return err
	}
	var old []unixNameRow
	if err := tx.Where("user_id = ?", userID).Order("name").Find(&old).Error; err != nil {
		return err
	}
	if unixUnchanged(u, old, x) {
		return nil
	}
	names := x.Names()
	if len(names) > 0 {
		var taken []unixNameRow
		if err := tx.Where("name IN ? AND user_id <> ?", names, userID).Order("name").Find(&taken).Error; err != nil {
			return err
		}
		if len(taken) > 0 {
			return models.ErrUnixNameTaken(taken[0].Name)
		}
		if err := refuseAssumed(tx, userID, newNames(names, old)); err != nil {
			return err
		}
	}
	if err := tx.Where("user_id = ?", userID).Delete(&unixNameRow{}).Error; err != nil {
		return err
	}
	for i, n := range names {
		if err := tx.Create(&unixNameRow{Name: n, UserID: userID, IsPrimary: i == 0}).Error; err != nil {
			return err
		}
	}
	err := tx.Model(&userRow{}).Where("id = ?", userID).Updates(map[string]any{
		"unix_name": sql.NullString{String: x.Name, Valid: x.Name != ""}, "unix_source": x.Source, "updated_at": utc(time.Now())}).Error
	if err != nil {
		return err
	}
	before := make([]string, len(old))
	for i, r := range old {
		before[i] = r.Name
	}
	return audit(tx, by, models.AuditUserUnix, "user", userID, map[string]any{
		"unix": x.Name, "extra": x.Extra, "source": x.Source, "before": before})
}

// newNames are the names of names the user does not own yet.
func newNames(names []string, old []unixNameRow) []string {
	var out []string
	for _, n := range names {
		if !slices.ContainsFunc(old, func(r unixNameRow) bool { return r.Name == n }) {
			out = append(out, n)
		}
	}
	return out
}

// refuseAssumed refuses (ErrUnixNameAssumed) a name that another user,
// with no login set, goes by on the nodes: the local part of their email.
// Their bookings reach the nodes under it (unixLogins), so whoever took it
// would take those, and the nodes would treat that user's processes as
// unbooked. An admin moves it by setting that user's login first.
func refuseAssumed(tx *gorm.DB, userID int64, names []string) error {
	for chunk := range slices.Chunk(names, insertChunk) {
		conds := make([]string, len(chunk))
		args := make([]any, len(chunk))
		for i, n := range chunk {
			conds[i], args[i] = "email LIKE ?", n+"@%" // _ widens the match; the exact test is below
		}
		var rows []userRow
		err := tx.Select("id, email").Where("unix_name IS NULL AND id <> ?", userID).Where(strings.Join(conds, " OR "), args...).
			Order("id").Find(&rows).Error
		if err != nil {
			return err
		}
		for _, n := range chunk {
			for _, r := range rows {
				if models.UnixName(r.Email) == n {
					return models.ErrUnixNameAssumed(n, r.Email)
				}
			}
		}
	}
	return nil
}

// unixUnchanged reports whether x is what the user already has.
func unixUnchanged(u userRow, old []unixNameRow, x models.UnixIdentity) bool {
	if u.Unix.String != x.Name || u.UnixSource != x.Source {
		return false
	}
	have := make([]string, len(old))
	for i, r := range old {
		have[i] = r.Name
	}
	want := slices.Clone(x.Names())
	slices.Sort(want)
	return slices.Equal(have, want)
}

// unixNames maps the unix names an agent reported to gpubook users. An
// explicit name (primary or extra, unix_names) wins; a name nobody owns
// explicitly falls back to the assumed one, the local part of the email of
// a user who has no login set. For that it reads only the users whose
// email's local part is one of the names, through an index on that local
// part (migration 00034), not every user: ingestion is the hot path, every
// usage batch with users runs it, and a scan of 2,000 users was a tenth of
// the database's CPU under a fleet's ingest. Two users sharing a local
// part are both read, so UnixNameIndex maps it to nobody.
func (db *DB) unixNames(ctx context.Context, names []string) (map[string]int64, error) {
	return unixNamesIn(db.raw(ctx), names)
}

// unixNamesSQL reads, in one statement, who owns the unix names ?1 (a
// list) explicitly (rows with a name), and the users without a unix name
// of their own whose email's local part is one of the names ?2 (the same
// list; rows with an email). The local-part expression is the one the
// partial index users_assumed_login_idx is built on, in each dialect.
var unixNamesSQL = rawSQL{
	sqlite: `SELECT name, user_id, '' FROM unix_names WHERE name IN (SELECT value FROM json_each(?))
	UNION ALL SELECT '', id, email FROM users WHERE unix_name IS NULL AND substr(email, 1, instr(email, '@') - 1) IN (SELECT value FROM json_each(?))`,
	postgres: `SELECT name, user_id, '' FROM unix_names WHERE name = ANY($1)
	UNION ALL SELECT '', id, email FROM users WHERE unix_name IS NULL AND split_part(email, '@', 1) = ANY($2)`,
}

// unixNamesIn is unixNames on conn (a transaction, or the pool): one
// statement, whatever the number of names, run without GORM (raw_sql.go)
// as every usage batch with users runs it.
func unixNamesIn(conn raw, names []string) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	nameList, err := conn.listArg(names)
	if err != nil {
		return nil, fmt.Errorf("store: unix names: %w", err)
	}
	var users []models.User
	_, err = queryAll(conn, unixNamesSQL, func(r *sql.Rows) (struct{}, error) {
		var name, email string
		var id int64
		if err := r.Scan(&name, &id, &email); err != nil {
			return struct{}{}, err
		}
		if name != "" {
			out[name] = id
		} else {
			users = append(users, models.User{ID: id, Email: email})
		}
		return struct{}{}, nil
	}, nameList, nameList)
	if err != nil {
		return nil, fmt.Errorf("store: unix names: %w", err)
	}
	return withAssumedNames(out, users), nil
}

// withAssumedNames adds to explicit (unix name → user, from unix_names)
// the names users go by without one of their own (the local part of
// their email, models.UnixNameIndex), where no one owns the name
// explicitly, and returns it.
func withAssumedNames(explicit map[string]int64, users []models.User) map[string]int64 {
	for n, id := range models.UnixNameIndex(users) {
		if _, owned := explicit[n]; !owned {
			explicit[n] = id
		}
	}
	return explicit
}

// unixLogins returns the login each user's bookings reach on the nodes.
// A user whose assumed name (email local part) another user owns
// explicitly has none ("" in the map): their booking must not open the
// other person's login.
func (db *DB) unixLogins(ctx context.Context, userIDs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(userIDs))
	assumed := map[int64]string{}
	var names []string
	for chunk := range slices.Chunk(userIDs, insertChunk) {
		var rows []userRow
		if err := db.Gorm.WithContext(ctx).Select("id, email, unix_name").Where("id IN ?", chunk).Find(&rows).Error; err != nil {
			return nil, fmt.Errorf("store: unix logins: %w", err)
		}
		for _, r := range rows {
			u := r.model()
			out[r.ID] = u.UnixLogin()
			if u.UnixAssumed() {
				assumed[r.ID] = out[r.ID]
				names = append(names, out[r.ID])
			}
		}
	}
	taken := map[string]bool{}
	for chunk := range slices.Chunk(names, insertChunk) {
		var rows []unixNameRow
		if err := db.Gorm.WithContext(ctx).Select("name").Where("name IN ?", chunk).Find(&rows).Error; err != nil {
			return nil, fmt.Errorf("store: unix logins: %w", err)
		}
		for _, r := range rows {
			taken[r.Name] = true
		}
	}
	for id, n := range assumed {
		if taken[n] { // extras need a primary, so the owner is someone else
			out[id] = ""
		}
	}
	return out, nil
}

// insertChunk keeps one INSERT under SQLite's 32766 bound variables.
const insertChunk = 1000
