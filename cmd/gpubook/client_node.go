package main

import (
	"encoding/json"
	"os"
)

// localNode names the GPU node this command runs on, from what
// gpubook-agent keeps on it: the credential file (written by enroll,
// readable by root only) and else the schedule cache, which every login
// reads. Only the "node" field is decoded; the credential's secret is
// never kept. Paths follow the agent's own environment overrides.
func localNode(getenv func(string) string) string {
	cred := getenv("GPUBOOK_AGENT_CREDENTIAL_FILE")
	if cred == "" {
		cred = "/etc/gpubook/credential.json"
	}
	cache := getenv("GPUBOOK_AGENT_CACHE_FILE")
	if cache == "" {
		cache = "/var/lib/gpubook-agent/schedule.json"
	}
	for _, p := range []string{cred, cache} {
		if n := nodeField(p); n != "" {
			return n
		}
	}
	return ""
}

func nodeField(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var v struct {
		Node string `json:"node"`
	}
	if json.NewDecoder(f).Decode(&v) != nil {
		return ""
	}
	return v.Node
}
