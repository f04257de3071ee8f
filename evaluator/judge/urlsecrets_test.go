package judge

import "testing"

func TestCredentialParam(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "key": true, "token": true, "access_token": true, "api-key": true, "sig": true,
		"apiKey": true, "subscription-key": true, "x-goog-api-key": true, "client_secret": true, "code": true,
		"Signature": true, "X-Amz-Signature": true, "password": true,
		"api-version": false, "format": false, "model": false, "deployment": false, "sv": false,
	} {
		if got := CredentialParam(name); got != want {
			t.Errorf("CredentialParam(%q) = %v, want %v", name, got, want)
		}
	}
}
