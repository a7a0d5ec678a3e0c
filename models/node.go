package models

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// Node is one GPU server.
type Node struct {
	ID        int64
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
	GPUs      []GPU // filled by queries that ask for them
}

// GPU is one card of a node. UUID is what CUDA_VISIBLE_DEVICES lists.
type GPU struct {
	ID                 int64
	NodeID             int64
	NodeName           string // filled by queries, for display
	Index              int
	UUID               string
	Model              string
	MemoryMiB          int64
	MIG                bool
	InService          bool
	OutOfServiceReason string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// ParentID is, on a MIG instance, the GPU it is a slice of; 0 on a
	// whole GPU. MIGProfile ("1g.10gb"), MIGGI and MIGCI are the
	// instance's; MIGSlices is a GPU's compute slices while MIG is on, or
	// an instance's own slices.
	ParentID   int64
	MIGProfile string
	MIGSlices  int
	MIGGI      int
	MIGCI      int
	// Weight is what an hour of this unit counts as in policies, quotas
	// and reports: 1 for a whole GPU, the instance's share of its GPU's
	// slices for a MIG instance (1/7 for a 1g.10gb of an A100).
	Weight float64
}

// IsMIGInstance reports whether the GPU row is a MIG instance.
func (g GPU) IsMIGInstance() bool { return g.ParentID != 0 }

// MIGWeight is the weight of an instance of slices compute slices on a GPU
// of gpuSlices: its share of the GPU, never 0 and never above 1.
func MIGWeight(slices, gpuSlices int) float64 {
	if slices <= 0 || gpuSlices <= 0 || slices >= gpuSlices {
		return 1
	}
	return float64(slices) / float64(gpuSlices)
}

var hostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`)

// Validate checks a node's name: it must be usable as a host name.
func (n *Node) Validate() error {
	fe := FieldErrors{}
	n.Name = strings.TrimSpace(n.Name)
	if n.Name == "" {
		fe.Add("name", M("err.name_required"))
	} else if !hostnameRE.MatchString(n.Name) {
		fe.Add("name", M("err.hostname_invalid"))
	}
	return fe.Err()
}

// Validate checks a GPU before it is written.
func (g *GPU) Validate() error {
	fe := FieldErrors{}
	if g.Index < 0 || g.Index > 1023 {
		fe.Add("index", M("err.gpu_index_invalid"))
	}
	if fe.Check("uuid", &g.UUID, LabelText) && g.UUID == "" {
		fe.Add("uuid", M("err.uuid_required"))
	}
	if fe.Check("model", &g.Model, LabelText) && g.Model == "" {
		fe.Add("model", M("err.model_required"))
	}
	if g.MemoryMiB <= 0 || g.MemoryMiB > 16<<20 {
		fe.Add("memory_mib", M("err.memory_invalid"))
	}
	return fe.Err()
}

// NewNodeGPUs describes the GPUs of a node registered by hand, before its
// agent reports the real inventory. The UUIDs are placeholders derived from
// the node name so that they are stable and unique; the agent replaces them.
func NewNodeGPUs(nodeName string, count int, model string, memoryMiB int64) ([]GPU, error) {
	fe := FieldErrors{}
	if count < 1 || count > wire.MaxNodeGPUs {
		fe.Add("gpus", M("err.gpu_count_invalid", "Max", wire.MaxNodeGPUs))
	}
	if strings.TrimSpace(model) == "" {
		fe.Add("model", M("err.model_required"))
	}
	if memoryMiB <= 0 || memoryMiB > wire.MaxGPUMemoryMiB {
		fe.Add("memory_mib", M("err.memory_invalid"))
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	gpus := make([]GPU, count)
	for i := range gpus {
		gpus[i] = GPU{Index: i, UUID: PlaceholderUUID(nodeName, i), Model: strings.TrimSpace(model), MemoryMiB: memoryMiB, InService: true}
	}
	return gpus, nil
}

// PlaceholderUUID is the UUID a hand-registered GPU carries until its agent reports.
func PlaceholderUUID(nodeName string, index int) string {
	return "GPU-manual-" + strings.ToLower(nodeName) + "-" + strconv.Itoa(index)
}

// CleanModel checks a GPU model name typed where a policy names one: the
// same rule as a GPU's own model, so that it can match one.
func CleanModel(model string) (string, error) {
	fe := FieldErrors{}
	if fe.Check("model", &model, LabelText) && model == "" {
		fe.Add("model", M("policy.err.model_required"))
	}
	return model, fe.Err()
}
