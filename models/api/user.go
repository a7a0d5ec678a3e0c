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

// GPU is one GPU of the cluster.
type GPU struct {
	ID        int64  `json:"id"`
	NodeID    int64  `json:"node_id"`
	Node      string `json:"node"`
	Index     int    `json:"index"`
	UUID      string `json:"uuid"`
	Model     string `json:"model"`
	MemoryMiB int64  `json:"memory_mib"`
	InService bool   `json:"in_service"`
}

// GPUList answers GET /gpus, by node name and index.
type GPUList struct {
	GPUs []GPU `json:"gpus"`
}
