package handlers

import (
	"errors"
	"time"

	"github.com/gpubook/gpubook/models"
)

// errInZone gives an error's "free until" in the user's zone, as the
// pages do (problem): an API refusal's message is read by a person in a
// terminal, whose client shows every other time in that zone.
func errInZone(err error, loc *time.Location) error {
	var e *models.Error
	if !errors.As(err, &e) {
		return err
	}
	t, ok := e.Msg.Data["FreeUntil"].(time.Time)
	if !ok {
		return err
	}
	in := *e
	in.Msg = models.M(e.Msg.Key, "FreeUntil", t.In(loc))
	return &in
}
