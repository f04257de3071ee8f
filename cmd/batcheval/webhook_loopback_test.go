package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestWebhookLoopbackSetting: whether webhook deliveries may reach this
// machine's loopback is BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK (or
// --webhook-allow-loopback) in every process that delivers them (serve,
// worker, run, resume), local mode when it is empty. A worker listens
// nowhere, so it counted as local mode: beside a team's dashboard (which
// refused http://127.0.0.1:.../ as a webhook), the worker that took the
// run's delivery posted it to its own loopback, and nothing could say no.
func TestWebhookLoopbackSetting(t *testing.T) {
	for _, cmd := range []string{"serve", "worker", "run", "resume"} {
		for _, tc := range []struct {
			name string
			env  map[string]string
			args []string
			want bool
		}{
			{name: "default: local mode", want: true},
			{name: "off from the environment", env: map[string]string{"BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK": "false"}},
			{name: "off from the flag", args: []string{"--webhook-allow-loopback=false"}},
			{name: "the flag wins over the environment", env: map[string]string{"BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK": "false"}, args: []string{"--webhook-allow-loopback", "true"}, want: true},
			{name: "not local mode", env: map[string]string{"BATCHEVAL_ADDR": "0.0.0.0:8080"}},
			{name: "not local mode, loopback asked for", env: map[string]string{"BATCHEVAL_ADDR": "0.0.0.0:8080", "BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK": "1"}, want: true},
		} {
			fs, c := newCommand(cmd, func(k string) string { return tc.env[k] }, io.Discard)
			if err := c.parse(fs, tc.args); err != nil {
				t.Errorf("%s, %s: %v", cmd, tc.name, err)
				continue
			}
			rc, err := c.runnerConfig()
			if err != nil {
				t.Errorf("%s, %s: %v", cmd, tc.name, err)
				continue
			}
			if rc.Webhooks.AllowLoopback != tc.want {
				t.Errorf("%s, %s: webhooks may reach loopback: %v, want %v", cmd, tc.name, rc.Webhooks.AllowLoopback, tc.want)
			}
		}
		fs, c := newCommand(cmd, func(k string) string { return map[string]string{"BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK": "never"}[k] }, io.Discard)
		if err := c.parse(fs, nil); err == nil || !strings.Contains(err.Error(), `BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK="never" cannot be used`) {
			t.Errorf("%s: BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK=never: %v, want it refused", cmd, err)
		}
	}
}

// TestComposeWorkerRefusesLoopback: the compose file's worker, which
// listens nowhere and so counts as local mode, says that neither its
// judges nor its webhooks reach its loopback, as the dashboard beside it
// (on 0.0.0.0) refuses both.
func TestComposeWorkerRefusesLoopback(t *testing.T) {
	data, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	env := f.Services["worker"].Environment
	for _, k := range []string{"BATCHEVAL_JUDGE_ALLOW_LOOPBACK", "BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK"} {
		if env[k] != "false" {
			t.Errorf("docker-compose.yml: the worker's %s is %q, want \"false\"", k, env[k])
		}
	}
}
