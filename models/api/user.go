package api

// Me answers GET /me: who the token belongs to, so that a script can check
// its token before it books.
type Me struct {
	ID       int64  `json:"id"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Language string `json:"language"`
	TimeZone string `json:"time_zone" doc:"IANA zone the user chose; empty means the cluster's"`
	IsAdmin  bool   `json:"is_admin"`
}

// GPU is one bookable unit of the cluster: a whole GPU, or a MIG instance
// (a slice of a GPU in MIG mode), which is booked, limited and charged like
// a GPU of its own at its share of the GPU. A GPU split into instances is
// listed too, with split set: CUDA cannot use it whole, so it is booked
// through its instances only.
type GPU struct {
	ID     int64  `json:"id"`
	NodeID int64  `json:"node_id"`
	Node   string `json:"node"`
	// Index is nvidia-smi's for a GPU; an instance's is 64 and up, unique
	// on its node, and people name it by its GPU's index and profile.
	Index     int    `json:"index" doc:"the GPU's index on its node; on a MIG instance 64 and up (name it by its parent's index and mig_profile)"`
	UUID      string `json:"uuid" doc:"GPU-… for a GPU, MIG-… for a MIG instance: what CUDA_VISIBLE_DEVICES lists"`
	Model     string `json:"model" doc:"the GPU's model, also on its MIG instances"`
	MemoryMiB int64  `json:"memory_mib"`
	InService bool   `json:"in_service"`
	ParentID  *int64 `json:"parent_id" doc:"on a MIG instance, the id of the GPU it is a slice of; null on a GPU"`
	// MIGProfile and MIGSlices let a client name an instance as people do
	// ("GPU 3 · 1g.10gb · 1/7") without a second call.
	MIGProfile string  `json:"mig_profile" doc:"a MIG instance's profile, e.g. 1g.10gb; empty on a GPU"`
	MIGSlices  int     `json:"mig_slices" doc:"a MIG instance's compute slices; on a split GPU its total slices (7 on an A100); 0 on a whole GPU"`
	Weight     float64 `json:"weight" doc:"GPU-equivalents an hour of this unit counts as in limits, quotas and reports: 1 for a GPU, a MIG instance's slices / its GPU's slices (1/7 for a 1g.10gb of an A100)"`
	Split      bool    `json:"split" doc:"a GPU split into MIG instances: not bookable whole; book its instances (parent_id = this id)"`
}

// GPUList answers GET /gpus, by node name and index: each GPU's instances
// follow its node's GPUs.
type GPUList struct {
	GPUs []GPU `json:"gpus"`
}
