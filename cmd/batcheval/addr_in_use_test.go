package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A second `make run` (or any program already on the port) makes serve
// fail with what happened and how to start on the next port, by flag and
// by make, instead of a bare "bind: address already in use".
func TestServeOnABusyAddressSaysHowToChooseAnother(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	next := net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1))

	env := map[string]string{"BATCHEVAL_DB": filepath.Join(t.TempDir(), "app.db"), "BATCHEVAL_SEED_DEMO": "false"}
	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"serve", "--addr", addr}, func(k string) string { return env[k] }, &out, &errOut)
	if err == nil {
		t.Fatal("serve on a busy address succeeded")
	}
	for _, want := range []string{"already uses this address", "--addr " + next, "BATCHEVAL_ADDR=" + next + " make run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	// A serve that failed has stopped its workers: they went on taking
	// runs and watching the SQLite wake file (which they make again when
	// it is removed, so the test's temp dir could not be removed).
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, f := range []string{"(*Runner).wakeFileLoop", "(*Runner).sweepLoop"} {
		if strings.Contains(stacks, f) {
			t.Errorf("%s still runs after serve failed to start", f)
		}
	}
}

// Other listen errors keep their own message, with no advice about ports.
func TestListenErrorOtherThanBusy(t *testing.T) {
	err := listenError("256.0.0.1:8080", &net.AddrError{Err: "no such host", Addr: "256.0.0.1"})
	if strings.Contains(err.Error(), "make run") || !strings.Contains(err.Error(), "no such host") {
		t.Errorf("listenError = %v", err)
	}
}
