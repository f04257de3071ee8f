// Package mail sends the product's few mails (invite, password reset and
// address confirmation links) through the SMTP server the operator
// configures. Without one the product sends nothing and links are handed
// over by people, as before mail existed.
package mail

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one mail's subject and plain-text body.
type Message struct {
	Subject string
	Body    string
}

// Sender sends a message to one address.
type Sender interface {
	Send(ctx context.Context, to string, m Message) error
}

// SMTP sends mail through one SMTP server.
type SMTP struct {
	host     string
	port     int
	user     string
	password string
	from     string
	// implicitTLS: smtps:// (TLS from the first byte, port 465).
	implicitTLS bool
	// requireTLS: refuse to send unless the server offers STARTTLS.
	requireTLS bool
	timeout    time.Duration
}

// Environment variables that configure mail.
const (
	EnvURL  = "BATCHEVAL_SMTP_URL"
	EnvFrom = "BATCHEVAL_MAIL_FROM"
)

// FromEnv reads the mail settings: nil (and no error) when
// BATCHEVAL_SMTP_URL is not set.
func FromEnv(getenv func(string) string) (*SMTP, error) {
	raw := strings.TrimSpace(getenv(EnvURL))
	if raw == "" {
		return nil, nil
	}
	return Parse(raw, getenv(EnvFrom))
}

// Parse reads an SMTP address and the sender address.
//
//	smtp://USER:PASSWORD@HOST:587   STARTTLS when the server offers it (port 587 by default)
//	smtp://...?starttls=required    refuse to send without STARTTLS
//	smtps://USER:PASSWORD@HOST:465  TLS from the start (port 465 by default)
//
// The user and password are optional (a relay that needs none) and
// percent-encoded in the URL. Errors never repeat the password.
func Parse(raw, from string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not an address like smtp://user:password@mail.example.com:587 (a character in the password may need percent-encoding)", EnvURL)
	}
	s := &SMTP{host: u.Hostname(), timeout: 30 * time.Second}
	switch u.Scheme {
	case "smtp":
		s.port = 587
	case "smtps":
		s.port, s.implicitTLS = 465, true
	default:
		return nil, fmt.Errorf("%s must start with smtp:// (STARTTLS where offered) or smtps:// (TLS from the start), not %q", EnvURL, u.Scheme+"://")
	}
	if s.host == "" {
		return nil, fmt.Errorf("%s names no host: give one like smtp://mail.example.com:587", EnvURL)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%s: the port %q is not a number from 1 to 65535", EnvURL, p)
		}
		s.port = n
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
	}
	for k, vs := range u.Query() {
		switch {
		case k == "starttls" && len(vs) == 1 && (vs[0] == "required" || vs[0] == "opportunistic"):
			s.requireTLS = vs[0] == "required"
		case k == "starttls":
			return nil, fmt.Errorf("%s: starttls is required or opportunistic (the default)", EnvURL)
		default:
			return nil, fmt.Errorf("%s: the parameter %q is not known (only starttls=required)", EnvURL, k)
		}
	}
	from = strings.TrimSpace(from)
	if from == "" {
		return nil, fmt.Errorf("%s is set: set %s too, the sender's address, e.g. \"BatchEval <batcheval@example.com>\"", EnvURL, EnvFrom)
	}
	if _, err := netmail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("%s %q is not an address like \"BatchEval <batcheval@example.com>\"", EnvFrom, from)
	}
	s.from = from
	return s, nil
}

// String describes the server without its password (for logs).
func (s *SMTP) String() string {
	tls := "STARTTLS where offered"
	switch {
	case s.implicitTLS:
		tls = "TLS"
	case s.requireTLS:
		tls = "STARTTLS required"
	}
	return fmt.Sprintf("%s:%d (%s) from %s", s.host, s.port, tls, s.from)
}

// Send sends m to one address, in plain text.
func (s *SMTP) Send(ctx context.Context, to string, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("sender %q: %w", s.from, err)
	}
	if err := msg.To(to); err != nil {
		return fmt.Errorf("address %q: %w", to, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Body)
	opts := []gomail.Option{gomail.WithPort(s.port), gomail.WithTimeout(s.timeout)}
	switch {
	case s.implicitTLS:
		opts = append(opts, gomail.WithSSL())
	case s.requireTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.user), gomail.WithPassword(s.password))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return err
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail to %s through %s:%d: %w", to, s.host, s.port, redact(err, s.password))
	}
	return nil
}

// redact keeps the password out of an error a server or library made;
// the error it wraps still tells Permanent what the server answered.
func redact(err error, password string) error {
	if password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return redacted{msg: strings.ReplaceAll(err.Error(), password, "REDACTED"), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

// Permanent reports whether err is the SMTP server's permanent refusal (a
// 5xx answer: no such mailbox, relaying denied, message refused), which
// sending again would not change. Anything else (a 4xx answer, a server
// that is down, refuses connections or does not answer in time) may pass
// later and is worth another attempt.
func Permanent(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) && se.ErrorCode() != 0 {
		return se.ErrorCode() >= 500
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code >= 500
	}
	return false
}
