package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
)

// FuzzResult converts any tools/call result a server could send (as JSON,
// the way it arrives) into what the model reads. `go test ./activities/mcp`
// replays the seeds; to search for new inputs:
//
//	go test ./activities/mcp -run '^$' -fuzz '^FuzzResult$' -fuzztime 60s -parallel 2
//
// What the model reads is valid UTF-8; an error result is a clear message,
// never empty; and content the model cannot read (images, audio, binary
// resources) is a short note whatever its size, never its bytes.
func FuzzResult(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"3 orders"}]}`,
		`{"content":[{"type":"text","text":"order B2 does not exist"}],"isError":true}`,
		`{"content":[],"isError":true}`,
		`{"content":[{"type":"text","text":"   "}],"isError":true}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="}]}`,
		`{"content":[{"type":"audio","data":"AAAA"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a.csv","mimeType":"text/csv","blob":"eCx5"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","blob":"/w=="}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a.md","text":"# A"}}]}`,
		`{"content":[{"type":"resource_link","uri":"file:///r","name":"r","title":"Report","description":"The report."}]}`,
		`{"content":[],"structuredContent":{"total":3,"items":["<a>"]}}`,
		`{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00"}]}`,
		`{"content":[{"type":"video","data":"AAAA"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res sdk.CallToolResult
		if err := json.Unmarshal(data, &res); err != nil {
			return // the SDK refuses it before it reaches us
		}
		text, err := result(&res)
		if err != nil {
			if text != "" {
				t.Fatalf("an error result also gave text %q", text)
			}
			fuzzcheck.Message(t, "error result", err.Error())
			if !res.IsError {
				t.Fatalf("a result without isError failed: %v", err)
			}
		} else if !utf8.ValidString(text) {
			t.Fatalf("the model would read invalid UTF-8: %q", text)
		}
		for _, c := range res.Content {
			note := contentText(c)
			// other is c with other bytes of the same length, which no
			// reader takes for text (0xFF and 0xFE are never UTF-8): the
			// note must not change, so that none of the bytes, however
			// few, reach the model.
			var bound int
			var other sdk.Content
			switch c := c.(type) {
			case *sdk.ImageContent:
				bound = len(c.MIMEType)
				o := *c
				o.Data = otherBytes(c.Data)
				other = &o
			case *sdk.AudioContent:
				bound = len(c.MIMEType)
				o := *c
				o.Data = otherBytes(c.Data)
				other = &o
			case *sdk.EmbeddedResource:
				if c.Resource == nil || len(c.Resource.Blob) == 0 || strings.HasPrefix(c.Resource.MIMEType, "text/") && utf8.Valid(c.Resource.Blob) {
					continue
				}
				bound = len(c.Resource.URI) + len(c.Resource.MIMEType)
				o, r := *c, *c.Resource
				r.Blob = otherBytes(r.Blob)
				o.Resource = &r
				other = &o
			default:
				continue
			}
			if len(note) > bound+64 {
				t.Fatalf("binary content became %d bytes for the model: %q", len(note), note)
			}
			if again := contentText(other); again != note {
				t.Fatalf("binary content reaches the model: with other bytes its note %q became %q", note, again)
			}
		}
	})
}

// otherBytes is as long as b, differs from it in its first byte, and is
// never valid UTF-8.
func otherBytes(b []byte) []byte {
	fill := byte(0xFF)
	if len(b) > 0 && b[0] == 0xFF {
		fill = 0xFE
	}
	return bytes.Repeat([]byte{fill}, len(b))
}
