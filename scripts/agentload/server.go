package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/scripts/internal/serveproc"
)

// server is a started `gpubook serve` process.
type server struct{ *serveproc.Server }

// startServer runs the server and waits for /healthz.
func startServer(ctx context.Context, bin, dbURL string) (*server, error) {
	s, err := serveproc.Start(ctx, bin, dbURL)
	if err != nil {
		return nil, err
	}
	return &server{s}, nil
}

func (s *server) stop() { s.Stop() }

// status reads one "Name: N kB" line of the server's /proc status.
func (s *server) status(name string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(s.Cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func (s *server) rssKiB() int64 { return s.status("VmRSS") }
func (s *server) hwmKiB() int64 { return s.status("VmHWM") }

// enrolNode registers a 64-GPU node "load" with a booking of all its GPUs
// (what the idle reports name) and enrols it over HTTP.
func enrolNode(ctx context.Context, s *server, dbURL string) (cred string, booking int64, err error) {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return "", 0, err
	}
	defer db.Close()
	gpus, err := models.NewNodeGPUs("load", wire.MaxNodeGPUs, "NVIDIA H100 80GB HBM3", 81559)
	if err != nil {
		return "", 0, err
	}
	node := &models.Node{Name: "load"}
	if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		return "", 0, err
	}
	if booking, err = bookNode(ctx, db, node.ID); err != nil {
		return "", 0, err
	}
	tok, _, err := db.CreateEnrollToken(ctx, node.ID, time.Now(), models.CLIActor)
	if err != nil {
		return "", 0, err
	}
	body, _ := json.Marshal(wire.EnrollRequest{Token: tok, Hostname: "load", AgentVersion: "agentload"})
	resp, err := http.Post(s.Base+wire.PathEnroll, "application/json", bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var er wire.EnrollResponse
	if err := json.NewDecoder(resp.Body).Decode(&er); err != nil || er.Credential == "" {
		return "", 0, fmt.Errorf("enrol: %d %v", resp.StatusCode, err)
	}
	return er.Credential, booking, nil
}

// bookNode books every GPU of the node for a user "load" from an hour ago
// to an hour ahead.
func bookNode(ctx context.Context, db *store.DB, nodeID int64) (int64, error) {
	u := &models.User{Email: "load@example.org", Name: "Load"}
	if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
		return 0, err
	}
	node, err := db.Node(ctx, nodeID)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for _, g := range node.GPUs {
		ids = append(ids, g.ID)
	}
	now := time.Now().UTC().Truncate(time.Minute)
	b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: ids, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour)},
		models.DefaultBookingLimits, now.Add(-2*time.Hour), models.CLIActor)
	if err != nil {
		return 0, err
	}
	return b.ID, nil
}
