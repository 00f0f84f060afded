package mcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultText is the text the model reads for a tool result. Text is given as
// it is; what a chat model cannot read as text (an image, audio, a binary
// resource) is summarised in brackets, so that the model knows it was there
// and what it was. A result with no content but structured content gives
// that, as JSON.
func resultText(res *sdk.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %s, not shown]", cmp.Or(c.MIMEType, "unknown type"), size(len(c.Data)))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %s, not shown]", cmp.Or(c.MIMEType, "unknown type"), size(len(c.Data)))
	case *sdk.ResourceLink:
		s := "[resource link: " + c.URI
		if name := cmp.Or(c.Title, c.Name); name != "" {
			s += " (" + name + ")"
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		s += "]"
		if c.Description != "" {
			s += " " + c.Description
		}
		return s
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource: empty]"
		}
		if len(r.Blob) == 0 {
			return fmt.Sprintf("[resource: %s]\n%s", r.URI, r.Text)
		}
		if strings.HasPrefix(r.MIMEType, "text/") && utf8.Valid(r.Blob) {
			return fmt.Sprintf("[resource: %s]\n%s", r.URI, r.Blob)
		}
		return fmt.Sprintf("[resource: %s, %s, %s, not shown]", r.URI, cmp.Or(r.MIMEType, "unknown type"), size(len(r.Blob)))
	case nil:
		return ""
	default:
		return fmt.Sprintf("[%s content, not shown]", strings.TrimPrefix(fmt.Sprintf("%T", c), "*mcp."))
	}
}

// size says n bytes the way a person reads it.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
