package mockprovider

// cohereRoutes registers the paths of the Cohere v2 (/v2/chat, /v2/embed) wire format.
func (s *Server) cohereRoutes() {}
