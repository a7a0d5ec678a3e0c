package views

import (
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
)

// BookingForm is the booking form as the user typed it, so that a
// re-rendered form keeps every value: nobody should type a note twice
// because one field was wrong.
type BookingForm struct {
	GPUIDs   []int64
	NodeID   int64
	Start    string // datetime-local in the viewer's zone
	End      string
	Duration string // hours, used when End is empty
	Note     string
}

// Checked reports whether a GPU's box is ticked.
func (f BookingForm) Checked(id int64) bool {
	for _, g := range f.GPUIDs {
		if g == id {
			return true
		}
	}
	return false
}

// BookingFormView is the booking form page's data.
type BookingFormView struct {
	Form      BookingForm
	Nodes     []models.Node // the nodes to choose from
	Node      *models.Node  // the chosen node, whose GPUs are offered
	Errors    map[string]string
	Conflicts []ConflictLine
	Message   string          // the form-wide problem, if any
	Policy    PolicyCheckView // the policy's verdict (policy_check.templ)
	// States are the chosen node's GPUs with their state over the range;
	// Ranged says the range was readable, so "free" means something.
	States []models.GPUState
	Ranged bool
	// RequestURL is the priority request pre-filled with what was asked,
	// offered when the booking was refused for lack of room.
	RequestURL string
}

// When is an instant in a sentence, in the viewer's zone: "Wed 3 Jun 14:30".
func (p *Page) When(t time.Time) string {
	return p.DayLabel(t.In(p.Location)) + " " + p.Clock(t)
}

// ConflictLine is a booking in the way, ready to show: which GPU, who, when.
type ConflictLine struct {
	GPU         string // the unit's name, models.UnitName
	UserName    string
	Start, Stop time.Time
}

// LocalInput is the value of a datetime-local input for t in loc.
func LocalInput(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02T15:04")
}

// gpuLabel names a GPU in the form: "GPU 2 · NVIDIA A100 · 80 GiB", or a
// MIG instance by its GPU and profile: "GPU 2 · 1g.10gb · 1/7 · 9.5 GiB".
func gpuLabel(g models.GPU, byID map[int64]models.GPU) string {
	if g.IsMIGInstance() {
		label := UnitName(g, byID)
		if share := SliceShare(g, byID); share != "" {
			label += " · " + share
		}
		return label + " · " + MiB(g.MemoryMiB)
	}
	return "GPU " + strconv.Itoa(g.Index) + " · " + g.Model + " · " + MiB(g.MemoryMiB)
}

// units are the chosen node's GPU states with each MIG instance under its GPU.
func (v BookingFormView) units() []models.GPUState {
	return orderUnits(v.States, func(s models.GPUState) models.GPU { return s.GPU })
}

// split counts the instances of the node's split GPUs: those are not offered whole.
func (v BookingFormView) split() map[int64]int {
	if v.Node == nil {
		return nil
	}
	return migInstances(v.Node.GPUs)
}

// byID indexes the node's GPUs, so that an instance is named by its GPU.
func (v BookingFormView) byID() map[int64]models.GPU {
	if v.Node == nil {
		return nil
	}
	return gpusByID(v.Node.GPUs)
}

func int64s(id int64) string { return strconv.FormatInt(id, 10) }
