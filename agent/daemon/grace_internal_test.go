package daemon

import (
	"context"
	"testing"
	"time"
)

// TestWithGrace: a send under way outlives the agent's stop by the grace
// period, no more; an ordinary end of the send releases everything.
func TestWithGrace(t *testing.T) {
	parent, stopAgent := context.WithCancel(context.Background())
	send, done := withGrace(parent, 50*time.Millisecond)
	defer done()
	stopAgent()
	select {
	case <-send.Done():
		t.Fatal("the send was cancelled with the agent; it should get its grace")
	case <-time.After(10 * time.Millisecond):
	}
	select {
	case <-send.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the send outlived its grace")
	}

	parent2, stopAgent2 := context.WithCancel(context.Background())
	defer stopAgent2()
	send2, done2 := withGrace(parent2, time.Hour)
	done2()
	if send2.Err() == nil {
		t.Error("done did not end the send's context")
	}
}
