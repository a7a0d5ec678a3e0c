package views

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpubook/gpubook/models"
)

// AuditPart is a piece of an audit sentence: words, or a name with the
// address of what it names.
type AuditPart struct {
	Text string
	Href string
}

// AuditLine is one event as the audit page and its CSV show it.
type AuditLine struct {
	Event  models.AuditEvent
	Parts  []AuditPart
	Action string // the action's human name
}

// Sentence is the line as plain text, for the CSV.
func (l AuditLine) Sentence() string {
	var b strings.Builder
	for _, part := range l.Parts {
		b.WriteString(part.Text)
	}
	return b.String()
}

// auditMark wraps a placeholder's name so that the translated sentence
// can be cut where each name goes, whatever the language's word order.
const auditMark = "\x00"

// AuditLine translates an event into a sentence in the viewer's language,
// with names from names, links to the things named and times in the
// viewer's zone.
func (p *Page) AuditLine(e models.AuditEvent, names models.AuditNames) AuditLine {
	s := models.DescribeAudit(e)
	data := make(map[string]any, len(s.Refs)+len(s.Nums))
	for k, v := range s.Nums {
		data[k] = v
	}
	for k := range s.Refs {
		data[k] = auditMark + k + auditMark
	}
	text := p.T.Msg(models.Msg{Key: s.Key, Data: data})
	var parts []AuditPart
	for i, piece := range strings.Split(text, auditMark) {
		if piece == "" {
			continue
		}
		r, ok := s.Refs[piece]
		if i%2 == 0 || !ok {
			parts = append(parts, AuditPart{Text: piece})
			continue
		}
		parts = append(parts, p.auditRef(r, names))
	}
	if p.T.Lang == "zh-CN" {
		tightenCJK(parts)
	}
	return AuditLine{Event: e, Parts: parts, Action: p.AuditActionName(e.Action)}
}

// tightenCJK drops the space the Chinese sentences keep around a name
// where the name itself is Chinese: "Bob Builder 取消了" but "命令行为".
func tightenCJK(parts []AuditPart) {
	for i := range parts {
		text := parts[i].Text
		if text == "" {
			continue
		}
		first, _ := utf8.DecodeRuneInString(text)
		last, _ := utf8.DecodeLastRuneInString(text)
		if i > 0 && unicode.Is(unicode.Han, first) {
			parts[i-1].Text = strings.TrimRight(parts[i-1].Text, " ")
		}
		if i+1 < len(parts) && unicode.Is(unicode.Han, last) {
			parts[i+1].Text = strings.TrimLeft(parts[i+1].Text, " ")
		}
	}
}

// auditRef names one thing of a sentence and links to its page.
func (p *Page) auditRef(r models.AuditRef, names models.AuditNames) AuditPart {
	id := strconv.FormatInt(r.ID, 10)
	switch r.Kind {
	case models.RefSystem:
		return AuditPart{Text: p.Tr(r.Text)}
	case models.RefText:
		return AuditPart{Text: r.Text}
	case models.RefTime:
		if r.At.IsZero() {
			return AuditPart{Text: "?"}
		}
		return AuditPart{Text: p.DateTime(r.At)}
	}
	if r.ID == 0 {
		return AuditPart{Text: p.Tr("audit.ref.unknown")}
	}
	part := AuditPart{Text: names.Name(r)}
	switch r.Kind {
	case models.RefUser:
		part.Href = "/admin/users/" + id
	case models.RefTeam:
		part.Href = "/admin/teams/" + id
	case models.RefNode:
		part.Href = "/admin/nodes#node-" + id
	case models.RefGPU:
		part.Href = "/gpus/" + id
	case models.RefRequest:
		part.Href = "/requests/" + id
	case models.RefBooking: // its history in this log
		part.Href = "/admin/audit?" + url.Values{"target_type": {"booking"}, "target_id": {id}}.Encode()
	}
	return part
}

// AuditActionName is the human name of an action or of an area ("booking.").
func (p *Page) AuditActionName(action string) string {
	key := models.AuditActionKey(action)
	if s := p.Tr(key); s != key {
		return s
	}
	return action
}
