package judge

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// azureAPIVersion is the API version the per-deployment hint suggests:
// the generally available one the Azure preset uses.
const azureAPIVersion = "2024-10-21"

// azureDeploymentHint names the fix when a call to an Azure OpenAI
// per-deployment address (…/openai/deployments/NAME) was refused for the
// two slips its address and key allow: the ?api-version= left off (Azure
// answers 404 "Resource not found", or 400), and the key sent as a Bearer
// token (Azure answers 401 as to a wrong key: a per-deployment address
// takes an API key only in the api-key header). "" otherwise. The client
// puts it in Error.Hint, so Test connection and a run's failure say the
// same.
func azureDeploymentHint(cfg Config, e *Error) string {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil || !strings.Contains(strings.ToLower(u.Path), "/openai/deployments/") {
		return ""
	}
	switch {
	case (e.Kind == KindNotFound || e.Kind == KindBadRequest) && !u.Query().Has("api-version"):
		v := *u
		q := v.Query()
		q.Set("api-version", azureAPIVersion)
		v.RawQuery = q.Encode()
		return fmt.Sprintf("This Azure OpenAI per-deployment address has no ?api-version=, without which Azure refuses every call: set the base URL to %s (or the API version your resource uses)", RedactURL(v.String()))
	case e.Kind == KindAuth && e.Status == http.StatusUnauthorized && cfg.KeyHeader != KeyAPIKey:
		return `An Azure OpenAI per-deployment address takes its API key in the api-key header, not as a Bearer token: on the judge's page, set "Send the key as" to the api-key header`
	}
	return ""
}
