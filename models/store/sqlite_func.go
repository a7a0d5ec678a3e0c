package store

import (
	"database/sql/driver"
	"fmt"

	msqlite "modernc.org/sqlite"

	"github.com/gpubook/gpubook/models"
)

// SQLite has no SHA-256; migration 00024 hashes the stored session tokens
// with gpubook_sha256_hex, the hex SHA-256 that models.HashToken computes.
// Registered once for the "sqlite" driver, so every connection gpubook
// opens has it.
func init() {
	msqlite.MustRegisterDeterministicScalarFunction("gpubook_sha256_hex", 1,
		func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case nil:
				return nil, nil
			case string:
				return models.HashToken(v), nil
			case []byte:
				return models.HashToken(string(v)), nil
			default:
				return nil, fmt.Errorf("gpubook_sha256_hex: a %T is not text", v)
			}
		})
}
