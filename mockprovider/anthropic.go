package mockprovider

// anthropicRoutes registers the paths of the Anthropic Messages API (/v1/messages) wire format.
func (s *Server) anthropicRoutes() {}
