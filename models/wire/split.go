package wire

import "encoding/json"

// agentEnvelope is room left in MaxBody for what a batch carries
// besides its list: the node name and batch ID (256 bytes each, up to six
// times that once JSON-escaped) and the field names.
const agentEnvelope = 8 << 10

// SplitUsage cuts usage records into batches that the portal accepts: at
// most MaxRecordsPerBatch records and MaxBody bytes each, no
// record with more than MaxUsersPerRecord users. A record with more
// users is sent as several records with the same key in different batches;
// the portal stores the minute once and adds each part's users (a resend's
// new users are merged the same way), so nothing is lost.
func SplitUsage(recs []UsageRecord) [][]UsageRecord {
	// The first part of every record, then the second parts, and so on:
	// the parts of one record never meet in a batch, and batches fill up.
	var parts []UsageRecord
	for lo, more := 0, true; more; lo += MaxUsersPerRecord {
		more = false
		for _, r := range recs {
			switch {
			case lo == 0 && len(r.Users) <= MaxUsersPerRecord:
				parts = append(parts, r)
			case lo < len(r.Users):
				p := r
				p.Users = r.Users[lo:min(lo+MaxUsersPerRecord, len(r.Users))]
				parts = append(parts, p)
				more = more || lo+MaxUsersPerRecord < len(r.Users)
			}
		}
	}
	return splitBatches(parts, MaxRecordsPerBatch, func(cur []UsageRecord, next UsageRecord) bool {
		for _, r := range cur {
			if r.GPUUUID == next.GPUUUID && r.Minute.Equal(next.Minute) {
				return true // the same key twice in one batch is refused
			}
		}
		return false
	})
}

// SplitViolations cuts violations into batches the portal accepts.
func SplitViolations(vs []Violation) [][]Violation {
	return splitBatches(vs, MaxViolationsPerBatch, nil)
}

// SplitIdle cuts idle reports into batches the portal accepts, at most
// MaxIdleGPUsPerBatch GPUs in all each.
func SplitIdle(rs []IdleReport) [][]IdleReport {
	return splitBatches(rs, MaxIdlePerBatch, func(cur []IdleReport, next IdleReport) bool {
		gpus := len(next.GPUUUIDs)
		for _, r := range cur {
			gpus += len(r.GPUUUIDs)
		}
		return gpus > MaxIdleGPUsPerBatch
	})
}

// splitBatches packs items in order into batches of at most maxItems items
// whose JSON encodings add up to at most MaxBody − agentEnvelope;
// clash, when set, starts a new batch before an item that cannot join the
// current one.
func splitBatches[T any](items []T, maxItems int, clash func(cur []T, next T) bool) [][]T {
	var out [][]T
	var cur []T
	size := 0
	for _, it := range items {
		raw, _ := json.Marshal(it) // wire types always encode
		n := len(raw) + 1          // the comma
		if len(cur) > 0 && (len(cur) == maxItems || size+n > MaxBody-agentEnvelope || (clash != nil && clash(cur, it))) {
			out, cur, size = append(out, cur), nil, 0
		}
		cur, size = append(cur, it), size+n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
