package handlers

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// FindSlots answers GET /api/v1/slots?gpus=N&hours=H[&model=M][&node=NAME][&after=T][&profile=P]:
// the three earliest options, each N whole GPUs of one node, or with a
// profile N MIG instances of it (models.FindSlots).
func (h *API) FindSlots(c echo.Context) error {
	q, err := parseSlotQuery(c)
	if err != nil {
		return err
	}
	slots, err := h.Store.FindSlots(c.Request().Context(), q, h.Limits, h.Now())
	if err != nil {
		return err
	}
	out := api.SlotList{Slots: make([]api.Slot, len(slots))}
	for i, s := range slots {
		out.Slots[i] = toSlotJSON(s)
	}
	return c.JSON(http.StatusOK, out)
}

// parseSlotQuery reads the query's syntax; models.ValidateSlotQuery (in the
// store call) judges the values.
func parseSlotQuery(c echo.Context) (models.SlotQuery, error) {
	fe := models.FieldErrors{}
	q := models.SlotQuery{Model: c.QueryParam("model"), Node: c.QueryParam("node"), Profile: c.QueryParam("profile")}
	n, err := strconv.Atoi(c.QueryParam("gpus"))
	switch {
	case err != nil:
		fe.Add("gpus", models.M("err.number_invalid"))
	case n < 1:
		fe.Add("gpus", models.M("err.slot_gpus_invalid", "Max", models.DefaultBookingLimits.MaxGPUCount))
	}
	q.GPUs = n
	hours, err := strconv.ParseFloat(c.QueryParam("hours"), 64)
	if err != nil || math.IsNaN(hours) || math.IsInf(hours, 0) || hours <= 0 {
		fe.Add("hours", models.M("err.slot_hours_invalid"))
	}
	// Clamp before converting, so that a huge value reads as "too long"
	// instead of overflowing time.Duration.
	q.Duration = time.Duration(math.Min(hours, 1e5) * float64(time.Hour)).Round(time.Second)
	q.After = queryTime(c, "after", false, fe)
	return q, fe.Err()
}
