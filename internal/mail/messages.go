package mail

import "strings"

// The product's mails, in plain text. Names and workspace names are typed
// by people: a line break in one would start a line of its own (a fake
// instruction or link), so each is kept on one line.

func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 }), " ")
}

// Invite is the mail that carries an invite link.
func Invite(workspace, role, inviter, link string) Message {
	by := ""
	if inviter = oneLine(inviter); inviter != "" {
		by = " by " + inviter
	}
	return Message{
		Subject: "You are invited to " + oneLine(workspace) + " on BatchEval",
		Body: "You are invited" + by + " to join the workspace \"" + oneLine(workspace) + "\" on BatchEval as " + role + ".\n\n" +
			"Open this link to join (it works once and expires in 7 days):\n\n" + link + "\n\n" +
			"If you did not expect this invitation, ignore this mail.\n",
	}
}

// Reset is the mail that carries a password reset link.
func Reset(name, link string) Message {
	return Message{
		Subject: "Choose a new BatchEval password",
		Body: "Hello " + oneLine(name) + ",\n\n" +
			"a password reset link was issued for your BatchEval account. Open it to choose a new password (it works once and expires in 24 hours):\n\n" +
			link + "\n\n" +
			"Setting the password signs out every session of your account; your API tokens keep working.\n" +
			"If you did not ask for this, ignore this mail: your password stays as it is.\n",
	}
}

// Confirm is the mail that carries an address confirmation link; workspace
// is the workspace it joins ("" for none).
func Confirm(email, workspace, link string) Message {
	what := "confirm that " + email + " is your address"
	if workspace != "" {
		what = "confirm that " + email + " is your address and join the workspace \"" + oneLine(workspace) + "\""
	}
	return Message{
		Subject: "Confirm your address for BatchEval",
		Body: "Open this link to " + what + " on BatchEval (it works once and expires in 48 hours):\n\n" + link + "\n\n" +
			"If you did not ask for this, ignore this mail: nothing happens unless the link is opened and you continue there.\n",
	}
}
