package providers

// newCohere returns the cohere adapter, or nil (a nil interface) until it is
// implemented.
func newCohere(c *Client) Provider { return nil }
