package views

import (
	"time"

	"github.com/gpubook/gpubook/models"
)

// SlotForm is the find-a-slot question as typed.
type SlotForm struct {
	GPUs, Hours, Model, After string
}

// SlotsView is the find-a-slot page: the question and the earliest answers.
type SlotsView struct {
	Form     SlotForm
	Models   []string
	Searched bool
	Results  []models.Slot
	Errors   map[string]string
	GPUIndex map[int64]int
	// RequestURL offers a priority request when no option starts when
	// asked.
	RequestURL string
}

// SlotGPUs names a result's GPUs: "GPU 0, GPU 3".
func (v SlotsView) SlotGPUs(s models.Slot) string { return GPUNames(s.GPUIDs, v.GPUIndex) }

// rfc3339 is how a one-click form carries a time: unambiguous in any zone.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
