package providers

// newAnthropic returns the anthropic adapter, or nil (a nil interface) until it is
// implemented.
func newAnthropic(c *Client) Provider { return nil }
