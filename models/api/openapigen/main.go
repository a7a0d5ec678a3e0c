// Command openapigen writes the API's OpenAPI document (api.Document) to
// the file named by its argument; go generate ./handlers runs it for
// handlers/openapi.json.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/gpubook/gpubook/models/api"
)

func main() {
	if err := run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: openapigen FILE")
	}
	doc, err := api.Document()
	if err != nil {
		return err
	}
	return os.WriteFile(args[1], doc, 0o644)
}
