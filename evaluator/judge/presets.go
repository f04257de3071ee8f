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
	// KeyHeader is how the endpoint takes the key; "" is KeyBearer.
	KeyHeader KeyHeader
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
			Note: "Azure's v1 API: replace YOUR-RESOURCE, and set the model to your deployment name; the key is sent as a Bearer token, which the v1 API accepts. " +
				"For the older per-deployment address (…/openai/deployments/NAME?api-version=…) start from \"Azure OpenAI (per deployment)\" instead.",
		},
		{
			Name: "Azure OpenAI (per deployment)",
			// api-version 2024-10-21 is the generally available version of
			// the classic data-plane API at the time of writing.
			BaseURL:   "https://YOUR-RESOURCE.openai.azure.com/openai/deployments/YOUR-DEPLOYMENT?api-version=2024-10-21",
			KeyEnv:    "AZURE_OPENAI_API_KEY",
			KeyHeader: KeyAPIKey,
			Note: "Azure's classic per-deployment address: replace YOUR-RESOURCE and YOUR-DEPLOYMENT, and keep ?api-version= (it is sent with every call; /chat/completions is added before it, so leave that off). " +
				"The key is sent in the api-key header. Azure answers with the deployment's model whatever name is sent, so the model can be the deployment name.",
		},
	}
}
