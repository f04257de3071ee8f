// Package mailtest is an SMTP server for tests: it listens on 127.0.0.1,
// answers the SMTP dialogue (no TLS, no authentication) and keeps every
// message it is given, decoded, for the test to read.
package mailtest

import (
	"bufio"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"encoding/base64"
)

// Message is one mail the server was given.
type Message struct {
	From    string
	To      []string
	Subject string
	// Body is the decoded text body.
	Body string
	// Raw is the message as sent (headers and encoded body).
	Raw string
}

// Server is a fake SMTP server.
type Server struct {
	ln   net.Listener
	mu   sync.Mutex
	msgs []Message
	got  chan struct{}
	wg   sync.WaitGroup
	// refusals are the answers given, in turn, to the next messages'
	// RCPT TO instead of accepting them (Refuse).
	refusals []string
	// delay is how long the server waits before its greeting (Slow).
	delay time.Duration
	// tries counts the messages a client tried to send (RCPT TO).
	tries int
	// drops is how many of the next messages are kept but answered by
	// closing the connection (DropAfterData).
	drops int
	// hold, while not nil, keeps each new connection waiting before its
	// greeting until it is closed (Hold); heldNow is told of each.
	hold    chan struct{}
	heldNow chan struct{}
	// every is the answer to every RCPT TO once refusals are used up
	// ("": accept), until RefuseEvery("") (RefuseEvery).
	every string
}

// DropAfterData makes the server take the next n messages (they are kept,
// as delivered) and then close the connection instead of answering "250",
// as when the server's reply is lost: the client cannot know the message
// was delivered.
func (s *Server) DropAfterData(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops += n
}

// dropNow reports whether this message's reply is to be dropped.
func (s *Server) dropNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drops == 0 {
		return false
	}
	s.drops--
	return true
}

// Refuse makes the server answer the next messages' RCPT TO with these
// replies, one per message, in turn ("451 4.3.0 try again later" is
// temporary, "550 5.1.1 no such mailbox" permanent); later messages are
// accepted again.
func (s *Server) Refuse(replies ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals = append(s.refusals, replies...)
}

// RefuseEvery makes the server answer every message's RCPT TO with reply
// (after the replies queued by Refuse) until RefuseEvery("") makes it
// accept again: a server that says "try again later" however often it is
// asked, for as long as the test needs.
func (s *Server) RefuseEvery(reply string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.every = reply
}

// Slow makes the server wait d before greeting each connection.
func (s *Server) Slow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Hold makes the server keep each new connection waiting before its
// greeting, as a server slow to answer does, until release is called:
// a test acts while a client's attempt is under way. held is told of
// each connection held, as it arrives.
func (s *Server) Hold() (held <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hold, arrived := make(chan struct{}), make(chan struct{}, 64)
	s.hold, s.heldNow = hold, arrived
	var once sync.Once
	return arrived, func() {
		once.Do(func() {
			s.mu.Lock()
			s.hold = nil
			s.mu.Unlock()
			close(hold)
		})
	}
}

// Tries is how many messages a client tried to send (refused ones too).
func (s *Server) Tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries
}

// nextRefusal is the answer to this RCPT TO: a refusal, or "" to accept.
func (s *Server) nextRefusal() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	if len(s.refusals) == 0 {
		return s.every
	}
	r := s.refusals[0]
	s.refusals = s.refusals[1:]
	return r
}

// Start starts a server on 127.0.0.1; the test's cleanup stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln, got: make(chan struct{}, 100)}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// URL is the address to give BATCHEVAL_SMTP_URL.
func (s *Server) URL() string { return "smtp://" + s.ln.Addr().String() }

// Messages returns the messages received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait waits up to 10 seconds until n messages have arrived and returns
// them; the test fails when they do not.
func (s *Server) Wait(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if ms := s.Messages(); len(ms) >= n {
			return ms
		}
		select {
		case <-s.got:
		case <-deadline:
			t.Fatalf("the SMTP server received %d messages, want %d", len(s.Messages()), n)
		}
	}
}

var linkRE = regexp.MustCompile(`https?://[^\s<>"]+`)

// Link is the first link in the message's body whose path contains
// part ("/invites/", "/reset/"), or "" when there is none.
func (m Message) Link(part string) string {
	for _, l := range linkRE.FindAllString(m.Body, -1) {
		if strings.Contains(l, part) {
			return l
		}
	}
	return ""
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.session(conn)
		}()
	}
}

// session answers one connection's SMTP dialogue (RFC 5321, the commands
// a client sends to deliver a message).
func (s *Server) session(conn net.Conn) {
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	w := bufio.NewWriter(conn)
	reply := func(lines ...string) {
		for _, l := range lines {
			w.WriteString(l + "\r\n")
		}
		w.Flush()
	}
	s.mu.Lock()
	delay, hold := s.delay, s.hold
	if hold != nil {
		select {
		case s.heldNow <- struct{}{}:
		default: // nobody reads it; the wait goes on all the same
		}
	}
	s.mu.Unlock()
	time.Sleep(delay)
	if hold != nil {
		<-hold
	}
	reply("220 127.0.0.1 mailtest ready")
	var from string
	var to []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch verb {
		case "EHLO":
			reply("250-127.0.0.1 hello", "250-8BITMIME", "250-SMTPUTF8", "250 SIZE 10485760")
		case "HELO":
			reply("250 127.0.0.1 hello")
		case "MAIL":
			from, to = pathOf(line), nil
			reply("250 2.1.0 ok")
		case "RCPT":
			if no := s.nextRefusal(); no != "" {
				reply(no)
				continue
			}
			to = append(to, pathOf(line))
			reply("250 2.1.5 ok")
		case "DATA":
			reply("354 end with <CRLF>.<CRLF>")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				b.WriteString(strings.TrimPrefix(l, ".")) // dot-stuffing
			}
			s.keep(from, to, b.String())
			if s.dropNow() {
				return // the connection closes without an answer
			}
			reply("250 2.0.0 queued")
		case "RSET":
			from, to = "", nil
			reply("250 2.0.0 ok")
		case "NOOP":
			reply("250 2.0.0 ok")
		case "QUIT":
			reply("221 2.0.0 bye")
			return
		default:
			reply("502 5.5.2 command not implemented")
		}
	}
}

// pathOf is the address in "MAIL FROM:<a@b> ..." or "RCPT TO:<a@b>".
func pathOf(line string) string {
	i, j := strings.Index(line, "<"), strings.Index(line, ">")
	if i < 0 || j < i {
		return ""
	}
	return line[i+1 : j]
}

func (s *Server) keep(from string, to []string, raw string) {
	m := Message{From: from, To: to, Raw: raw}
	if pm, err := netmail.ReadMessage(strings.NewReader(raw)); err == nil {
		dec := new(mime.WordDecoder)
		if subj, err := dec.DecodeHeader(pm.Header.Get("Subject")); err == nil {
			m.Subject = subj
		}
		var body io.Reader = pm.Body
		switch strings.ToLower(pm.Header.Get("Content-Transfer-Encoding")) {
		case "quoted-printable":
			body = quotedprintable.NewReader(body)
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, newlineDropper{body})
		}
		b, _ := io.ReadAll(body)
		m.Body = strings.ReplaceAll(string(b), "\r\n", "\n")
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
}

// newlineDropper drops line ends from base64 text.
type newlineDropper struct{ r io.Reader }

func (n newlineDropper) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	j := 0
	for _, c := range p[:k] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
