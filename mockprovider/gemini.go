package mockprovider

// geminiRoutes registers the paths of the Gemini API (/v1beta/models/{model}:generateContent, :streamGenerateContent, :embedContent, :batchEmbedContents) wire format.
func (s *Server) geminiRoutes() {}
