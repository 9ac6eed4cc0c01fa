package providers

// newBedrock returns the bedrock adapter, or nil (a nil interface) until it is
// implemented.
func newBedrock(c *Client) Provider { return nil }
