package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpubook/gpubook/views/i18n"
)

// newClientFlags is newFlags for a client command: it talks to a portal,
// never opens a database, so its --help lists no server flag
// (--database-url) that would do nothing.
func newClientFlags(name, usage, about string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flags{FlagSet: fs, usage: usage, about: about}
}

// cliFields are the API's field names in the client's words: a refusal
// names the flag to change, not the JSON it was sent as.
var cliFields = map[string]string{
	"gpu_ids": "--gpus", "gpus": "--gpus", "hours": "--for", "starts_at": "--at", "after": "--at",
	"ends_at": "--for/--until", "note": "--note", "model": "--model", "node": "--node",
	"purpose": "--purpose", "urgency": "--urgency", "plan": "--plan", "give_back": "--give-back",
	"preempt": "--preempt", "profile": "--mig",
}

// cliField is the flag an API field is set by, or the field itself.
func cliField(k string) string {
	if f, ok := cliFields[k]; ok {
		return f
	}
	return k
}

// jsonError prints a command's error as JSON on stdout when --json was
// given, so that a script reading stdout reads every outcome as JSON; the
// error still ends the command with a failure.
func (c *cli) jsonError(on bool, err error) error {
	if !on || err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	out := map[string]any{"code": "client", "message": err.Error()}
	var e *apiError
	if errors.As(err, &e) {
		fields := map[string]string{}
		for k, v := range e.Fields {
			fields[cliField(k)] = v
		}
		out = map[string]any{"code": e.Code, "status": e.Status, "message": e.Message, "fields": fields, "conflicts": nonNil(e.Conflicts), "text": err.Error()}
	}
	if perr := printJSON(c.stdout, map[string]any{"error": out}); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// matchModel finds the GPU model that --model names: its name in any
// case, or a part of one ("l40s" is "NVIDIA L40S"); it says on stderr
// what it matched, and refuses a part of several names or of none,
// listing them.
func (c *cli) matchModel(ctx context.Context, api *apiClient, model string) (string, error) {
	if model == "" {
		return "", nil
	}
	gpus, err := api.gpus(ctx)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	var all, hits []string
	for _, g := range gpus {
		if seen[g.Model] {
			continue
		}
		seen[g.Model] = true
		all = append(all, show(g.Model))
		if strings.EqualFold(g.Model, model) {
			return g.Model, nil
		}
		if strings.Contains(strings.ToLower(g.Model), strings.ToLower(model)) {
			hits = append(hits, g.Model)
		}
	}
	sort.Strings(all)
	sort.Strings(hits)
	switch len(hits) {
	case 1:
		fmt.Fprintf(c.stderr, "--model %s: %s\n", show(model), show(hits[0]))
		return hits[0], nil
	case 0:
		return "", fmt.Errorf("--model %s matches no GPU model; the portal has %s", show(model), strings.Join(all, ", "))
	}
	return "", fmt.Errorf("--model %s matches %s; give more of the name", show(model), strings.Join(showAll(hits), ", "))
}

// assumedNode says, in a refusal, which node book or request took from
// this machine's gpubook-agent config when no --node was given, and how to
// book elsewhere.
func assumedNode(err error, node string) error {
	if err == nil || node == "" || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w (on node %s, this machine's, from its gpubook-agent config; --any-node books on any node)", err, show(node))
}

// fieldWords is a refused field in the client's words: the flag that
// sets it, or the policy rule in words (max_gpus.peak is "GPUs held at
// once (peak hours)").
func fieldWords(tr *i18n.Translator, k string) string {
	if _, ok := cliFields[k]; ok || tr == nil {
		return cliField(k)
	}
	rule, period, _ := strings.Cut(k, ".")
	if w := ruleWords(tr, rule, period); w != show(rule) {
		return w
	}
	return k
}

// limitWords names a rule as the portal's pages do ("Length of one
// booking (peak hours)"), not by its key (max_length.peak).
func (c *cli) limitWords(rule, period string) string { return ruleWords(c.tr, rule, period) }

func ruleWords(tr *i18n.Translator, rule, period string) string {
	words := wordsOr(tr, "policy.rule."+rule, show(rule))
	if period != "" {
		words += " (" + wordsOr(tr, "policy.period."+period, show(period)) + ")"
	}
	return words
}

// wordsOr is key's message, or fallback where no catalog has the key (a
// rule a newer portal knows). Keys are built from the portal's names, so
// they are passed as variables (the catalog test checks literal keys).
func wordsOr(tr *i18n.Translator, key, fallback string, data ...any) string {
	if w := tr.T(key, data...); w != key {
		return w
	}
	return fallback
}

// limitSource says where a rule is set, in words ("team vision").
func (c *cli) limitSource(scope, name string) string {
	return wordsOr(c.tr, "policy.source."+scope, show(strings.TrimSpace(scope+" "+name)), "Name", show(name))
}
