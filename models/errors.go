package models

import (
	"errors"
	"fmt"
)

// Error codes shared by every layer; handlers turn them into HTTP statuses.
const (
	ENotFound     = "not_found"
	EInvalid      = "invalid"
	EConflict     = "conflict"
	EUnauthorized = "unauthorized"
	EInternal     = "internal"
	// EChanged: a conditional write found the object changed since the
	// writer read it (another request saved it first); nothing was written.
	EChanged = "changed"
)

// Error is the product's one error type: a code for machines and a message
// written for the person who has to act on it.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap exposes the cause for errors.Is / errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EInternal for foreign errors, "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the human message of err; foreign errors get a
// generic message so internals are not shown to users.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return "Something went wrong on our side. The details are in the server log."
}
