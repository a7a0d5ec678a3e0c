package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// FindSlots answers the find-a-slot form: /slots?gpus=N&hours=H&model=M&after=T.
func (h *Bookings) FindSlots(c echo.Context) error {
	ctx := c.Request().Context()
	loc := models.UserFromContext(ctx).Location(h.Location)
	f := views.SlotForm{GPUs: c.QueryParam("gpus"), Hours: c.QueryParam("hours"), Model: c.QueryParam("model"), After: c.QueryParam("after"),
		Profile: c.QueryParam("profile")}
	gpus, err := h.Store.GPUs(ctx)
	if err != nil {
		return err
	}
	v := views.SlotsView{Form: f, Units: map[int64]models.GPU{}, Profiles: views.MIGProfiles(gpus)}
	seen := map[string]bool{}
	for _, g := range gpus {
		v.Units[g.ID] = g
		if !seen[g.Model] {
			seen[g.Model] = true
			v.Models = append(v.Models, g.Model)
		}
	}
	if f.GPUs == "" && f.Hours == "" {
		v.Form = views.SlotForm{GPUs: "1", Hours: "2"}
		return Render(c, http.StatusOK, views.SlotsPage(h.NewPage(c), v))
	}
	v.Searched = true
	q, fe := parseSlotForm(f, loc, h.Limits.MaxLength)
	if err = fe.Err(); err == nil {
		v.Results, err = h.Store.FindSlots(ctx, q, h.Limits, h.Now())
	}
	if models.ErrorCode(err) == models.EINVALID {
		v.Errors = h.Translator(c).Fields(err)
		return Render(c, http.StatusUnprocessableEntity, views.SlotsPage(h.NewPage(c), v))
	}
	if err != nil {
		return err
	}
	if err := h.slotsRequestOffer(c, &v, q); err != nil {
		return err
	}
	if len(v.Results) > 3 {
		v.Results = v.Results[:3]
	}
	return Render(c, http.StatusOK, views.SlotsPage(h.NewPage(c), v))
}

// parseSlotForm reads the form; "after" is in the viewer's zone. A length
// over maxLength says the most there is, not "give the length in hours".
func parseSlotForm(f views.SlotForm, loc *time.Location, maxLength time.Duration) (models.SlotQuery, models.FieldErrors) {
	fe := models.FieldErrors{}
	q := models.SlotQuery{Model: f.Model, Profile: f.Profile}
	n, err := strconv.Atoi(strings.TrimSpace(f.GPUs))
	if err != nil {
		fe.Add("gpus", models.M("err.number_invalid"))
	}
	q.GPUs = n
	d, ok := parseHours(f.Hours)
	maxHours := int(maxLength / time.Hour)
	switch h, err := strconv.ParseFloat(strings.TrimSpace(f.Hours), 64); {
	case err == nil && maxHours > 0 && h > float64(maxHours):
		fe.Add("hours", models.M("err.hours_at_most", "Max", maxHours))
	case !ok:
		fe.Add("hours", models.M("err.slot_hours_invalid"))
	}
	q.Duration = d
	if strings.TrimSpace(f.After) != "" {
		if q.After, ok = parseFormTime(f.After, loc); !ok {
			fe.Add("after", models.M("err.time_invalid"))
		}
	}
	return q, fe
}
