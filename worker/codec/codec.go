// Package codec encrypts todoflow's payloads: prompts, messages, todo items,
// tool arguments and results never reach the Temporal server in the clear
// when TODOFLOW_PAYLOAD_KEY is set on the worker and on the starter.
//
// Each payload is sealed with AES-256-GCM under a fresh random nonce. The
// sealed payload names its key by an id derived from the key (the first 8
// bytes of its SHA-256, in hex), not by the key, so that keys can rotate:
// the current key (TODOFLOW_PAYLOAD_KEY) encrypts, and it and any older keys
// (TODOFLOW_PAYLOAD_KEYS_OLD, comma-separated) decrypt. Payloads without the
// encryption marker pass through, so a worker with a key still reads the
// histories of runs started before it had one.
//
// What stays readable on the server, by design: search attributes (the
// server indexes them; the workflows blank the TodoCurrent item when the
// worker encrypts, see workflows.Options), workflow and activity type names,
// ids, timer and activity summaries (user metadata, which the data
// converter also encrypts) and failure types. Failure messages and stack
// traces are encrypted too (see FailureConverter).
//
// The Web UI decrypts through a codec server (Handler, `worker
// --codec-addr`), which runs beside the worker and holds the keys: whoever
// can call it can read every history, so it asks for a bearer token
// (TODOFLOW_CODEC_TOKEN), answers only the Host names it is served by (no
// DNS rebinding) and the browser origins it is given, and bounds what one
// request may send.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// Environment variables that hold the keys (base64 of 32 bytes each).
const (
	EnvKey     = "TODOFLOW_PAYLOAD_KEY"
	EnvOldKeys = "TODOFLOW_PAYLOAD_KEYS_OLD"
)

// Metadata of an encrypted payload.
const (
	// Encoding marks a payload this codec sealed.
	Encoding = "binary/encrypted"
	// MetaKeyID names the key that sealed it.
	MetaKeyID = "encryption-key-id"
	// MetaCipher names the cipher, for whoever reads a history without us.
	MetaCipher = "encryption-cipher"
	cipherName = "AES-256-GCM"
)

// Codec is a converter.PayloadCodec that seals payloads with AES-256-GCM.
type Codec struct {
	current string                 // id of the key that encrypts
	keys    map[string]cipher.AEAD // every key that decrypts, by id
}

// New returns a codec that encrypts with current and decrypts with current
// and old. Each key is 32 bytes.
func New(current []byte, old ...[]byte) (*Codec, error) {
	c := &Codec{keys: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{current}, old...) {
		id, aead, err := newKey(k)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("payload key: %w", err)
			}
			return nil, fmt.Errorf("old payload key %d: %w", i, err)
		}
		if i == 0 {
			c.current = id
		}
		c.keys[id] = aead
	}
	return c, nil
}

func newKey(k []byte) (string, cipher.AEAD, error) {
	if len(k) != 32 {
		return "", nil, fmt.Errorf("want 32 bytes (AES-256), got %d", len(k))
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return "", nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(k)
	return hex.EncodeToString(sum[:8]), aead, nil
}

// FromEnv returns the codec of the environment's keys, or nil when
// TODOFLOW_PAYLOAD_KEY is not set. A key that is set but malformed is an
// error: running without encryption by mistake would leak what the user
// meant to protect.
func FromEnv() (*Codec, error) {
	cur := strings.TrimSpace(os.Getenv(EnvKey))
	if cur == "" {
		if os.Getenv(EnvOldKeys) != "" {
			return nil, fmt.Errorf("%s is set but %s is not: set the current key too", EnvOldKeys, EnvKey)
		}
		return nil, nil
	}
	key, err := decodeKey(cur)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvKey, err)
	}
	var old [][]byte
	for i, s := range strings.Split(os.Getenv(EnvOldKeys), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		k, err := decodeKey(s)
		if err != nil {
			return nil, fmt.Errorf("%s, key %d: %w", EnvOldKeys, i+1, err)
		}
		old = append(old, k)
	}
	return New(key, old...)
}

func decodeKey(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64 (make one with: head -c 32 /dev/urandom | base64): %w", err)
	}
	if len(k) != 32 {
		return nil, fmt.Errorf("want the base64 of 32 bytes, got %d bytes (make one with: head -c 32 /dev/urandom | base64)", len(k))
	}
	return k, nil
}

// KeyID is the id of the key that encrypts.
func (c *Codec) KeyID() string { return c.current }

// Encode seals each payload: its whole protobuf encoding (metadata and data)
// becomes the data of a new payload, so that not even the original
// encoding shows.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.keys[c.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encrypt payload: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetaKeyID:                  []byte(c.current),
				MetaCipher:                 []byte(cipherName),
			},
			Data: aead.Seal(nonce, nonce, plain, []byte(c.current)),
		}
	}
	return out, nil
}

// Decode opens the payloads this codec (or one with an older key) sealed,
// and passes the others through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetaKeyID])
		aead, ok := c.keys[id]
		if !ok {
			return nil, fmt.Errorf("decrypt payload: it was encrypted with key %q, which this process does not have (set %s, or list the older key in %s)", id, EnvKey, EnvOldKeys)
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return nil, errors.New("decrypt payload: the data is shorter than a nonce")
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decrypt payload with key %q: %w (the payload was altered, or the key is wrong)", id, err)
		}
		var orig commonpb.Payload
		if err := orig.Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("decrypt payload: %w", err)
		}
		out[i] = &orig
	}
	return out, nil
}

// DataConverter is the SDK's default converter with payloads sealed by c.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter encrypts failure messages and stack traces as well
// (they may quote a prompt or a file), keeping the failure types readable.
func (c *Codec) FailureConverter() converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter:          c.DataConverter(),
		EncodeCommonAttributes: true,
	})
}
