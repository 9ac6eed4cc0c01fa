package providers

import (
	"encoding/base64"
	"encoding/binary"
	"math"

	"github.com/sluicehq/sluice/internal/secret"
)

// The answer pieces every translating codec needs, written once.

// ReportedError is the *Error of an error the upstream reported inside a
// 2xx answer or a stream event: status, and the upstream's message
// scrubbed of key, or a generic message when it said nothing usable.
func ReportedError(status int, msg string, key secret.Value) *Error {
	msg = Scrub(msg, key)
	if msg == "" {
		msg = "the upstream reported an error"
	}
	return &Error{Status: status, Message: msg}
}

// embeddingItem is one vector of an OpenAI embeddings list.
type embeddingItem struct {
	Object string `json:"object"`
	Index  int    `json:"index"`
	// Embedding is the vector: a JSON array (json.RawMessage or
	// []float64), or a base64 string (base64Floats).
	Embedding any `json:"embedding"`
}

// EmbeddingsAnswer is the OpenAI embeddings list of vectors for model,
// with promptTokens as its usage (prompt and total).
func EmbeddingsAnswer(model string, vectors []any, promptTokens int64) ([]byte, error) {
	out := struct {
		Object string          `json:"object"`
		Data   []embeddingItem `json:"data"`
		Model  string          `json:"model"`
		Usage  struct {
			PromptTokens int64 `json:"prompt_tokens"`
			TotalTokens  int64 `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Data: make([]embeddingItem, len(vectors)), Model: model}
	for i, v := range vectors {
		out.Data[i] = embeddingItem{Object: "embedding", Index: i, Embedding: v}
	}
	out.Usage.PromptTokens, out.Usage.TotalTokens = promptTokens, promptTokens
	return MarshalJSON(out)
}

// Base64Floats is OpenAI's encoding_format "base64": little-endian
// float32s, which the OpenAI SDKs ask for by default.
func Base64Floats(values []float64) string {
	raw := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
	}
	return base64.StdEncoding.EncodeToString(raw)
}
