package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/labstack/echo/v4"
)

// TestClientClosedIsNot500: a request whose client hung up fails with
// context.Canceled deep in the store; that is a 499 logged at info, not a
// 500 logged as an error (fleetbench saw agents past their timeout logged
// as "request failed … context canceled", status 500).
func TestClientClosedIsNot500(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("POST", "/api/agent/v1/usage", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(req, rec)
	errorHandler(nil, logger)(models.Internal(fmt.Errorf("store: ingest: %w", context.Canceled)), c)
	if rec.Code != statusClientClosed || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("status %d, logs %q; want 499 and no error line", rec.Code, logs.String())
	}
}
