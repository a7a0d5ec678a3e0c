package views

import "github.com/gpubook/gpubook/models"

// GPUView is one GPU's page: who holds it now and what comes next.
type GPUView struct {
	GPU      models.GPU
	Current  *models.Booking // the booking running now, if any
	Upcoming []models.Booking
	// NodeGPUs are the node's GPUs and MIG instances: an instance's page
	// names its GPU, a split GPU's page lists its instances.
	NodeGPUs []models.GPU
}

// Title is the page's heading: "gpu01 GPU 3", or "gpu01 GPU 3 · 1g.10gb".
func (v GPUView) Title() string { return v.GPU.NodeName + " " + UnitName(v.GPU, gpusByID(v.NodeGPUs)) }

// Split counts the instances of a GPU split into MIG instances; 0 otherwise.
func (v GPUView) Split() int { return migInstances(v.NodeGPUs)[v.GPU.ID] }

// Instances are a split GPU's instances, in order.
func (v GPUView) Instances() []models.GPU {
	var out []models.GPU
	for _, g := range unitOrder(v.NodeGPUs) {
		if g.ParentID == v.GPU.ID && g.IsMIGInstance() {
			out = append(out, g)
		}
	}
	return out
}

// Share is an instance's share of its GPU ("1/7"); "" for a whole GPU.
func (v GPUView) Share() string { return SliceShare(v.GPU, gpusByID(v.NodeGPUs)) }
