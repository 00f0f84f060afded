package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResultText(t *testing.T) {
	size := int64(10)
	tests := []struct {
		name string
		res  *sdk.CallToolResult
		want string
	}{
		{"text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, "a\nb"},
		{"image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 3<<20)}}},
			"[image: image/png, 3.0 MiB, not shown]"},
		{"audio without a type", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: make([]byte, 100)}}},
			"[audio: unknown type, 100 bytes, not shown]"},
		{"resource link", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///r.txt", Name: "r", Title: "Report", MIMEType: "text/plain", Size: &size, Description: "The report."}}},
			"[resource link: file:///r.txt (Report), text/plain] The report."},
		{"text resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.md", Text: "# A"}}}},
			"[resource: file:///a.md]\n# A"},
		{"text blob", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.csv", MIMEType: "text/csv", Blob: []byte("x,y")}}}},
			"[resource: file:///a.csv]\nx,y"},
		{"binary blob", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", MIMEType: "application/octet-stream", Blob: make([]byte, 2048)}}}},
			"[resource: file:///a.bin, application/octet-stream, 2.0 KiB, not shown]"},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"total": 3}}, `{"total":3}`},
		{"nothing", &sdk.CallToolResult{}, ""},
	}
	for _, tt := range tests {
		if got := resultText(tt.res); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
