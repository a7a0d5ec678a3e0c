package handlers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/handlers"
)

// TestRenderWritesNothingOnError: a template that fails half way leaves the
// response untouched, so the error handler can still answer a clean page.
func TestRenderWritesNothingOnError(t *testing.T) {
	tests := []struct {
		name       string
		comp       templ.Component
		wantErr    bool
		wantStatus int
		wantBody   string
	}{
		{"whole page", templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
			_, err := io.WriteString(w, "<p>all of it</p>")
			return err
		}), false, http.StatusCreated, "<p>all of it</p>"},
		{"fails half way", templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
			_, _ = io.WriteString(w, "<p>half")
			return errors.New("boom")
		}), true, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
			err := handlers.Render(c, http.StatusCreated, tt.comp)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if c.Response().Committed == tt.wantErr {
				t.Errorf("committed = %v after err = %v", c.Response().Committed, err)
			}
			if rec.Code != tt.wantStatus || rec.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantStatus, tt.wantBody)
			}
		})
	}
}
