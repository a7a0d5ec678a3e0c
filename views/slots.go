package views

import (
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// SlotForm is the find-a-slot question as typed.
type SlotForm struct {
	GPUs, Hours, Model, After string
	Profile                   string // a MIG profile: slices of it instead of whole GPUs
}

// SlotsView is the find-a-slot page: the question and the earliest answers.
type SlotsView struct {
	Form     SlotForm
	Models   []string
	Searched bool
	Results  []models.Slot
	Errors   map[string]string
	// Units are the GPUs and MIG instances by ID, which name a result's
	// units ("GPU 3 · 1g.10gb"); Profiles are the MIG profiles present,
	// offered instead of whole GPUs.
	Units    map[int64]models.GPU
	Profiles []string
	// RequestURL offers a priority request when no option starts when
	// asked.
	RequestURL string
	// NoSliceRequest says, in its place, that a search for MIG slices
	// gets no priority request: requests ask for whole GPUs.
	NoSliceRequest bool
}

// SlotGPUs names a result's GPUs: "GPU 0, GPU 3", or its MIG slices:
// "GPU 3 · 1g.10gb, GPU 3 · 1g.10gb".
func (v SlotsView) SlotGPUs(s models.Slot) string {
	names := make([]string, len(s.GPUIDs))
	for i, id := range s.GPUIDs {
		names[i] = UnitName(v.Units[id], v.Units)
	}
	return strings.Join(names, ", ")
}

// rfc3339 is how a one-click form carries a time: unambiguous in any zone.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
