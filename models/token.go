package models

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"
)

// TokenPrefix starts every personal API token, so that a leaked one is easy
// to recognise in logs and by secret scanners.
const TokenPrefix = "gpb_"

// APIToken is a personal token for the JSON API. Only its hash is stored.
type APIToken struct {
	ID         int64
	UserID     int64
	Name       string
	Hash       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	UserEmail  string // filled by queries, for display
}

// NewTokenSecret returns a fresh token (shown to the user once) and its hash.
func NewTokenSecret() (plain, hash string, err error) {
	return newSecret(TokenPrefix)
}

// newSecret returns prefix and 256 random bits in lower-case base32, and its hash.
func newSecret(prefix string) (plain, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", Internal(err)
	}
	plain = prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
	return plain, HashToken(plain), nil
}

// HashToken is how a token is stored and looked up. A plain SHA-256 is
// enough: tokens carry 256 random bits, so there is nothing to brute-force.
func HashToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// ValidateTokenName checks the label a user gives a token.
func ValidateTokenName(name string) (string, error) {
	fe := FieldErrors{}
	fe.Check("name", &name, LabelText)
	if name == "" {
		name = "token"
	}
	return name, fe.Err()
}

// MaxActiveTokens caps a user's unrevoked tokens: each is a standing
// credential, and creating them without end would fill the table.
const MaxActiveTokens = 20

// CheckTokenCap refuses one more token for a user who holds tokens when
// MaxActiveTokens of them are still active; revoked ones do not count.
func CheckTokenCap(tokens []APIToken) error {
	active := 0
	for _, t := range tokens {
		if t.RevokedAt == nil {
			active++
		}
	}
	if active < MaxActiveTokens {
		return nil
	}
	fe := FieldErrors{}
	fe.Add("name", M("profile.token_limit", "Max", MaxActiveTokens))
	return fe.Err()
}
