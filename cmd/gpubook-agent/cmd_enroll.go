package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpubook/gpubook/agent/atomicfile"
	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// credential is the node's identity, stored with mode 0600.
type credential struct {
	PortalURL  string `json:"portal_url"`
	NodeID     int64  `json:"node_id"`
	Node       string `json:"node"`
	Credential string `json:"credential"`
}

// cmdEnroll exchanges a one-time token for the node credential.
func cmdEnroll(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("enroll", "Exchange a one-time enrolment token (from the portal's node page) for this node's credential.", stderr, getenv)
	portal := fs.String("portal", "", "portal URL, e.g. https://gpubook.example.org")
	token := fs.String("token", getenv("GPUBOOK_AGENT_TOKEN"), "enrolment token (or $GPUBOOK_AGENT_TOKEN, which keeps it out of ps)")
	credFile := fs.String("credential-file", "", "where to write the credential (default: credential_file from the config)")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	cfg, err := loadConfig(*cfgPath, getenv)
	if err != nil {
		return err
	}
	if *portal == "" {
		*portal = cfg.PortalURL
	}
	if *portal == "" || *token == "" {
		fs.Usage()
		return errors.New("agent: enroll: --portal and --token are required")
	}
	if err := checkPortalURL(*portal); err != nil {
		return err
	}
	if *credFile == "" {
		*credFile = cfg.CredentialFile
	}
	host, _ := os.Hostname()
	if cfg.Node != "" {
		host = cfg.Node
	}
	c := client.New(*portal, "", "gpubook-agent/"+version)
	resp, err := c.Enroll(ctx, wire.EnrollRequest{Token: *token, Hostname: host, AgentVersion: version})
	var se *client.StatusError
	if errors.As(err, &se) {
		return fmt.Errorf("agent: enroll: the portal refused (%d): %s", se.Code, se.Message())
	}
	if err != nil {
		return fmt.Errorf("agent: enroll: %w", err)
	}
	cred := credential{PortalURL: c.BaseURL, NodeID: resp.NodeID, Node: resp.NodeName, Credential: resp.Credential}
	old, oldErr := readCredential(*credFile)
	if err := writeCredential(*credFile, cred); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "enrolled as node %q (id %d); credential written to %s\n", cred.Node, cred.NodeID, *credFile)
	if oldErr == nil && (old.PortalURL != cred.PortalURL || old.NodeID != cred.NodeID) {
		return retireSpool(cfg.spoolDir(), old, stdout)
	}
	return nil
}

// retireSpool starts a fresh spool for a node that now reports to another
// portal or as another node: batch sequence, drop counters and set-aside
// reports of the old identity must not show as the new node's
// (spool.Retire). A running daemon keeps the old spool open until it is
// restarted, which the new credential needs anyway.
func retireSpool(dir string, old credential, stdout io.Writer) error {
	n, err := spool.Retire(dir)
	if err != nil {
		return fmt.Errorf("agent: enroll: the credential is written, but %w", err)
	}
	fmt.Fprintf(stdout, "new identity (was node %q (id %d) at %s): the spool starts afresh; %d undelivered report(s) kept in %s, not sent\n",
		old.Node, old.NodeID, old.PortalURL, n, dir+spool.RetiredSuffix)
	fmt.Fprintln(stdout, "restart the agent to use the new credential (systemctl restart gpubook-agent)")
	return nil
}

// checkPortalURL refuses a portal address without http:// or https://:
// guessing a scheme would either send the token in clear text or fail
// with a confusing TLS error.
func checkPortalURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("agent: enroll: --portal %q: give the full address with its scheme, e.g. https://%s", raw, strings.TrimPrefix(raw, "//"))
	}
	return nil
}

func writeCredential(path string, c credential) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("agent: enroll: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("agent: enroll: %w", err)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("agent: enroll: %w", err)
	}
	return nil
}

func readCredential(path string) (credential, error) {
	var c credential
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("agent: credential: %w (run gpubook-agent enroll first)", err)
	}
	if err := json.Unmarshal(data, &c); err != nil || c.Credential == "" {
		return c, fmt.Errorf("agent: credential: %s is damaged; enrol again", path)
	}
	return c, nil
}
