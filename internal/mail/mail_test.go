package mail_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/internal/mail/mailtest"
)

// TestParse: a setting that cannot be used is refused naming the variable
// and what to write, never repeating the password.
func TestParse(t *testing.T) {
	const from = "BatchEval <be@x.test>"
	for _, tc := range []struct {
		raw, from, want string // want: "" for accepted, else part of the error
		desc            string
	}{
		{"smtp://u:s3cret@mail.x.test", from, "", "mail.x.test:587 (STARTTLS where offered) from " + from},
		{"smtps://u:s3cret@mail.x.test", from, "", "mail.x.test:465 (TLS)"},
		{"smtp://mail.x.test:2525?starttls=required", from, "", "mail.x.test:2525 (STARTTLS required)"},
		{"http://mail.x.test", from, "must start with smtp://", ""},
		{"smtp://:587", from, "names no host", ""},
		{"smtp://mail.x.test:99999", from, `the port "99999"`, ""},
		{"smtp://mail.x.test?tls=on", from, `the parameter "tls" is not known`, ""},
		{"smtp://mail.x.test?starttls=maybe", from, "starttls is required or opportunistic", ""},
		{"smtp://u:s3cret@mail.x.test", "", "set BATCHEVAL_MAIL_FROM too", ""},
		{"smtp://u:s3cret@mail.x.test", "not an address", "BATCHEVAL_MAIL_FROM \"not an address\"", ""},
		{"smtp://u:s3%zzcret@mail.x.test", from, "percent-encoding", ""},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			s, err := mail.Parse(tc.raw, tc.from)
			if tc.want == "" {
				if err != nil || s.String() != tc.desc && !strings.HasPrefix(s.String(), tc.desc) {
					t.Fatalf("Parse = %v, %v; want %q", s, err, tc.desc)
				}
				if strings.Contains(s.String(), "s3cret") {
					t.Fatalf("String shows the password: %s", s)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("Parse error = %v, want %q (and no password)", err, tc.want)
			}
		})
	}
	if s, err := mail.FromEnv(func(string) string { return "" }); s != nil || err != nil {
		t.Fatalf("no setting: %v %v", s, err)
	}
}

// TestSend: a message reaches a local SMTP server with its sender,
// recipient, subject and body, and a name typed with a line break stays on
// one line of the body.
func TestSend(t *testing.T) {
	smtpd := mailtest.Start(t)
	s, err := mail.Parse(smtpd.URL(), "BatchEval <be@x.test>")
	if err != nil {
		t.Fatal(err)
	}
	m := mail.Reset("Ada\nOpen https://evil.test/x", "http://be.x.test/reset/TOKEN")
	if err := s.Send(context.Background(), "ada@x.test", m); err != nil {
		t.Fatal(err)
	}
	got := smtpd.Wait(t, 1)[0]
	if got.From != "be@x.test" || len(got.To) != 1 || got.To[0] != "ada@x.test" || got.Subject != m.Subject ||
		got.Link("/reset/") != "http://be.x.test/reset/TOKEN" || !strings.Contains(got.Body, "Hello Ada Open https://evil.test/x,") {
		t.Fatalf("received %+v\nRAW:\n%s", got, got.Raw)
	}
}

// TestPermanent: only an SMTP server's 5xx answer is permanent; a 4xx
// answer, a refused connection or a timeout is worth another attempt.
func TestPermanent(t *testing.T) {
	smtpd := mailtest.Start(t)
	good, err := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down, _ := mail.Parse("smtp://"+ln.Addr().String(), "BatchEval <batcheval@company.test>")
	ln.Close()
	cases := []struct {
		name      string
		refuse    string
		s         *mail.SMTP
		permanent bool
	}{
		{name: "4xx", refuse: "451 4.7.1 greylisted", s: good},
		{name: "5xx", refuse: "550 5.1.1 no such mailbox", s: good, permanent: true},
		{name: "connection refused", s: down},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.refuse != "" {
				smtpd.Refuse(tc.refuse)
			}
			err := tc.s.Send(t.Context(), "cleo@company.test", mail.Message{Subject: "s", Body: "b"})
			if err == nil {
				t.Fatal("sent")
			}
			if got := mail.Permanent(err); got != tc.permanent {
				t.Fatalf("Permanent(%v) = %v, want %v", err, got, tc.permanent)
			}
		})
	}
}
