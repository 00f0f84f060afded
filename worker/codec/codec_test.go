package codec

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func mustCodec(t *testing.T, cur []byte, old ...[]byte) *Codec {
	t.Helper()
	c, err := New(cur, old...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTrip(t *testing.T) {
	c := mustCodec(t, key(1))
	dc := c.DataConverter()
	secret := map[string]string{"prompt": "the launch code is 0000"}
	p, err := dc.ToPayload(secret)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(p.GetData(), []byte("launch code")) || string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
		t.Fatalf("payload not sealed: %s", p)
	}
	if id := string(p.GetMetadata()[MetaKeyID]); id != c.KeyID() || len(id) != 16 {
		t.Errorf("key id = %q, want %q", id, c.KeyID())
	}
	var got map[string]string
	if err := dc.FromPayload(p, &got); err != nil || got["prompt"] != secret["prompt"] {
		t.Fatalf("round trip = %v, %v", got, err)
	}
	// The same value sealed twice differs: the nonce is fresh.
	q, _ := dc.ToPayload(secret)
	if bytes.Equal(p.GetData(), q.GetData()) {
		t.Error("two encryptions of one value are equal")
	}
}

func TestPlainPayloadsPassThrough(t *testing.T) {
	plain, _ := converter.GetDefaultDataConverter().ToPayload("from before the key")
	out, err := mustCodec(t, key(1)).Decode([]*commonpb.Payload{plain})
	if err != nil || out[0] != plain {
		t.Errorf("Decode(plain) = %v, %v", out, err)
	}
}

func TestRotation(t *testing.T) {
	before := mustCodec(t, key(1))
	sealed, _ := before.Encode([]*commonpb.Payload{{Data: []byte("old")}})
	after := mustCodec(t, key(2), key(1))
	if after.KeyID() == before.KeyID() {
		t.Fatal("two keys have one id")
	}
	out, err := after.Decode(sealed)
	if err != nil || string(out[0].GetData()) != "old" {
		t.Fatalf("the rotated codec cannot read the old key's payload: %v", err)
	}
	resealed, _ := after.Encode(out)
	if string(resealed[0].GetMetadata()[MetaKeyID]) != after.KeyID() {
		t.Error("the rotated codec encrypts with an old key")
	}
	_, err = mustCodec(t, key(3)).Decode(sealed)
	if err == nil || !strings.Contains(err.Error(), `encrypted with key "`+before.KeyID()+`", which this process does not have`) {
		t.Errorf("decode without the key: %v", err)
	}
}

func TestTamperedPayloadIsRefused(t *testing.T) {
	c := mustCodec(t, key(1))
	sealed, _ := c.Encode([]*commonpb.Payload{{Data: []byte("value")}})
	sealed[0].Data[len(sealed[0].Data)-1] ^= 1
	if _, err := c.Decode(sealed); err == nil || !strings.Contains(err.Error(), "altered") {
		t.Errorf("decode of an altered payload: %v", err)
	}
	sealed[0].Data = sealed[0].Data[:3]
	if _, err := c.Decode(sealed); err == nil || !strings.Contains(err.Error(), "shorter than a nonce") {
		t.Errorf("decode of a cut payload: %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(key(7))
	tests := []struct {
		cur, old string
		want     string // an error's text; "" for success
		nilCodec bool
	}{
		{"", "", "", true},
		{good, "", "", false},
		{good, " " + base64.StdEncoding.EncodeToString(key(8)) + ", ", "", false},
		{"not base64!", "", "TODOFLOW_PAYLOAD_KEY: not base64", false},
		{base64.StdEncoding.EncodeToString([]byte("short")), "", "want the base64 of 32 bytes, got 5 bytes", false},
		{good, "bad!", "TODOFLOW_PAYLOAD_KEYS_OLD, key 1: not base64", false},
		{"", good, "TODOFLOW_PAYLOAD_KEYS_OLD is set but TODOFLOW_PAYLOAD_KEY is not", false},
	}
	for _, tt := range tests {
		t.Setenv(EnvKey, tt.cur)
		t.Setenv(EnvOldKeys, tt.old)
		c, err := FromEnv()
		switch {
		case tt.want != "":
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FromEnv(%q, %q) = %v, want an error with %q", tt.cur, tt.old, err, tt.want)
			}
		case err != nil:
			t.Errorf("FromEnv(%q, %q) = %v", tt.cur, tt.old, err)
		case (c == nil) != tt.nilCodec:
			t.Errorf("FromEnv(%q, %q) = %v, want nil %v", tt.cur, tt.old, c, tt.nilCodec)
		}
	}
}

func TestFailureMessagesAreSealed(t *testing.T) {
	c := mustCodec(t, key(1))
	f := c.FailureConverter().ErrorToFailure(io.ErrUnexpectedEOF)
	if strings.Contains(f.GetMessage(), "unexpected EOF") || f.GetEncodedAttributes() == nil {
		t.Errorf("failure message in the clear: %q", f.GetMessage())
	}
	if err := c.FailureConverter().FailureToError(f); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("failure decoded = %v", err)
	}
}
