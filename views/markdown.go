package views

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders the project's own Markdown documents (GitHub's tables
// included). Raw HTML in them is left out, as goldmark does unless told
// otherwise: what a page shows of a document is its text.
var markdown = goldmark.New(goldmark.WithExtensions(extension.Table))

// MarkdownHTML is src as HTML, for a page that shows one of the documents
// under docs/ (they are embedded in the binary and trusted).
func MarkdownHTML(src []byte) (string, error) {
	var buf bytes.Buffer
	if err := markdown.Convert(src, &buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}
