package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	v1 "github.com/gpubook/gpubook/models/api"
)

// clientConfigPath is $XDG_CONFIG_HOME/gpubook/config, else
// ~/.config/gpubook/config.
func clientConfigPath(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set: cannot find the client configuration")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "gpubook", "config"), nil
}

// readClientConfig reads "key = value" lines (portal, token); a missing
// file is an empty configuration.
func readClientConfig(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client config: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out, sc.Err()
}

// writeClientConfig writes the file with mode 0600 (it holds a token),
// also when it existed with a wider mode before. It writes through a file
// it created itself (a new name, O_EXCL) and renames that over the old
// one: a fixed name such as config.tmp, planted as a symlink by someone
// who can write in the directory, would send the token where it points.
func writeClientConfig(path, portal, token string, allowHTTP bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("client config: %w", err)
	}
	body := fmt.Sprintf("# written by gpubook login\nportal = %s\ntoken = %s\n", portal, token)
	if allowHTTP {
		body += "allow_http = true\n"
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("client config: %w", err)
	}
	_, err = f.WriteString(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("client config: %w", err)
	}
	return nil
}

// apiFromEnv builds the portal client: GPUBOOK_PORTAL and GPUBOOK_TOKEN
// win over the file written by login.
func (c *cli) apiFromEnv() (*apiClient, error) {
	path, err := clientConfigPath(c.getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := readClientConfig(path)
	if err != nil {
		return nil, err
	}
	portal, token := cfg["portal"], cfg["token"]
	if v := c.getenv("GPUBOOK_PORTAL"); v != "" {
		portal = v
	}
	if v := c.getenv("GPUBOOK_TOKEN"); v != "" {
		token = v
	}
	if portal == "" || token == "" {
		return nil, errors.New("not logged in: run 'gpubook login --portal URL' (or set GPUBOOK_PORTAL and GPUBOOK_TOKEN)")
	}
	allowHTTP := cfg["allow_http"] == "true" || c.getenv("GPUBOOK_ALLOW_HTTP") == "1"
	api, err := newAPIClient(portal, token, allowHTTP)
	if api != nil {
		api.tr = c.tr
	}
	return api, err
}

// newAPIClient checks the portal's URL (see checkPortalURL) before any
// request can carry the token.
func newAPIClient(portal, token string, allowHTTP bool) (*apiClient, error) {
	u, err := checkPortalURL(portal, allowHTTP)
	if err != nil {
		return nil, err
	}
	return &apiClient{base: u.String(), token: token, http: portalHTTPClient()}, nil
}

// login stores the portal's URL and a personal token after checking them
// against the portal (GET /api/v1/me).
func (c *cli) login(ctx context.Context, args []string) error {
	f := newClientFlags("login", "gpubook login --portal URL [--token-file FILE] [--allow-http]",
		"Stores the portal's URL and your personal token (Profile → API tokens) in $XDG_CONFIG_HOME/gpubook/config\n(~/.config/gpubook/config), mode 0600, after checking them. The token is read from --token-file, from\nstandard input when it is not a terminal, or asked for without echo. GPUBOOK_PORTAL and GPUBOOK_TOKEN\noverride the file.")
	portal := f.String("portal", c.getenv("GPUBOOK_PORTAL"), "the portal's URL, e.g. https://gpubook.example.org")
	tokenFile := f.String("token-file", "", "read the token from this file")
	allowHTTP := f.Bool("allow-http", c.getenv("GPUBOOK_ALLOW_HTTP") == "1", "send the token over plain http:// to a host other than this machine (anyone on the way can read it)")
	jsonOut := f.Bool("json", false, "print the account as JSON")
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	if *portal == "" {
		return errors.New("login: --portal is required")
	}
	if _, err := checkPortalURL(*portal, *allowHTTP); err != nil { // before the token is asked for
		return fmt.Errorf("login: %w", err)
	}
	token, err := c.readToken(*tokenFile)
	if err != nil {
		return err
	}
	api, err := newAPIClient(*portal, token, *allowHTTP)
	if err != nil {
		return err
	}
	var me json.RawMessage
	if err := api.call(ctx, http.MethodGet, v1.PathMe, nil, nil, &me); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	path, err := clientConfigPath(c.getenv)
	if err != nil {
		return err
	}
	if err := writeClientConfig(path, api.base, token, *allowHTTP && !strings.HasPrefix(api.base, "https:")); err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(c.stdout, me)
	}
	var u v1.Me
	if err := json.Unmarshal(me, &u); err != nil {
		return fmt.Errorf("login: the portal's answer to /me is not what the API documents: %w", err)
	}
	fmt.Fprintf(c.stdout, "Logged in to %s as %s <%s>; saved in %s\n", api.base, show(u.Name), show(u.Email), path)
	return nil
}

// readToken reads the token from a file, a pipe, or the terminal without echo.
func (c *cli) readToken(file string) (string, error) {
	var raw []byte
	var err error
	switch f, isFile := c.stdin.(*os.File); {
	case file != "":
		raw, err = os.ReadFile(file)
	case isFile && term.IsTerminal(int(f.Fd())):
		fmt.Fprint(c.stderr, "Personal token (from Profile → API tokens): ")
		raw, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(c.stderr)
	case c.stdin != nil:
		raw, err = io.ReadAll(io.LimitReader(c.stdin, 4096))
	}
	if err != nil {
		return "", fmt.Errorf("login: read token: %w", err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", errors.New("login: no token given")
	}
	return token, nil
}

// printJSON prints v indented, with the characters a terminal would act
// on escaped (escapeJSONText): JSON lets C1 controls through raw.
func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSONText(b.Bytes()))
	return err
}
