package models

import (
	"strings"
	"unicode/utf8"
)

// TextRule is the one rule for free text that people type or an IdP sends:
// every way in (forms, the JSON API, the CLI, SSO claims) checks its text
// fields with it, so that a value refused in a form is refused everywhere.
// PostgreSQL refuses NUL and invalid UTF-8 with an error of its own (a 500
// if it got that far) while SQLite stores them; control characters in a
// one-line field break page layout, CSV cells and email headers. So text is
// checked here, before any database sees it.
type TextRule struct {
	// Max is the most characters (runes, not bytes) the field holds.
	Max int
	// Multiline lets a field keep line feeds and tabs (notes, justifications);
	// a browser's CR LF becomes LF. One-line fields refuse every control character.
	Multiline bool
}

// Text limits shared by the fields that hold the same kind of thing.
var (
	NameText   = TextRule{Max: 200}                  // a person's display name
	TeamText   = TextRule{Max: 100}                  // a team's name
	GroupText  = TextRule{Max: 200}                  // an IdP group name
	LabelText  = TextRule{Max: 100}                  // a token's label, a GPU model
	ShortNote  = TextRule{Max: 200, Multiline: true} // a loan's note
	ReasonText = TextRule{Max: 500}                  // why a GPU is out of service
	// CommentText is a decider's comment on a priority request.
	CommentText = TextRule{Max: 2000, Multiline: true}
)

// Clean trims s and checks it against the rule. It returns the text to
// store and, when the text cannot be stored, the message that says why.
func (r TextRule) Clean(s string) (string, *Msg) {
	if !utf8.ValidString(s) {
		return "", &Msg{Key: "err.text_invalid"}
	}
	if r.Multiline {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	s = strings.TrimSpace(s)
	for _, c := range s {
		if isControl(c) && !(r.Multiline && (c == '\n' || c == '\t')) {
			m := M("err.text_control")
			return "", &m
		}
	}
	if r.Max > 0 && utf8.RuneCountInString(s) > r.Max {
		m := M("err.too_long", "Max", r.Max)
		return "", &m
	}
	return s, nil
}

// Check cleans *v in place against rule and records a problem under field;
// it reports whether the value is usable.
func (f FieldErrors) Check(field string, v *string, rule TextRule) bool {
	s, msg := rule.Clean(*v)
	if msg != nil {
		f.Add(field, *msg)
		return false
	}
	*v = s
	return true
}

// Squash makes any text fit a one-line rule instead of refusing it: control
// characters become spaces, runs of spaces one, invalid UTF-8 goes and the
// end is cut at a character boundary. It is for values nobody can correct
// at the point of entry, such as the display name an IdP sends.
func (r TextRule) Squash(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(c rune) rune {
		if isControl(c) {
			return ' '
		}
		return c
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r.Max > 0 && utf8.RuneCountInString(s) > r.Max {
		s = strings.TrimSpace(string([]rune(s)[:r.Max]))
	}
	return s
}

// isControl is C0, DEL and C1: characters with no business in stored text.
func isControl(c rune) bool { return c < 0x20 || (c >= 0x7f && c < 0xa0) }
