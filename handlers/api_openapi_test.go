package handlers

import (
	"bytes"
	"testing"

	"github.com/gpubook/gpubook/models/api"
)

// TestOpenAPIGenerated: the served document is the one models/api derives
// from the types the handlers answer with, byte for byte, so a field added
// to a type without regenerating the document fails here.
func TestOpenAPIGenerated(t *testing.T) {
	want, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(OpenAPIDocument(), want) {
		t.Errorf("handlers/openapi.json is not what models/api declares: run go generate ./handlers and commit it")
	}
}
