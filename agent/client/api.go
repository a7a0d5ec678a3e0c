package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gpubook/gpubook/models/wire"
)

// Enroll exchanges a one-time token for the node credential.
func (c *Client) Enroll(ctx context.Context, req wire.EnrollRequest) (wire.EnrollResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return wire.EnrollResponse{}, fmt.Errorf("agent: client: encode: %w", err)
	}
	_, data, err := c.do(ctx, http.MethodPost, wire.PathEnroll, body, nil)
	if err != nil {
		return wire.EnrollResponse{}, err
	}
	var resp wire.EnrollResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return wire.EnrollResponse{}, fmt.Errorf("agent: client: enroll: decode: %w", err)
	}
	if resp.Credential == "" {
		return wire.EnrollResponse{}, fmt.Errorf("agent: client: enroll: portal returned no credential")
	}
	return resp, nil
}

// PutInventory reports the node's GPUs.
func (c *Client) PutInventory(ctx context.Context, inv wire.Inventory) error {
	body, err := json.Marshal(inv)
	if err != nil {
		return fmt.Errorf("agent: client: encode: %w", err)
	}
	_, _, err = c.do(ctx, http.MethodPut, wire.PathInventory, body, nil)
	return err
}

// Schedule fetches the node's schedule with If-None-Match: etag. When the
// portal answers 304, changed is false and the caller keeps its copy.
func (c *Client) Schedule(ctx context.Context, etag string) (s wire.Schedule, newETag string, changed bool, err error) {
	hdr := http.Header{}
	if etag != "" {
		hdr.Set("If-None-Match", etag)
	}
	resp, data, err := c.do(ctx, http.MethodGet, wire.PathSchedule, nil, hdr)
	if err != nil {
		return s, etag, false, err
	}
	if resp.StatusCode == http.StatusNotModified {
		return s, etag, false, nil
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, etag, false, fmt.Errorf("agent: client: schedule: decode: %w", err)
	}
	return s, resp.Header.Get("ETag"), true, nil
}
