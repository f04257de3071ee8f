package judge

// Preset is a known kind of OpenAI-compatible endpoint, offered in the
// settings form so users need not look up base URLs.
type Preset struct {
	Name    string
	BaseURL string
	// DefaultModel is a sensible first choice; empty when the name depends
	// entirely on the user's setup.
	DefaultModel string
	// KeyEnv is the environment variable that conventionally holds the key;
	// empty when the server needs none.
	KeyEnv string
	// Note is one line of advice shown next to the preset.
	Note string
}

// Presets lists the endpoints batcheval is known to work with, OpenAI first.
func Presets() []Preset {
	return []Preset{
		{
			Name:    "OpenAI",
			BaseURL: "https://api.openai.com/v1",
			// A cheap model that supports logprobs, seed and json_schema.
			DefaultModel: "gpt-4o-mini",
			KeyEnv:       "OPENAI_API_KEY",
			Note:         "Needs an API key from platform.openai.com. Reasoning models (o-series, gpt-5) reject temperature 0 and logprobs.",
		},
		{
			Name:    "Ollama",
			BaseURL: "http://localhost:11434/v1",
			// Small enough for a laptop, good enough to follow a rubric.
			DefaultModel: "llama3.1:8b",
			Note:         "No key needed. Pull the model first (ollama pull llama3.1:8b); the first request also loads it, so it can be slow.",
		},
		{
			Name:    "vLLM",
			BaseURL: "http://localhost:8000/v1",
			Note:    "No key unless the server was started with --api-key. The model name is what vLLM serves: the model path or --served-model-name.",
		},
		{
			Name:    "llama.cpp server",
			BaseURL: "http://localhost:8080/v1",
			// llama-server serves the one model it loaded and ignores the
			// name, but a name must still be sent.
			DefaultModel: "default",
			Note:         "No key unless started with --api-key. It serves the model it loaded whatever name is sent.",
		},
		{
			Name:    "OpenRouter",
			BaseURL: "https://openrouter.ai/api/v1",
			// OpenRouter names models provider/model.
			DefaultModel: "openai/gpt-4o-mini",
			KeyEnv:       "OPENROUTER_API_KEY",
			Note:         "Models are named provider/model. Not every provider honours seed or logprobs.",
		},
		{
			Name:    "Azure OpenAI",
			BaseURL: "https://YOUR-RESOURCE.openai.azure.com/openai/v1",
			KeyEnv:  "AZURE_OPENAI_API_KEY",
			Note: "Uses Azure's v1 API: replace YOUR-RESOURCE, and set the model to your deployment name; the key is sent as a Bearer token, which the v1 API accepts. " +
				"The older per-deployment URLs with ?api-version= and the api-key header are not supported.",
		},
	}
}
