package mockprovider

// azureRoutes registers the paths of the Azure OpenAI (/openai/deployments/{deployment}/…?api-version=…) wire format.
func (s *Server) azureRoutes() {}
