package providers

// newAzure returns the azure adapter, or nil (a nil interface) until it is
// implemented.
func newAzure(c *Client) Provider { return nil }
