package acp

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestGuardTurnsAPanicIntoAnError: the SDK runs handlers without
// recovering (a panic would end the process); guard answers an internal
// error instead (D89).
func TestGuardTurnsAPanicIntoAnError(t *testing.T) {
	a := &server{log: slog.New(slog.DiscardHandler)}
	err := func() (err error) {
		defer a.guard("session/prompt", &err)
		panic(errors.New("a handler's bug"))
	}()
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("got %v, want an internal error reply", err)
	}
}
