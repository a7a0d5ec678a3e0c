package wire

import "fmt"

// UsageStream is a usage batch read one record at a time. The portal
// decodes a body into it instead of into a UsageBatch, so that checking and
// storing the largest batch holds one record, not a thousand records and
// their tens of thousands of users, beside the body.
type UsageStream struct {
	Node, BatchID string
	// Len is how many records the batch holds (the portal counts them
	// while it checks the body, before decoding any).
	Len int
	// Each calls fn with every record in order and stops at fn's first
	// error, or at the first record that does not decode, and returns it.
	// It may be called more than once. The record is reused: it is valid
	// only until fn returns (its strings may be kept).
	Each func(fn func(i int, r *UsageRecord) error) error
}

// Stream reads a batch held in memory as a UsageStream.
func (b *UsageBatch) Stream() UsageStream {
	return UsageStream{Node: b.Node, BatchID: b.BatchID, Len: len(b.Records), Each: func(fn func(int, *UsageRecord) error) error {
		for i := range b.Records {
			r := b.Records[i] // a copy: fn must not change the batch
			if err := fn(i, &r); err != nil {
				return err
			}
		}
		return nil
	}}
}

// usageKey is a record's key within its node.
type usageKey struct {
	gpu    string
	minute int64
}

// Validate checks the batch as (*UsageBatch).Validate does.
func (s UsageStream) Validate() error { return s.ValidateEach(nil) }

// ValidateEach checks the batch, reading it once, and hands every record
// that passes to fn (when set) before it reads the next: a caller that
// must see every record can do so in the same reading. It stops at the
// first problem, its own or fn's.
func (s UsageStream) ValidateEach(fn func(i int, r *UsageRecord) error) error {
	if f, p := envelopeProblem(s.Node, s.BatchID); p != "" {
		return agentInvalid(f, p)
	}
	if p := listProblem(s.Len, 1, MaxRecordsPerBatch); p != "" {
		return agentInvalid("records", p)
	}
	seen := make(map[usageKey]struct{}, s.Len)
	return s.Each(func(i int, r *UsageRecord) error {
		if f, msg := r.problem(); msg != "" {
			return agentInvalid(fmt.Sprintf("records[%d]%s", i, f), msg)
		}
		k := usageKey{r.GPUUUID, r.Minute.Unix()}
		if _, dup := seen[k]; dup {
			return agentInvalid(fmt.Sprintf("records[%d]", i), "duplicate (gpu_uuid, minute)")
		}
		seen[k] = struct{}{}
		if fn != nil {
			return fn(i, r)
		}
		return nil
	})
}
