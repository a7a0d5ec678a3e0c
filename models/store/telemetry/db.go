// Package telemetry is the half of the store that agents write and the
// status pages read: usage minutes (ingest, partitions, retention),
// violations and idle reports. It takes no lock of the booking order: its
// writes check their rows against the store's GPUs and bookings
// (store.NodeGPUIDs, store.NodeBookings) and never change them, so it
// shares the store's database handle and plumbing (store's
// telemetry_kit.go) but none of its booking code.
package telemetry

import (
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// Store is the telemetry half of an open store.
type Store struct {
	st *store.DB
}

// New returns the telemetry half of st, on st's connections.
func New(st *store.DB) *Store { return &Store{st: st} }

// Whole is the store's two halves together: the one value that implements
// every store interface of models (models.AgentStore among them), which
// cmd hands to the handlers.
type Whole struct {
	*store.DB
	*Store
}

// NewWhole returns st together with its telemetry half.
func NewWhole(st *store.DB) Whole { return Whole{DB: st, Store: New(st)} }

var _ models.AgentStore = Whole{}
