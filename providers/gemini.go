package providers

// newGemini returns the gemini adapter, or nil (a nil interface) until it is
// implemented.
func newGemini(c *Client) Provider { return nil }
